/**
 * Issue 20, items 2, 4, 6, 7, 9 and 10, through the real MCP tools: a real server (uWS edge →
 * ingest worker → alert ring → main), a WebSocket producer, and the SDK's client asking as an
 * agent would.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createToolServer } from '../../src/mcp/server.js';
import type { App } from '../../src/app.js';
import { batch, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

let server: App;
let producer: Producer;
let seq = 0;
const stateDir = mkdtempSync(join(tmpdir(), 'gasoline-issue20-'));
let sessions = 0;

beforeAll(async () => {
  server = await startTestServer();
  producer = await Producer.connect(server.port);
  await producer.hello('issue-20');
});
afterAll(async () => {
  producer.close();
  await server.close();
  rmSync(stateDir, { recursive: true, force: true });
});

async function agent(): Promise<Client> {
  const config = loadConfig({ env: {}, flags: { state_dir: stateDir, port: server.port } });
  const mcp = createToolServer({ config, port: server.mcp, clientId: `issue20-${++sessions}` }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: 'issue20', version: '1' });
  await client.connect(b);
  return client;
}

/** every text block of an answer */
async function call(c: Client, name: string, args: Record<string, unknown>): Promise<string[]> {
  const r = await c.callTool({ name, arguments: args });
  expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
  return (r.content as Array<{ text: string }>).map((x) => x.text);
}

async function send(records: Record<string, unknown[]>): Promise<void> {
  const s = seq++;
  producer.send(batch(s, records));
  await producer.ackFor(s);
}

/** observe until the alert block holds `needle`; returns the blocks seen */
async function alertBlock(c: Client, needle: string, timeoutMs = 6000): Promise<string> {
  let seen = '';
  return waitFor(`an alert block with ${needle}`, async () => {
    const block = (await call(c, 'observe', { what: 'page' }))[1] ?? '';
    seen += `${block}\n`;
    return seen.includes(needle) ? seen : undefined;
  }, timeoutMs);
}

const consoleLine = (method: string, url: string, status: number, duration: number, statusText = 'Internal Server Error') => ({ ts: Date.now(), level: 'error', type: 'network', message: `${method} ${url} → ${status} ${statusText}`, method, request_url: url, status, status_text: statusText, duration, url: 'http://127.0.0.1:3000/' });
const networkRecord = (method: string, url: string, status: number, duration: number) => ({ ts: Date.now(), method, url, status, duration, page_url: 'http://127.0.0.1:3000/' });

describe('item 9: one failing request, one count', () => {
  it('three failing POST /api/orders → 500, each a console line and a network record, alert ×3', async () => {
    const c = await agent();
    const url = 'https://shop.test/api/orders';
    // as the extension sends them: the console lines at once, the network records after their sizes
    await send({ logs: [0, 1, 2].map((i) => consoleLine('POST', url, 500, 30 + i)) });
    await send({ network: [0, 1, 2].map((i) => networkRecord('POST', url, 500, 30 + i)) });
    const block = await alertBlock(c, 'Server error: POST /api/orders → 500');
    expect(block).toContain('"Server error: POST /api/orders → 500" ×3 —');
    expect(block).not.toMatch(/orders → 500" ×[4-9]/);
    const summary = (await call(c, 'observe', { what: 'summary' }))[0]!;
    expect(summary).toMatch(/failing requests: 3 \(1 endpoints\)/);
  });
});

describe('item 7: a contains match shows what matched', () => {
  it('a failed-request console line found by its message shows that stretch of the message', async () => {
    const c = await agent();
    await send({ logs: [consoleLine('GET', 'https://shop.test/api/pay', 502, 12, 'Bad Gateway from upstream-billing')] });
    const out = (await call(c, 'observe', { what: 'errors', from: 'start', contains: 'upstream-billing' }))[0]!;
    const line = out.split('\n').find((l) => l.includes('/api/pay'))!;
    expect(line).toContain('network GET "https://shop.test/api/pay" → 502');
    expect(line).toMatch(/ message="[^"]*Bad Gateway from upstream-billing"/);
    // the same through the logs view, and not when the line already shows the match
    expect((await call(c, 'observe', { what: 'logs', from: 'start', contains: 'upstream-billing' }))[0]).toContain('upstream-billing');
    const byUrl = (await call(c, 'observe', { what: 'errors', from: 'start', contains: 'shop.test/api/pay' }))[0]!;
    expect(byUrl.split('\n').find((l) => l.includes('/api/pay'))).not.toContain('message=');
  });
});

describe('item 2: alerts over the rate caps surface', () => {
  const flood = (host: string, from: number, n: number) => Array.from({ length: n }, (_, i) => networkRecord('GET', `https://${host}/endpoint-${from + i}x`, 503, 5));

  it('25 failing endpoints on one host: 20 alerts, then a summary alert names the 5 held back, and observe summary counts them', async () => {
    const c = await agent();
    await send({ network: flood('flood-a.test', 0, 25) });
    const blocks = await alertBlock(c, 'more alerts held back over the rate caps');
    expect(blocks).toMatch(/\[warning\] threshold: "\+5 more alerts held back over the rate caps in the last \d+ s" — "\+5 anomaly_detector on flood-a.test/);
    expect((blocks.match(/Server error: GET \/endpoint-\d+x → 503/g) ?? []).length).toBe(20);
    const summary = (await call(c, 'observe', { what: 'summary' }))[0]!;
    expect(summary).toMatch(/alerts held back over the rate caps: 5 since your last summary \(\d+ since start\)/);
    const again = (await call(c, 'observe', { what: 'summary' }))[0]!;
    expect(again).toMatch(/alerts held back over the rate caps: 0 since your last summary/);
    const health = await call(c, 'configure', { action: 'health' });
    expect(health.join('\n')).toMatch(/held_back/);
  });

  it('the next alert of the scope says "+N more … in the last N s"', async () => {
    const c = await agent();
    await send({ network: flood('flood-b.test', 0, 23) });
    // the host's allowance is per second: the next failing endpoint in the next second gets through
    const floodSec = Math.floor(Date.now() / 1000);
    await waitFor('the next second', () => Math.floor(Date.now() / 1000) > floodSec);
    await send({ network: flood('flood-b.test', 100, 1) });
    const blocks = await alertBlock(c, 'Server error: GET /endpoint-100x → 503');
    expect(blocks).toMatch(/\(\+3 more anomaly_detector alerts on flood-b.test held back over the rate caps in the last \d+ s\)/);
  });
});

describe('item 4: CI results through observe', () => {
  it('failing tests and the run link stay readable after the alert was drained; bounded per result', async () => {
    const c = await agent();
    const failures = Array.from({ length: 25 }, (_, i) => ({ name: `checkout › pays with card ${i}`, message: `expected 200, got 500 (${i})` }));
    const body = { status: 'failure', source: 'github-actions', ref: 'refs/heads/main', commit: 'abcdef0123456789', summary: '25 of 310 tests failed', failures, url: 'https://ci.test/runs/42', duration_ms: 61_000 };
    const r = await fetch(`http://127.0.0.1:${server.port}/ci-result`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(r.status).toBe(200);
    const block = await alertBlock(c, 'CI failure');
    expect(block).toContain(String.raw`— observe({what:\"ci\"}) shows the result"`);
    const out = (await call(c, 'observe', { what: 'ci' }))[0]!;
    expect(out).toMatch(/^ci: 1 result kept/);
    expect(out).toContain('failure "github-actions" ref "refs/heads/main" @ abcdef012345');
    expect(out).toContain('summary: "25 of 310 tests failed"');
    expect(out).toContain('failing tests (25):');
    expect(out).toContain('"checkout › pays with card 0" — "expected 200, got 500 (0)"');
    expect(out).not.toContain('pays with card 20"');
    expect(out).toContain('+5 more failing tests');
    expect(out).toContain('run: "https://ci.test/runs/42"');
    const small = (await call(c, 'observe', { what: 'ci', budget: 1000 }))[0]!;
    expect(small.length).toBeLessThanOrEqual(1000);
  });
});

describe('item 6: WebSocket tracking lets the oldest go, and says so', () => {
  it('websocket_status counts the connections the extension stopped following', async () => {
    const c = await agent();
    const opens = Array.from({ length: 21 }, (_, i) => ({ ts: Date.now(), event: 'open', id: `churn-${i}`, url: `wss://live.test/s${i}` }));
    await send({ ws_events: [...opens, { ts: Date.now(), event: 'untracked', id: 'churn-0', url: 'wss://live.test/s0', reason: 'more than 20 open connections: only the newest 20 are followed' }] });
    const out = (await call(c, 'observe', { what: 'websocket_status' }))[0]!;
    expect(out).toMatch(/^websocket_status: \d+ connections \(\d+ open; 1 no longer followed: the extension follows the newest 20 open connections/);
    expect(out).toMatch(/"churn-0" untracked "wss:\/\/live.test\/s0"/);
  });
});

describe('item 10: what the agent and the user are told', () => {
  it('configure lists all its actions in few characters; the guide has the depth', async () => {
    const c = await agent();
    const tools = (await c.listTools()).tools;
    const configure = tools.find((t) => t.name === 'configure')!;
    const actions = (configure.inputSchema.properties as Record<string, { enum: string[] }>).action!.enum;
    // 10 since issue 21 items 4 (source_maps) and 5 (export_har)
    expect(actions).toHaveLength(10);
    for (const a of actions) expect(configure.description).toContain(a);
    const guide = ((await c.readResource({ uri: 'gasoline://guide' })).contents[0] as { text: string }).text;
    expect(guide).toContain('- redaction — redaction_action list|add|remove|test');
    expect(guide).toContain('| ci (the CI results kept');
    expect(guide).toContain('- source_maps — value "on" | "off"');
  });

  it('--help and README name GASOLINE_ALLOWED_ORIGINS and which modes exit 3 on a taken port', () => {
    const help = spawnSync(process.execPath, [join(__dirname, '../../bin/gasoline'), '--help'], { encoding: 'utf8', timeout: 10_000 });
    expect(help.stdout).toBe('');
    expect(help.stderr).toContain('GASOLINE_ALLOWED_ORIGINS');
    expect(help.stderr).toContain('3 port in use (--server only');
    const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
    expect(readme).toContain('`GASOLINE_ALLOWED_ORIGINS`');
    expect(readme).toContain('A taken port exits 3 in `--server` only');
  });
});
