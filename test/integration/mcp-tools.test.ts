/** Every tool behaviour, in process: the SDK's Client over its in-memory transport, records ingested through the real pipeline. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createToolServer } from '../../src/mcp/server.js';
import type { App } from '../../src/app.js';
import { offlinePort } from '../../src/app-port.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { tempStateDir } from '../helpers/state-dir.js';

let server: App;
let producer: Producer;
let seq = 0;
const stateDir = tempStateDir('gasoline-mcp-');

const agent = (clientId: string): Promise<Client> => connectAgent(server, stateDir, clientId);
const call = callTool;

async function send(records: Record<string, unknown[]>, extra: Record<string, unknown> = {}): Promise<void> {
  const s = seq++;
  producer.send(batch(s, records, extra));
  await producer.ackFor(s);
}

const now = Date.now();

beforeAll(async () => {
  // the app saves client state (the store included) under its state dir
  server = await startTestServer({ state_dir: stateDir });
  producer = await Producer.connect(server.port);
  await producer.hello('mcp-tools');
  await send({
    logs: [
      logRecord(1, { level: 'info', message: 'app booted' }),
      logRecord(2, { level: 'warn', message: 'slow render 340ms' }),
      { ts: now, level: 'error', type: 'exception', message: 'TypeError: x is undefined', stack: 'TypeError: x is undefined\n    at render (http://127.0.0.1:3000/app.js:10:5)' },
      { ts: now, level: 'error', type: 'network', message: 'POST /api/users 500', method: 'POST', request_url: 'http://127.0.0.1:3000/api/users', status: 500, response: '{"error":"db down"}' },
      logRecord(3, { level: 'error', message: 'GET http://127.0.0.1:3000/favicon.ico 404', url: 'http://127.0.0.1:3000/favicon.ico' }),
    ],
    network: [
      { ts: now - 2000, method: 'GET', url: 'http://127.0.0.1:3000/api/items', status: 200, duration: 20, page_url: 'https://app.test/' },
      { ts: now - 1000, method: 'POST', url: 'http://127.0.0.1:3000/api/users', status: 500, duration: 45 },
    ],
    network_bodies: [
      { ts: now, method: 'GET', url: 'https://app.test/', status: 200, content_type: 'text/html', response_headers: { 'content-type': 'text/html', 'set-cookie': 'sid=abc; Path=/' }, response_body: '<html>' },
    ],
    ws_events: [
      { ts: now - 3000, event: 'open', id: 'ws1', url: 'ws://127.0.0.1:3000/live' },
      { ts: now - 2500, event: 'message', id: 'ws1', direction: 'incoming', data: '{"tick":1}' },
      { ts: now - 2400, event: 'message', id: 'ws1', direction: 'outgoing', data: '{"ping":1}' },
      { ts: now - 100, event: 'close', id: 'ws1', code: 1006 },
    ],
    actions: [{ ts: now - 1500, type: 'click', url: 'http://127.0.0.1:3000/', selectors: { test_id: 'save', text: 'Save' } }],
    perf: [
      { ts: now - 60_000, url: 'http://127.0.0.1:3000/', timing: { ttfb: 100, fcp: 800, lcp: 1200, cls: 0.01, inp: 80, dom_content_loaded: 900, load: 1500 } },
      { ts: now - 30_000, url: 'http://127.0.0.1:3000/', timing: { ttfb: 110, fcp: 820, lcp: 1250, cls: 0.02, inp: 90, dom_content_loaded: 950, load: 1550 } },
      { ts: now, url: 'http://127.0.0.1:3000/', timing: { ttfb: 105, fcp: 830, lcp: 2600, cls: 0.2, inp: 85, dom_content_loaded: 960, load: 1600 } },
    ],
  });
});
afterAll(async () => {
  producer.close();
  await server.close();
});

describe('observe', () => {
  it('errors: exceptions and failed requests, noise hidden and counted, then nothing new', async () => {
    const c = await agent('a1');
    const r = await call(c, 'observe', { what: 'errors' });
    expect(r.text).toMatch(/errors \(new since your last look\): 2 matched \(2 distinct\), showing 2; 1 hidden by noise rules/);
    expect(r.text).toContain('"TypeError: x is undefined"');
    expect(r.text).toContain('POST "http://127.0.0.1:3000/api/users" → 500');
    // the batch's alerts may ride along by now (they reach main after the ack); the answer is the first block
    expect((await call(c, 'observe', { what: 'errors' })).text.split('\n--- ALERTS')[0]).toBe('errors (new since your last look): 0 matched');
    // a second agent has its own cursors and sees everything
    const other = await agent('a2');
    expect((await call(other, 'observe', { what: 'errors' })).text).toContain('2 matched');
  });

  it('logs with min_level, contains, limit and a cursor to continue', async () => {
    const c = await agent('b1');
    const warn = await call(c, 'observe', { what: 'logs', min_level: 'warn', from: 'start' });
    expect(warn.text).not.toContain('app booted');
    expect(warn.text).toContain('slow render');
    // the limit is filled most severe first: the failed request, then the rest by cursor
    const one = await call(c, 'observe', { what: 'logs', from: 'start', limit: 1 });
    expect(one.text).toContain('showing 1');
    expect(one.text).toContain('POST "http://127.0.0.1:3000/api/users" → 500');
    expect(one.text).toMatch(/not shown: 3 lines \(3 records\) over the limit 1/);
    const cursor = /after:"([^"]+)"/.exec(one.text)![1]!;
    const rest = await call(c, 'observe', { what: 'logs', after: cursor, limit: 10 });
    expect(rest.text).toContain('showing 3');
    expect(rest.text).toContain('slow render');
    expect(rest.text).toContain('app booted');
    expect(rest.text).not.toContain('/api/users" → 500');
    expect((await call(c, 'observe', { what: 'logs', from: 'start', contains: 'DB DOWN' })).text).toContain('1 matched');
    const back = await call(c, 'observe', { what: 'logs', before: cursor, limit: 1 });
    expect(back.text).toContain('1 shown');
    expect(back.text).toContain('/api/users" → 500');
    expect((await call(c, 'observe', { what: 'logs', from: 'start', tab_id: 7 })).text).not.toContain(' 0 matched');
    expect((await call(c, 'observe', { what: 'logs', from: 'start', tab_id: 99 })).text).toContain(' 0 matched');
    const bad = await call(c, 'observe', { what: 'logs', after: 'zz.zz.zz' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^bad_cursor: after: "zz.zz.zz" is not a cursor of observe\(\{what:"logs"\}\)/);
    expect((await call(c, 'observe', { what: 'logs', before: '1~0~0' })).text).toMatch(/^bad_cursor: before:/);
  });

  it('network with method and status range; network_bodies; actions', async () => {
    const c = await agent('c1');
    const net = await call(c, 'observe', { what: 'network', method: 'post', status_min: 500 });
    expect(net.text).toContain('1 matched');
    expect(net.text).toContain('/api/users" → 500');
    expect((await call(c, 'observe', { what: 'network', from: 'start', status_max: 299 })).text).toContain('/api/items" → 200');
    expect((await call(c, 'observe', { what: 'network', from: 'start', status_max: 299 })).text).not.toContain('→ 500');
    expect((await call(c, 'observe', { what: 'network', from: 'start', url: '/api/items' })).text).toContain('1 matched');
    expect((await call(c, 'observe', { what: 'network_bodies' })).text).toContain('["text/html"]');
    expect((await call(c, 'observe', { what: 'actions' })).text).toContain('click [data-testid=save]');
  });

  it('websocket_events filters by connection and direction; websocket_status summarizes', async () => {
    const c = await agent('d1');
    const out = await call(c, 'observe', { what: 'websocket_events', connection_id: 'ws1', direction: 'outgoing' });
    expect(out.text).toContain('1 matched');
    const st = await call(c, 'observe', { what: 'websocket_status' });
    expect(st.text).toMatch(/"ws1" closed\(1006\) "ws:\/\/127.0.0.1:3000\/live" in=1 out=1/);
  });

  it('performance rates the latest vitals; page says where the tab is; timeline merges kinds in order', async () => {
    const c = await agent('e1');
    const perf = await call(c, 'observe', { what: 'performance' });
    expect(perf.text).toContain('lcp=2600(needs-improvement)');
    expect(perf.text).toContain('[3 loads]');
    expect((await call(c, 'observe', { what: 'page' })).text).toContain('http://127.0.0.1:3000/');
    const tl = await call(c, 'observe', { what: 'timeline', limit: 500 });
    const kinds = tl.text.split('\n').slice(1);
    expect(kinds.length).toBeGreaterThan(10);
  });

  it('error_bundles attach the actions and requests just before each error', async () => {
    const c = await agent('f1');
    const b = await call(c, 'observe', { what: 'error_bundles', window_s: 10 });
    expect(b.text).toContain('■');
    expect(b.text).toContain('click [data-testid=save]');
  });
});

describe('analyze', () => {
  it('performance: regressions against the median baseline', async () => {
    const c = await agent('g1');
    const r = await call(c, 'analyze', { target: 'performance' });
    expect(r.text).toMatch(/lcp 1225ms→2600ms \(\+112%\)/);
    expect(r.text).toContain('cls');
    expect(r.text).not.toContain('ttfb');
  });

  it('error_clusters group by normalized signature', async () => {
    await send({ logs: [logRecord(10, { message: 'Request 123 failed after 45ms' }), logRecord(11, { message: 'Request 987 failed after 12ms' })] });
    const c = await agent('g2');
    expect((await call(c, 'analyze', { target: 'error_clusters' })).text).toContain('2× "Request <n> failed after <n>ms"');
  });

  it('changes since a checkpoint: new signatures and newly failing endpoints only', async () => {
    const c = await agent('g3');
    const nope = await call(c, 'analyze', { target: 'changes', checkpoint: 'nope' });
    expect(nope.isError).toBe(true);
    expect(nope.text).toMatch(/^unknown_name: no checkpoint "nope"; list them with configure/);
    expect((await call(c, 'configure', { action: 'checkpoint', checkpoint_action: 'create', name: 'before-fix' })).text).toContain('created');
    await send({
      logs: [{ ts: Date.now(), level: 'error', type: 'exception', message: 'RangeError: bad index' }, { ts: Date.now(), level: 'error', type: 'exception', message: 'TypeError: x is undefined', stack: 'TypeError: x is undefined\n    at render (http://127.0.0.1:3000/app.js:10:5)' }],
      network: [{ ts: Date.now(), method: 'GET', url: 'http://127.0.0.1:3000/api/orders/17', status: 503, duration: 5 }],
    });
    const r = await call(c, 'analyze', { target: 'changes', checkpoint: 'before-fix' });
    expect(r.text).toContain('RangeError: bad index');
    expect(r.text).not.toContain('TypeError');
    expect(r.text).toContain('"GET 127.0.0.1:3000/api/orders/<n> → 503"');
    expect((await call(c, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('before-fix');
  });

  it('security: cookies without flags, missing headers, mixed content', async () => {
    const c = await agent('g4');
    const r = await call(c, 'analyze', { target: 'security' });
    expect(r.text).toContain('cookie sid without Secure');
    expect(r.text).toContain('cookie sid without HttpOnly');
    expect(r.text).toContain('without Content-Security-Policy');
    expect(r.text).toContain('mixed content');
  });

  it('security: document headers and cookie attributes from the extension, listed present and missing, never a value', async () => {
    const c = await agent('g5');
    await send({
      network_bodies: [
        { ts: now, method: 'GET', url: 'https://shop.test/cart', status: 200, document: true, content_type: 'text/html', response_headers: { 'content-type': 'text/html', 'strict-transport-security': 'max-age=63072000', 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' } },
        { ts: now + 1, method: 'POST', url: 'https://shop.test/api/session', status: 200, cookies: [{ name: 'sess', secure: false, http_only: false, same_site: 'none', path: '/', expiry: 'long_lived' }, { name: 'csrf', secure: true, http_only: false, same_site: 'strict', expiry: 'session' }] },
      ],
    });
    const r = await call(c, 'analyze', { target: 'security', url: 'shop.test' });
    expect(r.text).toMatch(/^security: \d+ findings\n\[medium\] /);
    expect(r.text).toContain('[medium] document without Content-Security-Policy — "shop.test/cart"');
    expect(r.text).toContain('[medium] cookie sess without Secure — "shop.test/api/session"');
    expect(r.text).toContain('[medium] cookie sess SameSite=None without Secure (browsers refuse it) — "shop.test/api/session"');
    expect(r.text).toContain('[low] cookie csrf without HttpOnly (scripts can read it) — "shop.test/api/session"');
    expect(r.text).toContain('documents (headers of the latest load; 1 URL):\n- "https://shop.test/cart" 200: present Strict-Transport-Security="max-age=63072000" X-Frame-Options="DENY" X-Content-Type-Options="nosniff"; missing Content-Security-Policy, Referrer-Policy, Permissions-Policy, Cross-Origin-Opener-Policy, Cross-Origin-Embedder-Policy');
    expect(r.text).toContain('cookies set (attributes only; values are never captured): 2\n- "sess" no Secure no HttpOnly SameSite=none long_lived path="/" — set by "shop.test/api/session"\n- "csrf" Secure no HttpOnly SameSite=strict session — set by "shop.test/api/session"');
    // within its budget, listings after the findings
    const small = await call(c, 'analyze', { target: 'security', url: 'shop.test', budget: 1000 });
    expect(small.text.length).toBeLessThanOrEqual(1000);
    expect(small.text).toContain('[medium] document without Content-Security-Policy');
  });
});

describe('configure', () => {
  it('health carries ingest counters and the MCP side', async () => {
    const c = await agent('h1');
    const h = JSON.parse((await call(c, 'configure', { action: 'health' })).text) as Record<string, any>;
    expect(h.kinds.logs.stored).toBeGreaterThan(0);
    expect(h.mcp).toBeDefined();
  });

  it('noise rules: add (unsafe patterns refused), list, remove', async () => {
    const c = await agent('h2');
    // #18: a pattern RE2 cannot run in linear time (a backreference) is refused; (a+)+$ now runs linearly
    const unsafe = await call(c, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: '(a+)\\1$' });
    expect(unsafe.isError).toBe(true);
    expect(unsafe.text).toMatch(/^pattern_refused: backreferences/);
    const added = await call(c, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: 'TypeError' });
    const id = /rule (n\d+)/.exec(added.text)![1]!;
    expect((await call(c, 'observe', { what: 'errors', from: 'start' })).text).toMatch(/hidden by noise rules/);
    expect((await call(c, 'configure', { action: 'noise_rule', noise_action: 'list' })).text).toContain('TypeError');
    expect((await call(c, 'configure', { action: 'noise_rule', noise_action: 'remove', id })).text).toContain('removed');
  });

  it('clear mine resets only the caller; clear all empties the buffers and says so', async () => {
    const c = await agent('h3');
    const other = await agent('h4');
    expect((await call(c, 'configure', { action: 'clear' })).text).toContain('your read cursors');
    expect((await call(c, 'observe', { what: 'logs' })).text).toContain('0 matched');
    expect((await call(other, 'observe', { what: 'logs' })).text).not.toContain(' 0 matched');
    const all = await call(c, 'configure', { action: 'clear', scope: 'all' });
    expect(all.text).toContain('DESTRUCTIVE');
    expect((await call(other, 'observe', { what: 'logs', from: 'start' })).text).toContain('0 matched');
  });

  it('store persists per project under the state dir', async () => {
    const c = await agent('h5');
    await call(c, 'configure', { action: 'store', store_action: 'set', key: 'note', value: 'login bug fixed' });
    const again = await agent('h5');
    expect((await call(again, 'configure', { action: 'store', store_action: 'get', key: 'note' })).text).toBe('login bug fixed');
    const missing = await call(again, 'configure', { action: 'store', store_action: 'get', key: 'missing' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^unknown_name: no key "missing"/);
  });

  it('store never writes a secret to disk', async () => {
    const c = await agent('h5s');
    await call(c, 'configure', { action: 'store', store_action: 'set', key: 'creds', value: 'use token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for the API' });
    const files = readdirSync(stateDir, { recursive: true }).map(String).filter((f) => f.endsWith('.json'));
    const onDisk = files.map((f) => readFileSync(join(stateDir, f), 'utf8')).join('\n');
    expect(onDisk).toContain('[REDACTED:github_token]');
    expect(onDisk).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
  });

  it('reads the guide resource', async () => {
    const c = await agent('h6');
    const r = await c.readResource({ uri: 'gasoline://guide' });
    expect((r.contents[0] as { text: string }).text).toContain('# Gasoline guide');
  });
});

describe('without an ingest server (port taken)', () => {
  it('still answers, and every tool says what to do', async () => {
    const config = loadConfig({ env: {}, flags: { state_dir: stateDir, port: 7890 } });
    const mcp = createToolServer({ config, port: offlinePort(config, 'port 7890 on 127.0.0.1 is already in use'), clientId: 'np' }).mcp;
    const [a, b] = InMemoryTransport.createLinkedPair();
    await mcp.connect(a);
    const c = new Client({ name: 'np', version: '1' });
    await c.connect(b);
    const r = await call(c, 'observe', { what: 'errors' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('already in use');
    expect(r.text).toContain('GASOLINE_PORT');
    expect(r.text).toMatch(/^no_ingest: no browser data/);
    const cmd = await call(c, 'interact', { action: 'refresh' });
    expect(cmd.isError).toBe(true);
    expect(cmd.text).toMatch(/^no_ingest: no browser commands/);
    expect((await call(c, 'configure', { action: 'health' })).text).toContain('no_ingest');
  });
});
