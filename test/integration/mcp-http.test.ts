/**
 * MCP over streamable HTTP on /mcp (bridge ↔ daemon, #16): the real SDK client against a real
 * app, with real producers. Auth, Host/Origin, per-client isolation across sessions, command
 * routing, notifications over the session's SSE stream, bad input, a client that never reads,
 * and Last-Event-ID replay.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { readDaemonToken } from '../../src/daemon/contract.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { callTool } from '../helpers/mcp-agent.js';
import { batch, logRecord, Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer, TEST_PAIRING_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

let server: App;
let stateDir: string;
const clients: Client[] = [];
const producers: Producer[] = [];

const url = (): URL => new URL(`http://127.0.0.1:${server.port}/mcp`);

async function bridge(clientId: string | undefined, onNote?: (n: { level: string; data: any }) => void): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const headers: Record<string, string> = { authorization: `Bearer ${server.token}` };
  if (clientId) headers['x-gasoline-client'] = clientId;
  const transport = new StreamableHTTPClientTransport(url(), { requestInit: { headers } });
  const client = new Client({ name: clientId ?? 'anon', version: '1' });
  if (onNote) client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => onNote(n.params as { level: string; data: any }));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

async function producer(session: string, opts: { origin?: string; client?: string } = {}): Promise<Producer> {
  const p = await Producer.connect(server.port, opts.origin ? { origin: opts.origin } : {});
  await p.hello(session, opts.client ? { client: opts.client, key: TEST_PAIRING_KEY } : {});
  producers.push(p);
  return p;
}

/** a raw HTTP exchange: status, headers and body as text */
function raw(method: string, headers: Record<string, string>, body?: string | Buffer): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port: server.port, path: '/mcp', method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

const auth = (): Record<string, string> => ({ authorization: `Bearer ${server.token}` });
const JSON_POST = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const mcpHealth = (): { sessions: number; list: Array<Record<string, any>> } => server.health().mcp_http as any;

/** A session opened by hand (initialize + initialized), for what the SDK client would hide. */
async function rawSession(clientId: string): Promise<string> {
  const r = await raw('POST', { ...JSON_POST, ...auth(), 'x-gasoline-client': clientId }, INIT);
  expect(r.status).toBe(200);
  const sid = r.headers['mcp-session-id'] as string;
  const ok = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  expect(ok.status).toBe(202);
  return sid;
}

/** GET the session's SSE stream on a bare socket; the caller decides whether it is ever read. */
function rawGet(sid: string, extra: Record<string, string> = {}): Socket {
  const s = connect({ host: '127.0.0.1', port: server.port });
  const lines = [`GET /mcp HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, `Authorization: Bearer ${server.token}`, 'Accept: text/event-stream', `Mcp-Session-Id: ${sid}`, ...Object.entries(extra).map(([k, v]) => `${k}: ${v}`)];
  s.write(`${lines.join('\r\n')}\r\n\r\n`);
  return s;
}

const toolCall = (sid: string, args: Record<string, unknown>): Promise<{ status: number; body: string }> =>
  raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'configure', arguments: args } }));

const note = (i: number, pad = 0): Parameters<NonNullable<ReturnType<NonNullable<App['mcpHttp']>['notifyOf']>>>[0] => ({ method: 'notifications/message', params: { level: 'info', logger: 'gasoline', data: { mark: `m-${i}`, pad: 'x'.repeat(pad) } } });

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'gasoline-mcphttp-'));
  server = await startTestServer({ state_dir: stateDir, commands: { wait_ms: 3000 } }, { mcpHttp: true });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const p of producers.splice(0)) {
    p.close();
    await p.closed().catch(() => undefined);
  }
});
afterAll(async () => {
  await server.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('/mcp: a session per bridge', () => {
  it('writes a 0600 token file and serves tools/list and observe over the session', async () => {
    expect(server.token).toMatch(/^[0-9a-f]{64}$/);
    expect(readDaemonToken(stateDir, server.port)).toBe(server.token);
    const { client, transport } = await bridge('alpha');
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['analyze', 'configure', 'interact', 'observe']);
    const p = await producer('http-1');
    p.send(batch(0, { logs: [logRecord(1, { message: 'seen over http' })] }));
    await p.ackFor(0);
    const r = await callTool(client, 'observe', { what: 'logs' });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('seen over http');
    const h = server.health();
    expect(h.pid).toBe(process.pid);
    expect(h.transports).toMatchObject({ ws: { path: '/ws', producers: 1 }, mcp: { type: 'streamable-http', path: '/mcp', sessions: 1 } });
    expect(mcpHealth().list).toEqual(expect.arrayContaining([expect.objectContaining({ client_id: 'alpha', session: transport.sessionId!.slice(0, 8) })]));
  });
});

describe('/mcp: per-client state across sessions', () => {
  it('three bridges see the same telemetry, each with its own read cursor', async () => {
    const [a, b, c] = await Promise.all([bridge('cur-a'), bridge('cur-b'), bridge('cur-c')]);
    const p = await producer('http-cursors');
    p.send(batch(0, { logs: [logRecord(1, { message: 'first-line' })] }));
    await p.ackFor(0);
    expect((await callTool(a.client, 'observe', { what: 'logs' })).text).toContain('first-line');
    p.send(batch(1, { logs: [logRecord(2, { message: 'second-line' })] }));
    await p.ackFor(1);
    const a2 = (await callTool(a.client, 'observe', { what: 'logs' })).text;
    expect(a2).toContain('second-line');
    expect(a2).not.toContain('first-line');
    for (const x of [b, c]) {
      const t = (await callTool(x.client, 'observe', { what: 'logs' })).text;
      expect(t).toContain('first-line');
      expect(t).toContain('second-line');
    }
  });

  it('two sessions of one client id share checkpoints; another id does not see them', async () => {
    const one = await bridge('shared-id');
    const two = await bridge('shared-id');
    const other = await bridge('other-id');
    expect(one.transport.sessionId).not.toBe(two.transport.sessionId);
    const made = await callTool(one.client, 'configure', { action: 'checkpoint', checkpoint_action: 'create', name: 'cp-shared' });
    expect(made.isError).toBe(false);
    expect((await callTool(two.client, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('cp-shared');
    expect((await callTool(other.client, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).not.toContain('cp-shared');
  });

  it("a command's answer goes only to the session that asked", async () => {
    const ext = await producer(`ext-${Date.now()}`, { origin: EXTENSION_ORIGIN, client: 'extension' });
    const a = await bridge('cmd-a');
    const b = await bridge('cmd-b');
    const cmds = (): ServerFrame[] => ext.frames.filter((f) => f.t === 'cmd');
    const pa = callTool(a.client, 'analyze', { target: 'dom', selector: '#for-a' });
    const pb = callTool(b.client, 'analyze', { target: 'dom', selector: '#for-b' });
    await waitFor('two cmd frames', () => cmds().length >= 2);
    for (const cmd of cmds()) {
      const who = (cmd.params as { selector: string }).selector === '#for-a' ? 'alpha-only' : 'bravo-only';
      ext.send({ t: 'result', id: cmd.id, status: 'complete', result: { url: 'http://127.0.0.1:3000/', title: who, match_count: 1, matches: [{ tag: 'div', id: who, text: who, bbox: { x: 1, y: 1, width: 1, height: 1 }, visible: true }] } });
    }
    const [ra, rb] = await Promise.all([pa, pb]);
    expect(ra.text).toContain('alpha-only');
    expect(ra.text).not.toContain('bravo-only');
    expect(rb.text).toContain('bravo-only');
    expect(rb.text).not.toContain('alpha-only');
  });

  it("B's streaming config does not change A's, and A's notifications arrive over its SSE stream", async () => {
    const got: Array<{ level: string; data: any }> = [];
    const a = await bridge('stream-a', (n) => got.push(n));
    const b = await bridge('stream-b');
    const on = await callTool(b.client, 'configure', { action: 'streaming', streaming_action: 'enable', throttle_seconds: 7 });
    expect(on.isError).toBe(false);
    const statusA = JSON.parse((await callTool(a.client, 'configure', { action: 'streaming', streaming_action: 'status' })).text.split('\n')[0]!);
    expect(statusA.status).toBe('disabled');
    await callTool(a.client, 'configure', { action: 'streaming', streaming_action: 'enable', throttle_seconds: 1 });
    const sid = a.transport.sessionId!.slice(0, 8);
    await waitFor("A's GET stream open", () => mcpHealth().list.find((s) => s.session === sid && s.open_streams > 0));
    const p = await producer('http-stream');
    p.send(batch(0, { network: [{ ts: Date.now(), method: 'GET', url: 'https://api.test/over-sse', status: 500, duration: 5 }] }));
    await p.ackFor(0);
    await waitFor('the push over SSE', () => got.find((n) => JSON.stringify(n.data).includes('/over-sse')));
    expect(got[0]).toMatchObject({ level: 'error' });
  });
});

describe('/mcp: refusals', () => {
  it('401 without the token and with a wrong one, the same fixed body, before anything else', async () => {
    const none = await raw('POST', JSON_POST, INIT);
    const wrong = await raw('POST', { ...JSON_POST, authorization: `Bearer ${'0'.repeat(64)}` }, INIT);
    const withSession = await raw('GET', { accept: 'text/event-stream', 'mcp-session-id': 'whatever', authorization: 'Bearer nope' });
    for (const r of [none, wrong, withSession]) {
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toEqual({ error: 'unauthorized', message: 'missing or wrong bearer token' });
      expect(r.headers['mcp-session-id']).toBeUndefined();
    }
    expect(mcpHealth().list.every((s) => s.client_id !== 'raw')).toBe(true);
  });

  it('403 for a foreign Origin or Host, token or not', async () => {
    const origin = await raw('POST', { ...JSON_POST, ...auth(), origin: 'https://evil.example' }, INIT);
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).error).toBe('origin_refused');
    const host = await raw('POST', { ...JSON_POST, ...auth(), host: `evil.example:${server.port}` }, INIT);
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error).toBe('host_refused');
  });

  it('an invalid client id is a 400 JSON-RPC error', async () => {
    const r = await raw('POST', { ...JSON_POST, ...auth(), 'x-gasoline-client': '../etc' }, INIT);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { error: 'invalid_client_id' } } });
  });

  it('malformed JSON-RPC gets a JSON-RPC error and the session lives; an unknown session gets 404', async () => {
    const { client, transport } = await bridge('bad-input');
    const sid = transport.sessionId!;
    const junk = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, '{"jsonrpc":"2.0","id":');
    expect(junk.status).toBe(400);
    expect(JSON.parse(junk.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    // the body is parsed where the edge read it (sessions.ts) as the SDK would read it: a BOM is dropped
    const bom = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, '\ufeff{"jsonrpc":"2.0","id":7,"method":"tools/list"}');
    expect(bom.status).toBe(200);
    expect(bom.body).toMatch(/"result":\{"tools":\[\{"name":"observe".*"id":7\}/);
    const empty = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, '');
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const notRpc = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, '{"hello":"world"}');
    expect(notRpc.status).toBe(400);
    expect(JSON.parse(notRpc.body).error.code).toBeLessThan(0);
    expect((await client.listTools()).tools).toHaveLength(4);
    const unknown = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
  });

  it('413 for a body over the limit, declared or streamed, without reading it', async () => {
    const declared = await raw('POST', { ...JSON_POST, ...auth(), 'content-length': String(5 * 1024 * 1024) }, undefined).catch((e: Error) => ({ status: -1, body: e.message, headers: {} }));
    expect(declared.status).toBe(413);
    const streamed = await new Promise<number>((resolve, reject) => {
      let req: ClientRequest | undefined;
      req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/mcp', method: 'POST', headers: { ...JSON_POST, ...auth(), 'transfer-encoding': 'chunked' } }, (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req?.destroy();
      });
      req.on('error', (e) => (e.message.includes('EPIPE') || e.message.includes('ECONNRESET') ? undefined : reject(e)));
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < 6 * 1024 * 1024) {
          sent += chunk.length;
          if (!req!.write(chunk)) return void req!.once('drain', pump);
        }
        req!.end();
      };
      pump();
    });
    expect(streamed).toBe(413);
    // the daemon is fine afterwards
    const { client } = await bridge('after-413');
    expect((await client.listTools()).tools).toHaveLength(4);
  });

  it('DELETE ends the session; its id is then unknown', async () => {
    const { client, transport } = await bridge('deleter');
    const sid = transport.sessionId!;
    const before = mcpHealth().sessions;
    await transport.terminateSession();
    expect(mcpHealth().sessions).toBe(before - 1);
    const after = await raw('POST', { ...JSON_POST, ...auth(), 'mcp-session-id': sid }, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    expect(after.status).toBe(404);
    void client;
  });
});

describe('/mcp: a bridge that stops reading', () => {
  it('never stalls the daemon nor grows its memory: the backlog stays bounded, drops are counted and said on the next answer', async () => {
    const sid = await rawSession('never-reads');
    const sock = rawGet(sid);
    sock.pause(); // reads nothing, ever: the kernel buffers fill, then ours would
    const view = () => mcpHealth().list.find((s) => s.session === sid.slice(0, 8))!;
    await waitFor('the GET stream open', () => view()?.open_streams > 0);
    const other = await bridge('keeps-reading');
    const p = await producer('while-stuck');
    const notify = server.mcpHttp!.notifyOf(sid)!;
    const rss0 = process.memoryUsage().rss;
    let refused = 0;
    let maxBacklog = 0;
    // 80 MB offered to a client that reads none of it, in rounds, with the rest of the daemon in use
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 1000; i++) if (!(await notify(note(round * 1000 + i, 4000)))) refused++;
      maxBacklog = Math.max(maxBacklog, view().backlog_bytes);
      p.send(batch(round, { logs: [logRecord(round)] }));
      await p.ackFor(round);
      const t0 = Date.now();
      const h = await fetch(`http://127.0.0.1:${server.port}/health`);
      expect(h.status).toBe(200);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect((await other.client.listTools()).tools).toHaveLength(4);
    }
    expect(refused).toBeGreaterThan(0);
    expect(view().notifications_dropped).toBe(refused);
    // the bound, plus the one event that crossed it
    expect(maxBacklog).toBeLessThanOrEqual(1024 * 1024 + 8 * 1024);
    // kept, it would be 80 MB and more; what remains is garbage not yet collected
    expect(process.memoryUsage().rss - rss0).toBeLessThan(60 * 1024 * 1024);
    const answer = await toolCall(sid, { action: 'streaming', streaming_action: 'status' });
    expect(answer.body).toContain(`${refused} notifications were dropped`);
    const again = await toolCall(sid, { action: 'streaming', streaming_action: 'status' });
    expect(again.body).not.toContain('dropped:');
    expect(again.body).not.toContain('notifications were dropped');
    sock.destroy();
    await waitFor('the stuck stream released', () => view()?.open_streams === 0);
  });
});

describe('/mcp: resumability', () => {
  it('replays what a reconnecting stream missed (Last-Event-ID), and counts what fell out of the bound', async () => {
    const sid = await rawSession('resumer');
    const notify = server.mcpHttp!.notifyOf(sid)!;
    // no GET stream open: every event is only kept for a resume (256 at most)
    for (let i = 1; i <= 300; i++) expect(await notify(note(i))).toBe(true);
    const sock = rawGet(sid, { 'Last-Event-ID': '_GET_stream:250' });
    let text = '';
    sock.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    await waitFor('the replay', () => text.includes('"m-300"'));
    const ids = [...text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => `_GET_stream:${251 + i}`));
    expect(text).not.toContain('"m-250"');
    sock.destroy();
    // from an id whose successors were evicted: what is left comes, the rest is counted
    const late = rawGet(sid, { 'Last-Event-ID': '_GET_stream:10' });
    let lateText = '';
    late.on('data', (c: Buffer) => {
      lateText += c.toString('utf8');
    });
    await waitFor('the late replay', () => lateText.includes('"m-300"'));
    expect(lateText).toContain('"m-45"');
    expect(lateText).not.toContain('"m-44"');
    late.destroy();
    const view = mcpHealth().list.find((s) => s.session === sid.slice(0, 8))!;
    expect(view.replay_missed).toBe(34);
    expect((await toolCall(sid, { action: 'streaming', streaming_action: 'status' })).body).toContain('34 pushed events were gone before the stream reconnected');
  });
});

describe('/mcp: bounds on sessions', () => {
  let small: App;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gasoline-mcphttp-small-'));
    small = await startTestServer({ state_dir: dir }, { mcpHttp: true, mcpHttpLimits: { maxSessions: 2, idleMs: 300 } });
  });
  afterAll(async () => {
    await small.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a session over the cap with a typed error, closes idle ones, and app.close() ends the rest', async () => {
    const open = async (): Promise<Client> => {
      const t = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${small.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${small.token}` } } });
      const c = new Client({ name: 'cap', version: '1' });
      await c.connect(t);
      return c;
    };
    const a = await open();
    const b = await open();
    await expect(open()).rejects.toThrow(/mcp_sessions_full/);
    const h = small.health().mcp_http as { sessions: number; list: Array<{ client_id: string }> };
    expect(h.sessions).toBe(2);
    // no header: a random id each
    expect(new Set(h.list.map((s) => s.client_id)).size).toBe(2);
    expect(h.list.every((s) => /^anon-[0-9a-f]{12}$/.test(s.client_id))).toBe(true);
    // both hold their GET stream open; closing one client's transport frees it, and it is reaped once idle
    await a.close();
    await waitFor('the idle session reaped', () => (small.health().mcp_http as { sessions: number }).sessions === 1, 5000);
    const c = await open();
    expect((await c.listTools()).tools).toHaveLength(4);
    await small.close();
    expect((small.health().mcp_http as { sessions: number }).sessions).toBe(0);
    await b.close().catch(() => undefined);
    await c.close().catch(() => undefined);
  });
});
