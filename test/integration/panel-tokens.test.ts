/**
 * The side panel's /mcp tokens (issue 19 item 2, PROTOCOL.md "Panel tokens"), end to end on a real
 * app: asked for over a real /ws producer, used by the real SDK client over streamable HTTP.
 * Only a producer that proved the pairing key gets one; a bad ask gets an error frame and loses
 * nothing else; a token that expired or was revoked (its socket closed, or a fifth replaced it)
 * opens nothing and ends the session it held; a bridge's session and a panel's do not take each
 * other's tokens; a standalone's /mcp door takes panel tokens only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { callTool } from '../helpers/mcp-agent.js';
import { batch, logRecord, Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer, TEST_PAIRING_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { runGasolineAsync } from '../helpers/bridge.js';
import { tempStateDir } from '../helpers/state-dir.js';

const apps: App[] = [];
const producers: Producer[] = [];
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const p of producers.splice(0)) p.close();
  for (const a of apps.splice(0)) await a.close();
});

async function app(opts: Parameters<typeof startTestServer>[1] = { mcpHttp: true }): Promise<App> {
  const a = await startTestServer({}, opts);
  apps.push(a);
  return a;
}

async function producer(a: App, paired: boolean, origin?: string): Promise<Producer> {
  const p = await Producer.connect(a.port, origin ? { origin } : {});
  producers.push(p);
  await p.hello(`panel-${producers.length}`, paired ? { client: 'extension', key: TEST_PAIRING_KEY } : { client: 'extension' });
  return p;
}

let asks = 0;
async function ask(p: Producer): Promise<ServerFrame> {
  const id = `ask-${++asks}`;
  p.send({ t: 'panel_token', id });
  return p.next((f) => f.t === 'panel_token' && f.id === id);
}

async function token(p: Producer): Promise<string> {
  const f = await ask(p);
  expect(f.ok).toBe(true);
  return f.token as string;
}

function post(a: App, auth: string, body: unknown, sid?: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${a.port}/mcp`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid } : {}) },
    body: JSON.stringify(body),
  });
}
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-panel', version: '1' } } };
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };

async function rawSession(a: App, auth: string): Promise<string> {
  const r = await post(a, auth, INIT);
  expect(r.status).toBe(200);
  await r.body?.cancel();
  const sid = r.headers.get('mcp-session-id')!;
  const ok = await post(a, auth, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
  expect(ok.status).toBe(202);
  return sid;
}

async function panel(a: App, tok: string, clientId?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const headers: Record<string, string> = { authorization: `Bearer ${tok}` };
  if (clientId) headers['x-gasoline-client'] = clientId;
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${a.port}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'gasoline-panel', version: '0.1' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const sessionsOf = (a: App): Array<{ tag: string; transport: string; client_id: string; client_name: string | null; state: string }> => a.health().mcp_sessions as never;

describe('panel tokens over /ws', () => {
  it('a verified producer gets a token of the contract\'s shape; the panel session is transport panel in the table', async () => {
    const a = await app();
    const p = await producer(a, true, EXTENSION_ORIGIN);
    const before = Date.now();
    const f = await ask(p);
    expect(f).toMatchObject({ t: 'panel_token', ok: true, path: '/mcp' });
    expect(f.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(f.expires_at as number).toBeGreaterThanOrEqual(before + 15 * 60_000 - 1000);
    expect(f.expires_at as number).toBeLessThanOrEqual(Date.now() + 15 * 60_000);

    p.send(batch(0, { logs: [logRecord(1, { message: 'seen by the panel' })] }));
    await p.ackFor(0);
    const { client, transport } = await panel(a, f.token as string);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['analyze', 'configure', 'interact', 'observe']);
    expect((await callTool(client, 'observe', { what: 'logs' })).text).toContain('seen by the panel');
    const row = sessionsOf(a).find((s) => s.tag === transport.sessionId!.slice(0, 8));
    expect(row).toMatchObject({ transport: 'panel', client_id: 'panel', client_name: 'gasoline-panel 0.1', state: 'ready' });
    expect((a.health().mcp_http as { list: Array<{ kind: string }> }).list).toEqual([expect.objectContaining({ kind: 'panel', client_id: 'panel' })]);
    expect(a.health().panel_tokens).toMatchObject({ live: 1, issued: 1 });
    // the health report never carries a token
    expect(JSON.stringify(a.health())).not.toContain(f.token as string);
  });

  it('an unverified producer (no pairing proof, even with our Origin) is refused: panel_unverified', async () => {
    const a = await app();
    const p = await producer(a, false, EXTENSION_ORIGIN);
    const f = await ask(p);
    expect(f).toMatchObject({ t: 'panel_token', ok: false, error: 'panel_unverified' });
    expect(f.token).toBeUndefined();
    expect(String(f.message)).toContain('gasoline pair');
    expect(a.health().panel_tokens).toMatchObject({ live: 0, issued: 0 });
    // the connection goes on
    p.send(batch(0, { logs: [logRecord(1)] }));
    await p.ackFor(0);
  });

  it('a malformed ask gets the usual error frame and the connection loses nothing else', async () => {
    const a = await app();
    const p = await producer(a, true);
    p.send({ t: 'panel_token', id: '' });
    const e1 = await p.next((f) => f.t === 'error');
    expect(e1).toMatchObject({ code: 'invalid_frame' });
    p.send({ t: 'panel_token', id: 'x'.repeat(65) });
    await p.next((f) => f.t === 'error' && f !== e1);
    p.send({ t: 'panel_token' });
    p.send(batch(0, { logs: [logRecord(1)] }));
    await p.ackFor(0);
    expect(await token(p)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.closeCode).toBeUndefined();
  });
});

describe('panel tokens on /mcp', () => {
  it('garbage, a bridge token on a panel session and a panel token on a bridge session are all 401', async () => {
    const a = await app();
    const p = await producer(a, true);
    const tok = await token(p);
    for (const bad of [`Bearer ${'A'.repeat(43)}`, `Bearer ${tok}x`, tok, '']) {
      const r = await post(a, bad, INIT);
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: 'unauthorized', message: 'missing or wrong bearer token' });
    }
    const panelSid = await rawSession(a, `Bearer ${tok}`);
    const bridgeSid = await rawSession(a, `Bearer ${a.token}`);
    expect((await post(a, `Bearer ${a.token}`, LIST, panelSid)).status).toBe(401);
    expect((await post(a, `Bearer ${tok}`, LIST, bridgeSid)).status).toBe(401);
    // neither refusal ended the session it was aimed at
    const ok = await post(a, `Bearer ${tok}`, LIST, panelSid);
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
    expect(sessionsOf(a).filter((s) => s.state === 'ready').map((s) => s.transport).sort()).toEqual(['bridge', 'panel']);
  });

  it('a token of the same connection renews the session; one of another connection does not', async () => {
    const a = await app();
    const p = await producer(a, true);
    const q = await producer(a, true);
    const sid = await rawSession(a, `Bearer ${await token(p)}`);
    const renewed = await post(a, `Bearer ${await token(p)}`, LIST, sid);
    expect(renewed.status).toBe(200);
    await renewed.body?.cancel();
    expect((await post(a, `Bearer ${await token(q)}`, LIST, sid)).status).toBe(401);
  });

  it('an expired token is 401 and its session closes', async () => {
    // long enough for the panel's initialize and initialized on a loaded machine (400 ms was not: the
    // token expired between them under the whole suite), short enough to wait out
    const a = await app({ mcpHttp: true, panelTokenTtlMs: 1500 });
    const p = await producer(a, true);
    const tok = await token(p);
    const { transport } = await panel(a, tok);
    const tag = transport.sessionId!.slice(0, 8);
    await waitFor('the token expired', () => (a.health().panel_tokens as { live: number }).live === 0, 5000);
    const r = await post(a, `Bearer ${tok}`, LIST, transport.sessionId!);
    expect(r.status).toBe(401);
    await waitFor('the session closed', () => sessionsOf(a).find((s) => s.tag === tag)?.state === 'closed', 5000);
    expect(a.mcpHttp!.size).toBe(0);
    // and it opens no new one
    expect((await post(a, `Bearer ${tok}`, INIT)).status).toBe(401);
  });

  it('an expired token ends its session at the expiry, with no request, /health read or issue to notice it', async () => {
    const a = await app({ mcpHttp: true, panelTokenTtlMs: 1500 });
    const p = await producer(a, true);
    await rawSession(a, `Bearer ${await token(p)}`);
    expect(a.mcpHttp!.size).toBe(1);
    // mcpHttp.size reads the table only: nothing here sweeps the tokens
    await waitFor('the session closed at its token\'s expiry', () => a.mcpHttp!.size === 0, 6000);
  });

  it('an older token on a later request does not take the session back to the older grant', async () => {
    const a = await app();
    const p = await producer(a, true);
    const first = await token(p);
    const sid = await rawSession(a, `Bearer ${first}`);
    // the panel renews: the session moves to the newer grant
    await new Promise((r) => setTimeout(r, 5));
    const second = await token(p);
    const renewed = await post(a, `Bearer ${second}`, LIST, sid);
    expect(renewed.status).toBe(200);
    await renewed.body?.cancel();
    // a request still in flight with the old token: answered, but the session keeps the newer grant
    const stale = await post(a, `Bearer ${first}`, LIST, sid);
    expect(stale.status).toBe(200);
    await stale.body?.cancel();
    // three more asks: the oldest (first) is replaced; the session, on the second, stays
    for (let i = 0; i < 3; i++) await token(p);
    expect(a.health().panel_tokens).toMatchObject({ live: 4, revoked: 1 });
    const after = await post(a, `Bearer ${second}`, LIST, sid);
    expect(after.status).toBe(200);
    await after.body?.cancel();
    expect(a.mcpHttp!.size).toBe(1);
  });

  it('the socket that asked closes: its tokens are revoked and their sessions end', async () => {
    const a = await app();
    const p = await producer(a, true);
    const tok = await token(p);
    const { transport } = await panel(a, tok);
    const tag = transport.sessionId!.slice(0, 8);
    p.close();
    await p.closed();
    await waitFor('the session closed', () => sessionsOf(a).find((s) => s.tag === tag)?.state === 'closed', 5000);
    expect((await post(a, `Bearer ${tok}`, LIST, transport.sessionId!)).status).toBe(401);
    expect((await post(a, `Bearer ${tok}`, INIT)).status).toBe(401);
    expect(a.health().panel_tokens).toMatchObject({ live: 0, revoked: 1 });
  });

  it('a socket that closes right after its ask: the answer is not issued after the revocation (nothing live)', async () => {
    const a = await app();
    const ps = await Promise.all(Array.from({ length: 12 }, () => producer(a, true)));
    for (const p of ps) {
      p.send({ t: 'panel_token', id: 'ask-then-go' });
      p.close();
    }
    await Promise.all(ps.map((p) => p.closed()));
    await waitFor('the server saw every socket close', () => a.ws.producers().length === 0, 5000);
    // a later ask through the same pool, answered: whatever the closed sockets asked is settled by now
    const late = await producer(a, true);
    await token(late);
    await waitFor('the asks settled', () => (a.health().panel_tokens as { issued: number }).issued >= 1, 5000);
    expect(a.health().panel_tokens).toMatchObject({ live: 1 });
    late.close();
    await late.closed();
    await waitFor('the last socket closed', () => (a.health().panel_tokens as { live: number }).live === 0, 5000);
  });

  it('a fifth token revokes the oldest (and the session on it); the other four still open sessions', async () => {
    const a = await app();
    const p = await producer(a, true);
    const first = await token(p);
    const sid = await rawSession(a, `Bearer ${first}`);
    const more = [await token(p), await token(p), await token(p), await token(p)];
    expect(a.health().panel_tokens).toMatchObject({ live: 4, issued: 5, revoked: 1 });
    await waitFor('the oldest token\'s session closed', () => a.mcpHttp!.size === 0, 5000);
    expect((await post(a, `Bearer ${first}`, LIST, sid)).status).toBe(401);
    for (const t of more) {
      const r = await post(a, `Bearer ${t}`, INIT);
      expect(r.status).toBe(200);
      await r.body?.cancel();
    }
  });

  it('a standalone opens /mcp to panel tokens only: no token file, a bearer-shaped guess is 401', async () => {
    const a = await app({ mcpHttp: 'panel' });
    expect(a.token).toBeNull();
    expect((await post(a, `Bearer ${'0'.repeat(64)}`, INIT)).status).toBe(401);
    const p = await producer(a, true);
    const { client } = await panel(a, await token(p), 'my-panel');
    expect((await client.listTools()).tools).toHaveLength(4);
    expect(sessionsOf(a)).toEqual([expect.objectContaining({ transport: 'panel', client_id: 'my-panel' })]);
    expect((a.health().transports as { mcp: unknown }).mcp).toMatchObject({ type: 'stdio', panel: { type: 'streamable-http', path: '/mcp', sessions: 1 } });
  });
});

describe('gasoline --status and doctor see the panel door', () => {
  it('on a standalone: open to panel tokens only; the extension paired and connected', async () => {
    const a = await startTestServer({ mode: 'standalone' }, { mcpHttp: 'panel' });
    apps.push(a);
    await producer(a, true, EXTENSION_ORIGIN);
    const st = await runGasolineAsync(['--status', '--port', String(a.port), '--state-dir', tempStateDir()]);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stderr).toContain('extension: paired and connected (1 producer)');
    expect(st.stderr).toMatch(/browser transport: ok — \/mcp is open to the side panel \(panel tokens only: a --standalone has no bridge token; unauthorized without one\); 0 panel tokens live/);
    expect(st.stderr).toMatch(/redaction policy: loaded: \d+ built-in/);
    const doc = await runGasolineAsync(['doctor', '--port', String(a.port), '--state-dir', tempStateDir()]);
    expect(doc.stderr).toMatch(/\n {2}ok +transport +\/mcp is open to the side panel/);
    expect(doc.stderr).toMatch(/\n {2}ok +pairing +the extension is paired/);
  });
});
