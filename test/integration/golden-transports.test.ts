/**
 * One golden script over every transport (issue 19 item 2): the same tool calls, on the same
 * ingested records, answer the same through (a) a `--standalone` on stdio, (b) a bridge
 * (`bin/gasoline`) in front of a daemon, (c) a panel session on that daemon — the real SDK client
 * over streamable HTTP with a panel token asked for over a real /ws producer that proved the
 * pairing key — and (d) a panel session on the standalone, whose /mcp door takes panel tokens only.
 * Only what is volatile by nature (times, ids, counters of traffic, the transport's own block) is
 * normalised away. Then the daemon's log file is scanned for the panel token: it is never there.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/pairing/index.js';
import { cleanup, health, sandbox, startBridge, type Bridge, type Sandbox } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { TEST_PAIRING_KEY } from '../helpers/pairing-key.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { waitFor } from '../helpers/wait-for.js';

type Answer = { text: string; isError: boolean };

/** the script: what each transport is asked, in order */
async function script(c: Client): Promise<Record<string, unknown>> {
  const call = async (name: string, args: Record<string, unknown>): Promise<Answer> => {
    const r = await c.callTool({ name, arguments: args });
    return { text: (r.content as Array<{ text: string }>).map((x) => x.text).join('\n'), isError: r.isError === true };
  };
  const tools = await c.listTools();
  return {
    tools: tools.tools,
    summary: await call('observe', { what: 'summary' }),
    errors: await call('observe', { what: 'errors' }),
    health: await call('configure', { action: 'health' }),
    page_info: await call('analyze', { target: 'page_info' }),
  };
}

/** the records every server is given, stamped alike */
const T0 = Date.UTC(2026, 10, 25, 10, 0, 0);
function records(): Record<string, unknown> {
  return batch(0, {
    logs: [
      logRecord(1, { ts: T0, message: 'TypeError: cart is undefined', stack: 'TypeError: cart is undefined\n    at render (http://127.0.0.1:3000/app.js:1:200)' }),
      logRecord(2, { ts: T0 + 10, level: 'warn', message: 'slow render' }),
      logRecord(3, { ts: T0 + 20, message: 'TypeError: cart is undefined', stack: 'TypeError: cart is undefined\n    at render (http://127.0.0.1:3000/app.js:1:200)' }),
    ],
    network: [{ ts: T0 + 30, method: 'GET', url: 'http://127.0.0.1:3000/api/cart', status: 500, duration: 12 }],
  }, { sent_at: T0 + 40 });
}

/** Volatile by nature: times, ids, durations, counts of traffic and what the transport itself reports. */
function normalise(v: unknown): unknown {
  const text = (s: string): string =>
    s
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, 'TIME')
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, 'UUID')
      .replace(/\b\d+(\.\d+)?\s?(ms|s|min)\b/g, 'DUR')
      .replace(/\b\d+ (seconds?|minutes?) ago\b/g, 'AGO')
      // alert ids: a time stamp in base 36 and a sequence
      .replace(/\b[a-z]{3}-[0-9a-z]{8}-[0-9a-z]+\b/g, 'ALERT')
      .replace(/(?:^ *\[(?:error|warning|info)\].*\n?)+/gm, (run) => `${run.trimEnd().split('\n').sort().join('\n')}\n`);
  if (typeof v === 'string') return text(v);
  if (Array.isArray(v)) return v.map(normalise);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]));
  return v;
}

/** configure health is the server's own report: compared as its shape and its record counts, not its traffic */
function healthShape(text: string): unknown {
  const h = JSON.parse(text) as Record<string, any>;
  const kinds = Object.fromEntries(Object.entries(h.kinds as Record<string, { stored: number; received: number }>).map(([k, c]) => [k, { stored: c.stored, received: c.received }]));
  // which transport carries the session and who else is connected differs by design
  const transportOwn = new Set(['uptime_s', 'mode', 'port', 'pid', 'transports', 'mcp', 'mcp_http', 'mcp_sessions', 'clients', 'edge', 'pool', 'scan_worker', 'sessions', 'panel_tokens', 'alerts', 'pairing', 'extension', 'source_maps', 'metrics']);
  return { keys: Object.keys(h).filter((k) => !transportOwn.has(k)).sort(), kinds, redaction: h.redaction?.user_rules, approvals: h.approvals?.policy };
}

/** A producer that proved the pairing key: it can ask for panel tokens. */
async function pairedProducer(port: number): Promise<Producer> {
  const p = await Producer.connect(port);
  await p.hello('golden', { key: TEST_PAIRING_KEY });
  return p;
}

/** The records, then both their alerts out: a summary asked before an alert is published reads fewer. */
async function feed(port: number, p: Producer): Promise<void> {
  p.send(records());
  await p.ackFor(0);
  await waitFor('both alerts published', async () => (((await health(port)) as { alerts?: { published?: number } }).alerts?.published ?? 0) >= 2, 10_000);
}

async function panelSession(port: number, p: Producer): Promise<{ client: Client; token: string }> {
  p.send({ t: 'panel_token', id: 'golden-1' });
  const f = await p.next((x) => x.t === 'panel_token' && x.id === 'golden-1');
  expect(f).toMatchObject({ ok: true, path: '/mcp' });
  const token = f.token as string;
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}${f.path as string}`), { requestInit: { headers: { authorization: `Bearer ${token}`, 'x-gasoline-client': 'panel' } } });
  const client = new Client({ name: 'gasoline-panel', version: '1' });
  await client.connect(transport);
  return { client, token };
}

describe('golden: one script, every transport, the same answers', () => {
  let sbStandalone: Sandbox;
  let sbDaemon: Sandbox;
  const bridges: Bridge[] = [];
  const producers: Producer[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    sbStandalone = sandbox(await freePort());
    sbDaemon = sandbox(await freePort());
    // paired earlier, as a user's `gasoline pair` leaves it
    newSecret(sbStandalone.stateDir, TEST_PAIRING_KEY);
    newSecret(sbDaemon.stateDir, TEST_PAIRING_KEY);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const p of producers) p.close();
    for (const b of bridges) await b.client.close().catch(() => undefined);
    await cleanup(sbStandalone);
    await cleanup(sbDaemon);
  });

  it('stdio, bridge, panel on the daemon and panel on the standalone answer alike; the token is in no log', async () => {
    // every session opens before the records arrive: alerts are pending for the sessions that
    // exist when they are published
    const standalone = await startBridge(sbStandalone, ['--standalone'], { name: 'golden' });
    bridges.push(standalone);
    await waitFor('the standalone listens', () => health(sbStandalone.port), 20_000);
    const standaloneProducer = await pairedProducer(sbStandalone.port);
    producers.push(standaloneProducer);
    const standalonePanel = await panelSession(sbStandalone.port, standaloneProducer);
    clients.push(standalonePanel.client);

    const bridge = await startBridge(sbDaemon, [], { name: 'golden' });
    bridges.push(bridge);
    await waitFor('the daemon listens', () => health(sbDaemon.port), 20_000);
    const daemonProducer = await pairedProducer(sbDaemon.port);
    producers.push(daemonProducer);
    const panel = await panelSession(sbDaemon.port, daemonProducer);
    clients.push(panel.client);
    // the bridge's session opens with its first forwarded call
    await bridge.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    await standalone.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    await panel.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    await standalonePanel.client.callTool({ name: 'configure', arguments: { action: 'health' } });

    await feed(sbStandalone.port, standaloneProducer);
    await feed(sbDaemon.port, daemonProducer);
    const a = await script(standalone.client);
    const b = await script(bridge.client);
    const c = await script(panel.client);
    const d = await script(standalonePanel.client);

    const comparable = (x: Record<string, unknown>): unknown => normalise({ ...x, health: healthShape((x.health as Answer).text), healthIsError: (x.health as Answer).isError });
    expect(comparable(b)).toEqual(comparable(a));
    expect(comparable(c)).toEqual(comparable(a));
    expect(comparable(d)).toEqual(comparable(a));
    // the script means something: records were seen and the browser-less call is refused
    expect((a.errors as Answer).text).toContain('cart is undefined');
    expect((a.tools as unknown[]).length).toBe(4);
    expect((a.summary as Answer).text).toContain('4 new records');
    expect((a.page_info as Answer)).toMatchObject({ isError: true, text: expect.stringMatching(/^no_extension: /) });

    // the panel's session is in the table as a panel session, under the client id it named
    const h = (await health(sbDaemon.port)) as { mcp_sessions: Array<{ transport: string; client_id: string; state: string }> };
    expect(h.mcp_sessions).toEqual(expect.arrayContaining([expect.objectContaining({ transport: 'panel', client_id: 'panel', state: 'ready' }), expect.objectContaining({ transport: 'bridge', state: 'ready' })]));
    const hs = (await health(sbStandalone.port)) as { mcp_sessions: Array<{ transport: string }>; transports: { mcp: Record<string, unknown> } };
    expect(hs.mcp_sessions.map((s) => s.transport).sort()).toEqual(['panel', 'stdio']);
    expect(hs.transports.mcp).toMatchObject({ type: 'stdio', panel: { type: 'streamable-http', path: '/mcp' } });

    // memory only: neither token is in the daemon's log (at debug) nor in any file of the state dirs
    for (const sb of [sbDaemon, sbStandalone]) {
      for (const name of readdirSync(sb.stateDir, { recursive: true }) as string[]) {
        let body: string;
        try {
          body = readFileSync(join(sb.stateDir, name), 'utf8');
        } catch {
          continue;
        }
        expect(body.includes(panel.token) || body.includes(standalonePanel.token), `${name} holds a panel token`).toBe(false);
      }
    }
    const log = readFileSync(join(sbDaemon.stateDir, `daemon-${sbDaemon.port}.log`), 'utf8');
    expect(log).toContain('mcp http session opened');
    expect(log).not.toContain(panel.token);
    expect(standalone.stderr()).not.toContain(standalonePanel.token);
  });
});
