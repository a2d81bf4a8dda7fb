/**
 * Issue #18's preamble, kept true: the items of the attack checklist that held against a real
 * Chromium page as the attacker. The attacker page is served from its own loopback origin (a
 * loopback page is the strongest case: Chromium's own private-network checks do not get in the way,
 * so only the server's guard stands between the page and the ingest server). Each test starts its
 * own real app on a real port, so "nothing stored" is counted from zero, and proves it by a later
 * legitimate record that must be the only one.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { KINDS, kindId } from '../../src/domain/kinds.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { CHROMIUM, chromiumFlags, hasChromium, launchWithExtension, SKIP_REASON } from './helpers/chromium.js';

if (!hasChromium) console.warn(SKIP_REASON);

/** a name the attacker controls, resolved to loopback: the end state of a DNS rebinding */
const REBIND_HOST = 'rebind.test';

interface Health {
  extension: { connected: boolean; producers: unknown[] };
  kinds: Record<string, { received: number; stored: number }> & { logs: { received: number; stored: number } };
  edge: { connections_total: number; refused: Record<string, number>; http_status: Record<string, number> };
}

/** /health over a real socket as a local process (no Origin), with its own deadline: it must stay responsive */
async function health(port: number): Promise<Health> {
  const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
  expect(r.status).toBe(200);
  return (await r.json()) as Health;
}

/** Serves one inert HTML page on every path: the attacker's own site, on its own origin. */
async function startAttackerSite(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end('<!doctype html><title>attacker</title><body></body>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

interface Stage {
  app: App;
  agent: Client;
}

describe.skipIf(!hasChromium)('a real Chromium page attacking the ingest server: what held (#18 preamble)', () => {
  let site: Awaited<ReturnType<typeof startAttackerSite>>;
  let browser: Browser;
  const cleanups: Array<() => Promise<void>> = [];

  const drain = async (): Promise<void> => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };

  /** a fresh real app and an agent on it, closed after the test */
  const stage = async (): Promise<Stage> => {
    const dir = mkdtempSync(join(tmpdir(), 'gasoline-attacker-e2e-'));
    const app = await startTestServer();
    const agent = await connectAgent(app, dir, 'e2e-attacker');
    cleanups.push(async () => {
      await agent.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { app, agent };
  };

  const attackerPage = async (url = `${site.origin}/`): Promise<Page> => {
    const ctx = await browser.newContext();
    cleanups.push(() => ctx.close());
    const page = await ctx.newPage();
    await page.goto(url);
    return page;
  };

  /**
   * The later marker: a legitimate producer sends one record, the agent waits until it reads it,
   * and then the counters hold that record and nothing else, so the attack stored nothing.
   */
  const onlyTheMarker = async (s: Stage, via: 'ws' | 'http', attackTexts: string[]): Promise<void> => {
    const marker = `legitimate-${via}-after-the-attack`;
    if (via === 'ws') {
      const p = await Producer.connect(s.app.port);
      await p.hello('legitimate');
      p.send(batch(0, { logs: [logRecord(1, { message: marker })] }));
      await p.ackFor(0);
      p.close();
    } else {
      const r = await fetch(`http://127.0.0.1:${s.app.port}/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entries: [logRecord(1, { message: marker })] }) });
      expect(r.status).toBe(200);
    }
    const text = await waitFor(
      'the legitimate marker in observe logs',
      async () => {
        const t = (await callTool(s.agent, 'observe', { what: 'logs', from: 'start', fold: false })).text;
        return t.includes(marker) ? t : null;
      },
      10_000,
      100,
    );
    for (const a of attackTexts) expect(text).not.toContain(a);
    const h = await health(s.app.port);
    expect(h.kinds.logs).toMatchObject({ received: 1, stored: 1 });
    for (const k of KINDS) if (k !== 'logs') expect(h.kinds[k]?.received, k).toBe(0);
  };

  beforeAll(async () => {
    site = await startAttackerSite();
    // the shared flags, with one resolver rule more: the attacker's name maps to loopback
    const args = chromiumFlags('').filter((f) => !f.includes('extension') && !f.startsWith('--host-resolver-rules'));
    args.push(`--host-resolver-rules=MAP ${REBIND_HOST} 127.0.0.1 , MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1`);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
  }, 30_000);

  afterEach(drain);

  afterAll(async () => {
    await drain();
    await browser?.close();
    await site?.close();
  });

  it('DNS rebinding: a page whose own name resolves to 127.0.0.1 gets 403 host_refused for /health, /logs and /ws', async () => {
    const s = await stage();
    // the page's origin is the attacker's name on our port, now pointing at loopback: same-origin to us
    const origin = `http://${REBIND_HOST}:${s.app.port}`;
    const page = await attackerPage(`${origin}/health`);
    const out = (await page.evaluate(`(async () => {
      const read = async (p) => { const r = await p; return { status: r.status, body: await r.json() }; };
      const wsTry = () => new Promise((resolve) => {
        const ws = new WebSocket('ws://' + location.host + '/ws');
        let opened = false;
        ws.onopen = () => { opened = true; ws.close(); };
        ws.onclose = (e) => resolve({ opened, code: e.code });
      });
      return {
        origin: location.origin,
        health: await read(fetch('/health')),
        logs: await read(fetch('/logs', { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ entries: [{ ts: Date.now(), level: 'error', type: 'console', message: 'rebound-write', url: location.href }] }) })),
        ws: await wsTry(),
      };
    })()`)) as { origin: string; health: { status: number; body: { error: string } }; logs: { status: number; body: { error: string } }; ws: { opened: boolean; code: number } };
    expect(out.origin).toBe(origin);
    // same-origin now, so the page can read the answers: they are refusals, with no report in them
    expect(out.health).toEqual({ status: 403, body: expect.objectContaining({ error: 'host_refused' }) });
    expect(out.logs).toEqual({ status: 403, body: expect.objectContaining({ error: 'host_refused' }) });
    expect(out.ws).toEqual({ opened: false, code: 1006 });
    const h = await health(s.app.port);
    expect(h.edge.refused.host_refused).toBe(1);
    expect(h.edge.connections_total).toBe(0);
    await onlyTheMarker(s, 'http', ['rebound-write']);
  }, 30_000);

  it('CSWSH: a WebSocket from a foreign page never opens; the server counts no connection and no producer', async () => {
    const s = await stage();
    const page = await attackerPage();
    const tries = (await page.evaluate(`Promise.all(['ws://127.0.0.1:${s.app.port}/ws', 'ws://localhost:${s.app.port}/ws'].map((url) => new Promise((resolve) => {
      const ws = new WebSocket(url);
      let opened = false;
      let messages = 0;
      ws.onopen = () => { opened = true; ws.send('{"t":"hello","v":1,"client":"extension","session":"hijack"}'); };
      ws.onmessage = () => { messages++; };
      ws.onclose = (e) => resolve({ opened, code: e.code, messages });
    })))`)) as Array<{ opened: boolean; code: number; messages: number }>;
    expect(tries).toEqual([
      { opened: false, code: 1006, messages: 0 },
      { opened: false, code: 1006, messages: 0 },
    ]);
    const h = await health(s.app.port);
    expect(h.edge.refused.origin_refused).toBe(2);
    expect(h.edge.connections_total).toBe(0);
    expect(h.extension).toEqual({ connected: false, paired: false, producers: [] });
    expect(h.kinds.logs.received).toBe(0);
    await onlyTheMarker(s, 'ws', ['hijack']);
  }, 30_000);

  it('CORS read: a foreign page cannot read /health (TypeError, opaque), and no Access-Control-Allow-Origin is sent', async () => {
    const s = await stage();
    const page = await attackerPage();
    // the headers as they reached the browser, before its CORS check hid them from the page
    const url = `http://127.0.0.1:${s.app.port}/health`;
    const ours = new Set<string>();
    const answers: Array<{ id: string; status: number; headers: Record<string, string> }> = [];
    const cdp = await page.context().newCDPSession(page);
    cdp.on('Network.requestWillBeSent', (e) => e.request.url === url && ours.add(e.requestId));
    cdp.on('Network.responseReceivedExtraInfo', (e) => answers.push({ id: e.requestId, status: e.statusCode, headers: e.headers }));
    await cdp.send('Network.enable');
    // only our two reads of /health (the attacker site's own favicon is answered too)
    const seen = (): typeof answers => answers.filter((a) => ours.has(a.id));
    const cors = await page.evaluate(`fetch('${url}').then((r) => r.text()).then((body) => ({ body }), (e) => ({ error: e.name }))`);
    expect(cors).toEqual({ error: 'TypeError' });
    const [refused] = await waitFor('the CORS answer as the browser got it', () => seen().length >= 1 && seen(), 5000, 50);
    expect(refused!.status).toBe(403);
    expect(Object.keys(refused!.headers).filter((k) => k.toLowerCase().startsWith('access-control-'))).toEqual([]);
    const opaque = await page.evaluate(`fetch('${url}', { mode: 'no-cors' }).then(async (r) => ({ type: r.type, status: r.status, body: await r.text() }))`);
    expect(opaque).toEqual({ type: 'opaque', status: 0, body: '' });
    // a no-cors GET carries no Origin, so the server cannot tell it from a local read; the browser keeps the answer from the page
    const [, blind] = await waitFor('the no-cors answer as the browser got it', () => seen().length >= 2 && seen(), 5000, 50);
    expect(Object.keys(blind!.headers).filter((k) => k.toLowerCase().startsWith('access-control-'))).toEqual([]);
    expect((await health(s.app.port)).edge.http_status['403']).toBe(1);
  }, 30_000);

  it('no-cors and form CSRF: a text/plain POST of JSON to /logs by fetch and by an auto-submitted form stores nothing', async () => {
    const s = await stage();
    const logs = `http://127.0.0.1:${s.app.port}/logs`;
    const page = await attackerPage();
    const fetched = (await page.evaluate(`(async () => {
      const body = JSON.stringify({ entries: [{ ts: Date.now(), level: 'error', type: 'console', message: 'csrf-fetch', url: location.href }] });
      const r = await fetch(${JSON.stringify(logs)}, { mode: 'no-cors', method: 'POST', body, headers: { 'content-type': 'text/plain' } });
      return { type: r.type, status: r.status };
    })()`)) as { type: string; status: number };
    expect(fetched).toEqual({ type: 'opaque', status: 0 });
    // text/plain forms send name=value: a name ending in an open string and a value closing it make JSON
    const name = `{"entries":[{"ts":1,"level":"error","type":"console","url":"http://127.0.0.1/","message":"csrf-form`;
    await page.evaluate(`(() => {
      const f = document.createElement('form');
      f.method = 'POST';
      f.action = ${JSON.stringify(logs)};
      f.enctype = 'text/plain';
      const i = document.createElement('input');
      i.type = 'hidden';
      i.name = ${JSON.stringify(name)};
      i.value = '"}]}';
      f.appendChild(i);
      document.body.appendChild(f);
      f.submit();
    })()`);
    const h = await waitFor('both forged POSTs refused', async () => {
      const x = await health(s.app.port);
      return (x.edge.http_status['403'] ?? 0) >= 2 && x;
    });
    expect(h.kinds.logs.received).toBe(0);
    await onlyTheMarker(s, 'http', ['csrf-fetch', 'csrf-form']);
  }, 30_000);

  it('ReDoS from the page: "a"×29+"\\n" logged under noise rule (.|a)+$ — observe logs (before) and error_bundles answer within a bound, /health stays up', async () => {
    const s = await stage();
    const added = await callTool(s.agent, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: '(.|a)+$' });
    expect(added.isError, added.text).toBe(false);
    const bystanderDir = mkdtempSync(join(tmpdir(), 'gasoline-attacker-e2e-'));
    const bystander = await connectAgent(s.app, bystanderDir, 'e2e-bystander');
    cleanups.push(async () => {
      await bystander.close();
      rmSync(bystanderDir, { recursive: true, force: true });
    });
    // the extension is what turns the page's console into records
    const withExtension = await launchWithExtension({ port: s.app.port, trackAll: true });
    cleanups.push(() => withExtension.close());
    await waitFor('the extension', async () => (await health(s.app.port)).extension.connected, 15_000, 100);
    const page = await withExtension.ctx.newPage();
    await page.goto(`${site.origin}/`);
    // every 10 ms a log line; every 20th an error, so error_bundles has bundles to fold them into,
    // and every 20th a line the rule matches, so the answers show that the rule was applied
    await page.evaluate(`(() => {
      const evil = 'a'.repeat(29) + '\\n';
      let i = 0;
      window.__flood = setInterval(() => {
        const n = i++ % 20;
        if (n === 19) console.error(evil);
        else if (n === 9) console.log('hidden-by-the-rule');
        else console.log(evil);
      }, 10);
    })()`);
    await waitFor('200 logged lines stored', async () => (await health(s.app.port)).kinds.logs.stored >= 200, 20_000, 200);
    // a cursor at the newest record: paging back from it runs the rule over every record it passes
    const before = (): string => (s.app.reader.latestOrd(kindId('logs')) + 1).toString(36);
    const BOUND_MS = 3000;
    for (const args of [
      { what: 'logs', before: before() },
      { what: 'error_bundles', from: 'start' },
    ]) {
      const t0 = Date.now();
      // the page keeps logging meanwhile; /health is read in parallel, each with its own deadline
      const [r] = await Promise.all([callTool(s.agent, 'observe', args), health(s.app.port)]);
      const ms = Date.now() - t0;
      expect(r.isError, r.text).toBe(false);
      // the records themselves, not the alert block riding along: quoted, with the line break escaped
      const records = r.text.split('\n--- ALERTS')[0]!;
      expect(records, JSON.stringify(args)).toContain(`"${'a'.repeat(29)}\\n"`);
      expect(records, JSON.stringify(args)).not.toContain('hidden-by-the-rule');
      expect(ms, JSON.stringify(args)).toBeLessThan(BOUND_MS);
    }
    await page.evaluate('clearInterval(window.__flood)');
    // an agent without the rule sees the hidden lines: the rule, not the range, kept them out above
    expect((await callTool(bystander, 'observe', { what: 'logs', before: before() })).text).toContain('"hidden-by-the-rule"');
  }, 45_000);
});
