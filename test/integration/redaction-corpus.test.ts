/**
 * The redaction corpus: every secret class in each of the six carriers it arrives in, plus
 * look-alikes that must survive, pushed through the real path (WebSocket ingest or the HTTP
 * routes → worker redaction → ring → MCP tool result). Secrets are generated from a seeded PRNG:
 * shapes only. The fixture corpus (test/fixtures/redaction-corpus.jsonl) goes over both
 * transports, each into its own server, and is read back from the rings and over MCP (issue 20).
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../fixtures/shm-gen.js';
import { loadConfig } from '../../src/config.js';
import { luhn } from '../../src/domain/redaction/index.js';
import { createToolServer } from '../../src/mcp/server.js';
import type { App } from '../../src/app.js';
import { batch, Producer } from '../helpers/producer.js';
import { KIND_TABLE } from '../../src/domain/kinds.js';
import { carry as carryLine, loadCorpus, type Line } from '../helpers/redaction-carry.js';
import { startTestServer } from '../helpers/server.js';
import { readStoredRecord } from '../../src/domain/wire/stored-record.js';
import { tempStateDir } from '../helpers/state-dir.js';

const rnd = mulberry32(20261122);
const pick = (alphabet: string, n: number): string => Array.from({ length: n }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UP = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';
const b64url = (s: string): string => Buffer.from(s).toString('base64url');
function card(prefix: string, len: number): string {
  for (;;) {
    const body = prefix + pick('0123456789', len - prefix.length - 1);
    for (let d = 0; d < 10; d++) if (luhn(body + d)) return body + d;
  }
}

type Carrier = 'header' | 'url' | 'json_body' | 'text_body' | 'console_arg' | 'ws_frame';
const CARRIERS: Carrier[] = ['header', 'url', 'json_body', 'text_body', 'console_arg', 'ws_frame'];

/** [class, how the secret appears in running text, the secret] */
function secrets(): Array<[string, string, string]> {
  const s = (n: number) => pick(B62, n);
  const out: Array<[string, string, string]> = [];
  const add = (cls: string, text: (v: string) => string, v: string): void => void out.push([cls, text(v), v]);
  add('bearer', (v) => `Bearer ${v}`, s(32));
  add('basic', (v) => `Basic ${v}`, Buffer.from(`admin:${s(12)}`).toString('base64'));
  add('jwt', (v) => v, `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${s(8)}","exp":1900000000}`)}.${pick(B62 + '-_', 43)}`);
  add('jwt_none', (v) => v, `${b64url('{"alg":"none"}')}.${b64url(`{"sub":"${s(8)}"}`)}.`);
  add('aws_key', (v) => v, `AKIA${pick(UP, 16)}`);
  add('aws_sts_key', (v) => v, `ASIA${pick(UP, 16)}`);
  add('aws_secret', (v) => `aws_secret_access_key=${v}`, pick(B62 + '/+', 40));
  add('github_pat', (v) => v, `ghp_${s(36)}`);
  add('github_oauth', (v) => v, `gho_${s(36)}`);
  add('github_fine', (v) => v, `github_pat_${s(22)}_${s(59)}`);
  add('gitlab', (v) => v, `glpat-${pick(B62 + '-_', 20)}`);
  add('slack_token', (v) => v, `xoxb-${pick('0123456789', 12)}-${pick('0123456789', 13)}-${s(24)}`);
  add('slack_webhook', (v) => `https://hooks.slack.com/services/${v}`, `T${pick(UP, 8)}/B${pick(UP, 8)}/${s(24)}`);
  add('stripe_secret', (v) => v, `sk_live_${s(24)}`);
  add('stripe_restricted', (v) => v, `rk_live_${s(24)}`);
  add('openai', (v) => v, `sk-proj-${pick(B62 + '-_', 48)}`);
  add('anthropic', (v) => v, `sk-ant-api03-${pick(B62 + '-_', 40)}`);
  add('google_api', (v) => v, `AIza${pick(B62 + '-_', 35)}`);
  add('npm', (v) => v, `npm_${s(36)}`);
  add('sendgrid', (v) => v, `SG.${pick(B62 + '-_', 22)}.${pick(B62 + '-_', 43)}`);
  add('pem', (v) => `-----BEGIN RSA PRIVATE KEY-----\n${v}\n-----END RSA PRIVATE KEY-----`, pick(B62 + '+/', 64));
  add('card_visa', (v) => `card ${v}`, card('4', 16));
  add('card_mastercard', (v) => `card ${v.replace(/(\d{4})(?=\d)/g, '$1 ')}`, card('51', 16));
  add('card_amex', (v) => `card ${v}`, card('37', 15));
  add('password_kv', (v) => `password=${v}`, s(14));
  add('client_secret', (v) => `client_secret: ${v}`, s(30));
  add('refresh_token', (v) => `refresh_token=${v}`, s(40));
  add('generic', (v) => `signing_key = ${v}`, pick(B62, 28));
  return out;
}

const LOOKALIKES = (): string[] => [
  `${pick(HEX, 8)}-${pick(HEX, 4)}-4${pick(HEX, 3)}-a${pick(HEX, 3)}-${pick(HEX, 12)}`,
  pick('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 26),
  pick(HEX, 40),
  pick(HEX, 64),
  `sha384-${pick(B62 + '+/', 64)}`,
  `pk_test_${pick(B62, 24)}`,
  '4111111111111112',
  'token_type=Bearer&max_tokens=4096&author=ada',
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk',
  `/assets/index-${pick(HEX, 8)}.js`,
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
  'session expired after 30 minutes; token refresh scheduled',
  'secretary=Ms%20Moneypenny',
];

function carry(c: Carrier, text: string, ts: number): { kind: string; rec: Record<string, unknown> } {
  switch (c) {
    case 'header':
      return { kind: 'network_bodies', rec: { ts, method: 'GET', url: 'https://api.test/me', status: 200, request_headers: { 'X-Debug-Note': text } } };
    case 'url':
      return { kind: 'network', rec: { ts, method: 'GET', url: `https://api.test/callback?note=${encodeURIComponent(text)}`, status: 200, duration: 5 } };
    case 'json_body':
      return { kind: 'network_bodies', rec: { ts, method: 'POST', url: 'https://api.test/x', status: 200, request_body: JSON.stringify({ note: text }) } };
    case 'text_body':
      return { kind: 'network_bodies', rec: { ts, method: 'GET', url: 'https://api.test/y', status: 200, response_body: `line one\n${text}\nline three` } };
    case 'console_arg':
      return { kind: 'logs', rec: { ts, level: 'log', type: 'console', message: 'debug', args: [{ note: text }] } };
    case 'ws_frame':
      return { kind: 'ws_events', rec: { ts, event: 'message', id: 'c1', direction: 'incoming', data: JSON.stringify({ note: text }) } };
  }
}

let server: App;
beforeAll(async () => {
  server = await startTestServer({ rings: { logs: 2 << 20, network: 2 << 20, network_bodies: 2 << 20, ws_events: 2 << 20 } });
});
afterAll(async () => {
  await server.close();
});

it('zero leaks over ≥150 secret lines in six carriers, look-alikes kept (≤2 % over-redaction), end to end', async () => {
  const corpus: Array<{ cls: string; carrier: Carrier; text: string; secret?: string; lookalike?: boolean; marker: string }> = [];
  let n = 0;
  for (const carrier of CARRIERS) {
    for (const [cls, text, secret] of secrets()) corpus.push({ cls, carrier, text, secret, marker: `m${n++}x` });
    for (const text of LOOKALIKES()) corpus.push({ cls: 'lookalike', carrier, text, lookalike: true, marker: `m${n++}x` });
  }
  expect(corpus.filter((c) => c.secret).length).toBeGreaterThanOrEqual(150);
  expect(corpus.filter((c) => c.lookalike).length * 3).toBeGreaterThanOrEqual(corpus.length * 0.9);

  const p = await Producer.connect(server.port);
  await p.hello('corpus');
  const ts = Date.now();
  let seq = 0;
  for (let i = 0; i < corpus.length; i += 50) {
    const arrays: Record<string, unknown[]> = {};
    for (const c of corpus.slice(i, i + 50)) {
      const { kind, rec } = carry(c.carrier, `${c.marker} ${c.text}`, ts);
      (arrays[kind] ??= []).push(rec);
    }
    p.send(batch(seq, arrays));
    const ack = await p.ackFor(seq);
    expect(ack.rejected).toBe(0);
    seq++;
  }
  p.close();

  const config = loadConfig({ env: {}, flags: { state_dir: tempStateDir('gasoline-corpus-'), port: server.port } });
  const mcp = createToolServer({ config, port: server.mcp, clientId: 'corpus' }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: 'corpus', version: '1' });
  await client.connect(b);
  let answer = '';
  for (const what of ['logs', 'network', 'network_bodies', 'websocket_events']) {
    const r = await client.callTool({ name: 'observe', arguments: { what, from: 'start', limit: 500 } });
    answer += (r.content as Array<{ text: string }>)[0]!.text + '\n';
  }
  // network_bodies lines show bodies, not request headers: read the header carrier from the ring too
  // each record twice: its bytes as text (a record kept as its producer's msgpack holds its strings raw) and as JSON
  const stored = JSON.stringify(
    ['logs', 'network', 'network_bodies', 'ws_events'].map((k) =>
      server.reader.read(['logs', 'network', 'network_bodies', 'ws_events', 'actions', 'perf', 'ext_logs'].indexOf(k), 0, 5000).records.map((r) => [Buffer.from(r.payload).toString(), JSON.stringify(readStoredRecord(r.payload))]),
    ),
  );

  const recall = new Map<string, { total: number; ok: number }>();
  const leaks: string[] = [];
  let overRedacted = 0;
  for (const c of corpus) {
    if (c.secret) {
      const windows = c.secret.length >= 12 ? Array.from({ length: c.secret.length - 11 }, (_, i) => c.secret!.slice(i, i + 12)) : [c.secret];
      const enc = (w: string) => [w, JSON.stringify(w).slice(1, -1), encodeURIComponent(w)];
      const leaked = windows.some((w) => enc(w).some((e) => stored.includes(e) || answer.includes(e)));
      const key = `${c.cls}/${c.carrier}`;
      const r = recall.get(key) ?? { total: 0, ok: 0 };
      r.total++;
      if (!leaked) r.ok++;
      else leaks.push(key);
      recall.set(key, r);
    } else {
      // the look-alike must survive intact in whatever form its carrier stores it
      const forms = [c.text, JSON.stringify(c.text).slice(1, -1), JSON.stringify(JSON.stringify(c.text).slice(1, -1)).slice(1, -1), encodeURIComponent(c.text)];
      if (!forms.some((f) => stored.includes(f))) overRedacted++;
    }
  }
  const byClass = new Map<string, [number, number]>();
  for (const [k, v] of recall) {
    const cls = k.split('/')[0]!;
    const cur = byClass.get(cls) ?? [0, 0];
    byClass.set(cls, [cur[0] + v.ok, cur[1] + v.total]);
  }
  const lookalikes = corpus.filter((c) => c.lookalike).length;
  process.stderr.write(`redaction recall by class (all six carriers): ${[...byClass].map(([c, [ok, t]]) => `${c} ${ok}/${t}`).join(', ')}\nover-redaction: ${overRedacted}/${lookalikes}\n`);
  expect(leaks, `leaks: ${leaks.join(', ')}`).toEqual([]);
  expect(overRedacted / lookalikes).toBeLessThanOrEqual(0.02);
}, 60_000);

/** what the MCP tools answer for every kind the corpus fills: the readback a held-out check uses */
async function readBack(app: App): Promise<string> {
  const dir = tempStateDir('gasoline-corpus-');
  const config = loadConfig({ env: {}, flags: { state_dir: dir, port: app.port } });
  const mcp = createToolServer({ config, port: app.mcp, clientId: 'corpus-readback' }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: 'corpus-readback', version: '1' });
  await client.connect(b);
  let answer = '';
  for (const what of ['logs', 'network', 'network_bodies', 'websocket_events']) {
    const r = await client.callTool({ name: 'observe', arguments: { what, from: 'start', limit: 500 } });
    answer += (r.content as Array<{ text: string }>).map((c) => c.text).join('\n') + '\n';
  }
  await client.close();
  rmSync(dir, { recursive: true, force: true });
  return answer;
}

/** the corpus's records, by kind, with each kind's required wire fields */
function corpusRecords(lines: Line[], ts: number): Array<[string, Record<string, unknown>]> {
  // carry() gives the field a line arrives in; the wire also needs each kind's required fields
  const REQUIRED: Record<string, Record<string, unknown>> = {
    network: { method: 'GET', status: 200, duration: 12 },
    network_bodies: { method: 'POST', status: 200 },
    logs: { level: 'log', type: 'console' },
    ws_events: { event: 'message', id: 'c1', direction: 'incoming' },
  };
  return lines.map((l) => {
    const [kind, rec] = carryLine(l);
    for (const [k, v] of Object.entries(rec)) if (v === '') delete rec[k];
    return [kind, { ts, ...REQUIRED[kind], ...rec }];
  });
}

async function sendWebSocket(app: App, recs: Array<[string, Record<string, unknown>]>): Promise<void> {
  const p = await Producer.connect(app.port);
  await p.hello('fixture-corpus');
  let seq = 0;
  for (let i = 0; i < recs.length; i += 40) {
    const arrays: Record<string, unknown[]> = {};
    for (const [kind, rec] of recs.slice(i, i + 40)) (arrays[kind] ??= []).push(rec);
    p.send(batch(seq, arrays));
    const ack = await p.ackFor(seq);
    expect(ack.rejected, JSON.stringify(ack)).toBe(0);
    seq++;
  }
  p.close();
}

/** the same records through the HTTP routes (POST /logs, /network, /network-bodies, /websocket-events) */
async function sendHttp(app: App, recs: Array<[string, Record<string, unknown>]>): Promise<void> {
  const byKind = new Map<string, unknown[]>();
  for (const [kind, rec] of recs) byKind.set(kind, [...(byKind.get(kind) ?? []), rec]);
  for (const [kind, all] of byKind) {
    const route = KIND_TABLE.find((r) => r.name === kind)!.http!;
    for (let i = 0; i < all.length; i += 40) {
      const r = await fetch(`http://127.0.0.1:${app.port}${route.route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ [route.bodyKey]: all.slice(i, i + 40) }) });
      const body = (await r.json()) as { rejected?: number };
      expect(r.status, JSON.stringify(body)).toBe(200);
      expect(body.rejected, JSON.stringify(body)).toBe(0);
    }
  }
}

describe.each(['websocket', 'http'] as const)('the fixture corpus over %s, end to end and read back over MCP', (transport) => {
  let app: App;
  beforeAll(async () => {
    app = await startTestServer({ rings: { logs: 2 << 20, network: 2 << 20, network_bodies: 2 << 20, ws_events: 2 << 20 } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('0 leaks in the rings and in the answers, over-redaction ≤ 2 %, recall per class and carrier', async () => {
    const lines = loadCorpus();
    const recs = corpusRecords(lines, Date.now());
    await (transport === 'websocket' ? sendWebSocket(app, recs) : sendHttp(app, recs));
    const kinds = ['logs', 'network', 'network_bodies', 'ws_events', 'actions', 'perf', 'ext_logs'];
    // the stored payloads as they are (JSON, or a producer's msgpack with its strings raw), and each read back as JSON
    const payloads = ['logs', 'network', 'network_bodies', 'ws_events'].flatMap((k) => app.reader.read(kinds.indexOf(k), 0, 5000).records.map((r) => r.payload));
    expect(payloads.length).toBe(lines.length);
    const stored = payloads.flatMap((p) => [Buffer.from(p).toString(), JSON.stringify(readStoredRecord(p))]).join('\n');
    const answer = await readBack(app);
    // the answers show the records (a look-alike comes back as it went in), not an error
    expect(answer).toContain('/src/main.tsx?t=');
    expect(answer).toContain('[REDACTED:graphql_variable]');

    const table = new Map<string, Record<string, string>>();
    const leaks: string[] = [];
    let over = 0;
    const overList: string[] = [];
    const looks = lines.filter((l) => l.lookalike);
    for (const l of lines) {
      if (l.lookalike) {
        const forms = [l.text, JSON.stringify(l.text).slice(1, -1), JSON.stringify(JSON.stringify(l.text).slice(1, -1)).slice(1, -1)];
        if (l.carrier === 'header') forms.push(JSON.stringify(l.text.slice(l.text.indexOf(': ') + 2)).slice(1, -1));
        if (l.carrier === 'console_arg') forms.push(...(JSON.parse(l.text) as unknown[]).map((a) => JSON.stringify(a)));
        if (!forms.some((f) => stored.includes(f))) {
          over++;
          overList.push(`${l.class}/${l.carrier}: ${l.text.slice(0, 120)}`);
        }
        continue;
      }
      const s = l.secret!;
      const windows = s.length >= 12 ? Array.from({ length: s.length - 11 }, (_, i) => s.slice(i, i + 12)) : [s];
      const forms = (w: string): string[] => [w, JSON.stringify(w).slice(1, -1), encodeURIComponent(w)];
      const leaked = windows.some((w) => forms(w).some((e) => stored.includes(e) || answer.includes(e)));
      const row = table.get(l.class) ?? {};
      row[l.carrier] = leaked ? 'LEAK' : 'ok';
      table.set(l.class, row);
      if (leaked) leaks.push(`${l.class}/${l.carrier}`);
    }
    const carriers = ['header', 'url', 'json_body', 'text_body', 'console_arg', 'ws_frame'];
    const md = [`| class | ${carriers.join(' | ')} |`, `|---|${carriers.map(() => '---').join('|')}|`, ...[...table].map(([c, r]) => `| ${c} | ${carriers.map((k) => r[k] ?? '—').join(' | ')} |`)];
    process.stderr.write(`fixture corpus over ${transport}: ${lines.length - looks.length - leaks.length}/${lines.length - looks.length} secrets redacted, over-redaction ${over}/${looks.length}${overList.map((o) => `\n  ${o}`).join('')}\n${md.join('\n')}\n`);
    expect(leaks).toEqual([]);
    expect(over / looks.length).toBeLessThanOrEqual(0.02);
  }, 90_000);
});
