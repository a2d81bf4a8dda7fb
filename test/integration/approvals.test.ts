/**
 * Approvals through the real tools (issue 19 items 3 and 4): MCP SDK clients — in memory and a
 * bridge's streamable HTTP session on /mcp — on a real app with the product's default policy
 * (ask), and a scripted extension (a real WebSocket producer with the extension's Origin) that
 * answers the `approval_request` command as a user would: approve, deny, approve for N minutes,
 * or not in time (then the agent gets approval_required and polls with approval_id).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { TEST_PAIRING_KEY } from '../helpers/pairing-key.js';
import { waitFor } from '../helpers/wait-for.js';

let server: App;
const stateDir = mkdtempSync(join(tmpdir(), 'gasoline-approvals-'));
const open: Producer[] = [];
const agent = (clientId: string, waitMs = 3000): Promise<Client> => connectAgent(server, stateDir, clientId, { commands: { wait_ms: waitMs } });

async function extension(): Promise<Producer> {
  const p = await Producer.connect(server.port, { origin: EXTENSION_ORIGIN });
  // the user's paired extension: only a producer that proves the pairing key may decide
  await p.hello(`ext-${Math.random().toString(36).slice(2)}`, { client: 'extension', key: TEST_PAIRING_KEY });
  open.push(p);
  return p;
}
const cmds = (p: Producer, type: string): ServerFrame[] => p.frames.filter((f) => f.t === 'cmd' && f.type === type);
const nextCmd = (p: Producer, type: string, n: number): Promise<ServerFrame> => waitFor(`${type} #${n}`, () => cmds(p, type)[n]);
const decide = (p: Producer, cmd: ServerFrame, result: Record<string, unknown>): void => p.send({ t: 'result', id: cmd.id, status: 'complete', result });
const done = (p: Producer, cmd: ServerFrame, action = 'click'): void => p.send({ t: 'result', id: cmd.id, status: 'complete', result: { action, url: 'http://127.0.0.1:3000/', title: 'App', detail: 'clicked button' } });
const idOf = (text: string): string => /approval_id=(ap[0-9a-f]{16})/.exec(text)![1]!;

beforeAll(async () => {
  // the product default (ask) is what the helper's allow is overridden back to
  server = await startTestServer({ state_dir: stateDir, approvals: { policy: { mutating: 'ask', destructive: 'ask' }, token_ttl_ms: 1000 } }, { mcpHttp: true });
});
afterEach(async () => {
  for (const p of open.splice(0)) {
    p.close();
    await p.closed().catch(() => undefined);
  }
  await waitFor('no extension left', () => server.ws.commandTarget() === null);
});
afterAll(async () => {
  await server.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('approvals', () => {
  it('approve: the user sees action, target, tab and client (never the typed text), then the action runs on the approved tab', async () => {
    const ext = await extension();
    const c = await agent('appr-a');
    const pending = callTool(c, 'interact', { action: 'type', selector: '#pw', text: 'hunter2-secret' });
    const ask = await nextCmd(ext, 'approval_request', 0);
    expect(ask.params).toMatchObject({ action: 'interact type', class: 'mutating', target: { selector: '#pw', text_length: 14 }, client: 'appr-a', client_name: 'appr-a 1', in_page: true });
    expect(JSON.stringify(ask)).not.toContain('hunter2');
    expect(cmds(ext, 'interact')).toHaveLength(0);
    decide(ext, ask, { decision: 'approve', tab_id: 5 });
    const run = await nextCmd(ext, 'interact', 0);
    // the tab the user approved on, although the call named none
    expect(run).toMatchObject({ params: { action: 'type', selector: '#pw', text: 'hunter2-secret' }, tab_id: 5 });
    expect(run.params).not.toHaveProperty('approval_id');
    done(ext, run, 'type');
    const r = await pending;
    expect(r.isError).toBe(false);
    expect(r.text).toContain('interact type: done');
  });

  it('deny: approval_denied, and nothing reaches the page', async () => {
    const ext = await extension();
    const c = await agent('appr-b');
    const pending = callTool(c, 'interact', { action: 'click', selector: '#delete', tab_id: 3 });
    const ask = await nextCmd(ext, 'approval_request', 0);
    expect(ask.tab_id).toBe(3);
    decide(ext, ask, { decision: 'deny' });
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^approval_denied: the user denied interact click/);
    expect(cmds(ext, 'interact')).toHaveLength(0);
  });

  it('no decision in time: approval_required with an id; polling waits again, a late approval runs once, a replay is refused', async () => {
    const ext = await extension();
    const c = await agent('appr-c', 300);
    const args = { action: 'navigate', url: 'http://127.0.0.1:3000/next', tab_id: 2 };
    const first = await callTool(c, 'interact', args);
    expect(first.isError).toBe(true);
    expect(first.text).toMatch(/^approval_required: interact navigate waits for the user's approval/);
    const id = idOf(first.text);
    expect(first.text).toContain(`approval_id:"${id}"`);
    // the same call again without the id does not ask the user a second time
    expect(idOf((await callTool(c, 'interact', args)).text)).toBe(id);
    expect(cmds(ext, 'approval_request')).toHaveLength(1);
    // still undecided
    expect((await callTool(c, 'interact', { ...args, approval_id: id })).text).toMatch(/^approval_required/);
    decide(ext, cmds(ext, 'approval_request')[0]!, { decision: 'approve', tab_id: 2 });
    await waitFor('decided', () => server.mcp.approvals?.get(id)?.state === 'approved');
    // another call's arguments do not fit this approval
    const wrong = await callTool(c, 'interact', { ...args, url: 'http://127.0.0.1:3000/other', approval_id: id });
    expect(wrong.text).toMatch(/^approval_scope/);
    const poll = callTool(c, 'interact', { ...args, approval_id: id });
    done(ext, await nextCmd(ext, 'interact', 0), 'navigate');
    expect((await poll).isError).toBe(false);
    const again = await callTool(c, 'interact', { ...args, approval_id: id });
    expect(again.text).toMatch(/^approval_replayed/);
    expect(cmds(ext, 'interact')).toHaveLength(1);
  });

  it('an approval not used within its token lifetime expires', async () => {
    const ext = await extension();
    const c = await agent('appr-d', 200);
    const args = { action: 'refresh', tab_id: 9 };
    const id = idOf((await callTool(c, 'interact', args)).text);
    decide(ext, cmds(ext, 'approval_request')[0]!, { decision: 'approve', tab_id: 9 });
    await waitFor('decided', () => server.mcp.approvals?.get(id)?.state === 'approved');
    const t = server.mcp.approvals!.get(id)!.tokenExpiresAt;
    await waitFor('token lifetime over', () => Date.now() >= t, 5000);
    expect((await callTool(c, 'interact', { ...args, approval_id: id })).text).toMatch(/^approval_expired/);
    // an id nobody issued
    expect((await callTool(c, 'interact', { ...args, approval_id: 'ap0123456789abcdef' })).text).toMatch(/^approval_unknown/);
  });

  it('approve for N minutes: later calls of that action on that tab run without asking; another tab asks', async () => {
    const ext = await extension();
    const c = await agent('appr-e');
    const first = callTool(c, 'interact', { action: 'click', selector: '#a', tab_id: 4 });
    decide(ext, await nextCmd(ext, 'approval_request', 0), { decision: 'approve_window', minutes: 15, tab_id: 4 });
    done(ext, await nextCmd(ext, 'interact', 0));
    expect((await first).isError).toBe(false);
    const second = callTool(c, 'interact', { action: 'click', selector: '#b' });
    const run = await nextCmd(ext, 'interact', 1);
    expect(run).toMatchObject({ tab_id: 4, params: { selector: '#b' } });
    done(ext, run);
    expect((await second).isError).toBe(false);
    expect(cmds(ext, 'approval_request')).toHaveLength(1);
    const health = server.health() as { approvals: { windows: Array<Record<string, unknown>> } };
    expect(health.approvals.windows).toEqual([expect.objectContaining({ client_id: 'appr-e', action: 'interact click', tab: 4 })]);
    // another client is not covered by this client's window
    const other = await agent('appr-e2', 200);
    expect((await callTool(other, 'interact', { action: 'click', selector: '#b', tab_id: 4 })).text).toMatch(/^approval_required/);
  });

  it('the master switch still rules: agent control off refuses at once, without asking', async () => {
    const ext = await extension();
    const c = await agent('appr-f');
    const pending = callTool(c, 'interact', { action: 'click', selector: '#x' });
    const ask = await nextCmd(ext, 'approval_request', 0);
    ext.send({ t: 'result', id: ask.id, status: 'error', error: 'agent_control_off: agent control is off in the Gasoline extension.' });
    expect((await pending).text).toMatch(/^agent_control_off: agent control is off/);
  });

  it('destructive configure actions ask too; read-only ones never do', async () => {
    const ext = await extension();
    const c = await agent('appr-g');
    expect((await callTool(c, 'configure', { action: 'clear' })).isError).toBe(false);
    expect((await callTool(c, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: 'mine only' })).isError).toBe(false);
    const wait = callTool(c, 'interact', { action: 'wait_for', selector: '#x', tab_id: 1 });
    done(ext, await nextCmd(ext, 'interact', 0), 'wait_for');
    expect((await wait).isError).toBe(false);
    expect(cmds(ext, 'approval_request')).toHaveLength(0);
    const clear = callTool(c, 'configure', { action: 'clear', scope: 'all' });
    const ask = await nextCmd(ext, 'approval_request', 0);
    expect(ask.params).toMatchObject({ action: 'configure clear scope:all', class: 'destructive', in_page: false });
    decide(ext, ask, { decision: 'approve' });
    expect((await clear).text).toContain('DESTRUCTIVE: emptied the shared buffers');
  });

  it('a decision from a producer that is not the extension is never asked for, and without one nothing runs', async () => {
    const c = await agent('appr-h');
    const r = await callTool(c, 'interact', { action: 'click', selector: '#x' });
    expect(r.text).toMatch(/^no_extension: interact click is mutating and needs the user's approval in the browser/);
    // an impostor without our Origin gets no approval request to answer
    const impostor = await Producer.connect(server.port, { origin: 'http://evil.example' }).catch(() => null);
    if (impostor) {
      open.push(impostor);
      await impostor.hello('imp', { client: 'extension' }).catch(() => undefined);
      expect((await callTool(c, 'interact', { action: 'click', selector: '#x' })).text).toMatch(/^(extension_unverified|no_extension)/);
      expect(impostor.frames.filter((f) => f.t === 'cmd')).toHaveLength(0);
    }
  });
});

describe('sessions', () => {
  it('a result that arrives after its session is gone is handed to the next session of that client, once, by cursor', async () => {
    const ext = await extension();
    const first = await agent('resume-a', 200);
    // read-only: no approval; the extension answers only after the asker stopped waiting and left
    const r = await callTool(first, 'analyze', { target: 'page_info', tab_id: 1 });
    expect(r.text).toMatch(/page_info still running/);
    await first.close();
    const cmd = await nextCmd(ext, 'page_info', 0);
    ext.send({ t: 'result', id: cmd.id, status: 'complete', result: { url: 'http://127.0.0.1:3000/', title: 'Resumed', viewport: { width: 1, height: 1 }, scroll: { x: 0, y: 0 }, document_height: 1, forms: [], headings: [], counts: { links: 0, images: 0, interactive: 0, forms: 0 } } });
    await waitFor('answered', () => server.commands.unseen('resume-a').length === 1);
    const again = await agent('resume-a');
    const told = await callTool(again, 'configure', { action: 'health' });
    expect(told.text).toContain(`1 command result finished for you that no call has shown (page_info ${cmd.id})`);
    // said once, not on every call
    expect((await callTool(again, 'configure', { action: 'tab_filter' })).text).not.toContain('finished for you');
    const got = await callTool(again, 'observe', { what: 'command_result' });
    expect(got.text).toContain('"Resumed"');
    expect((await callTool(again, 'observe', { what: 'command_result' })).text).toContain('no command results waiting for you');
    // another client is never handed it
    expect(server.commands.unseen('resume-b')).toEqual([]);
  });

  it('lists every MCP session with transport, client, name and state; a closed one stays listed as closed', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${server.token}`, 'x-gasoline-client': 'sess-bridge' } } });
    const bridge = new Client({ name: 'claude-code', version: '2.1' });
    await bridge.connect(transport);
    const inMem = await agent('sess-stdio');
    await callTool(inMem, 'observe', { what: 'summary' });
    const list = (): Array<Record<string, unknown>> => (server.health() as { mcp_sessions: Array<Record<string, unknown>> }).mcp_sessions;
    const mine = list().find((s) => s.client_id === 'sess-bridge')!;
    expect(mine).toMatchObject({ transport: 'bridge', client_name: 'claude-code 2.1', state: 'ready' });
    expect(String(mine.tag)).toBe(transport.sessionId!.slice(0, 8));
    expect(list().find((s) => s.client_id === 'sess-stdio')).toMatchObject({ transport: 'stdio', state: 'ready' });
    await transport.terminateSession();
    await bridge.close();
    await waitFor('closed', () => list().find((s) => s.client_id === 'sess-bridge')?.state === 'closed');
    // a lost session is an explicit re-initialise: an unknown Mcp-Session-Id is the SDK's 404
    const res = await fetch(`http://127.0.0.1:${server.port}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'mcp-session-id': transport.sessionId ?? 'gone', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(res.status).toBe(404);
  });
});
