/**
 * On-demand commands through the real server and MCP tools, with a scripted extension (a real
 * WebSocket producer that says client "extension" and answers `cmd` frames as told). The browser
 * half is proven in test/e2e/commands.test.ts; here every failure path is driven on purpose.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer, TEST_PAIRING_KEY } from '../helpers/server.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempStateDir } from '../helpers/state-dir.js';

let server: App;
const stateDir = tempStateDir('gasoline-cmd-');
const open: Producer[] = [];

const agent = (clientId: string, waitMs = 3000): Promise<Client> => connectAgent(server, stateDir, clientId, { commands: { wait_ms: waitMs } });
const call = callTool;

async function extension(): Promise<Producer> {
  const p = await Producer.connect(server.port, { origin: EXTENSION_ORIGIN });
  await p.hello(`ext-${Math.random().toString(36).slice(2)}`, { client: 'extension', key: TEST_PAIRING_KEY });
  open.push(p);
  return p;
}

const cmds = (p: Producer): ServerFrame[] => p.frames.filter((f) => f.t === 'cmd');
const nextCmd = (p: Producer, n: number): Promise<ServerFrame> => waitFor(`cmd #${n}`, () => cmds(p)[n]);

const DOM = { url: 'http://127.0.0.1:3000/', title: 'App', match_count: 1, matches: [{ tag: 'button', id: 'save', text: 'Save', bbox: { x: 1, y: 2, width: 30, height: 10 }, visible: true }] };

beforeAll(async () => {
  server = await startTestServer();
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
});

describe('commands', () => {
  it('fails at once, saying what to do, when no extension is connected', async () => {
    const c = await agent('none');
    const before = server.commands.stats;
    const sent = before.sent;
    const refused = before.failed.no_extension ?? 0;
    const r = await call(c, 'analyze', { target: 'dom', selector: 'button' });
    // "at once" (COMMANDS.md) as the router does it: refused before anything is sent, so nothing
    // waits for an answer. This replaces a 500 ms wall-clock bound around the whole call, which a
    // loaded machine could miss while the server kept its promise.
    expect(server.commands.stats.sent).toBe(sent);
    expect(server.commands.stats.failed.no_extension).toBe(refused + 1);
    expect(server.commands.pendingCount).toBe(0);
    expect(r.isError).toBe(true);
    expect(r.text).toContain('no_extension: no extension connected: open Chrome with the Gasoline extension and track a tab (popup)');
  });

  it('sends a validated cmd frame and answers with the formatted, redacted result', async () => {
    const ext = await extension();
    const c = await agent('a');
    const pending = call(c, 'analyze', { target: 'dom', selector: '#save', include_styles: true, tab_id: 4 });
    const cmd = await nextCmd(ext, 0);
    expect(cmd).toMatchObject({ type: 'dom_query', params: { selector: '#save', include_styles: true }, tab_id: 4, deadline_ms: 10_000 });
    const secret = `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`;
    ext.send({ t: 'result', id: cmd.id, status: 'complete', result: { ...DOM, matches: [{ ...DOM.matches[0], text: `token ${secret}` }] } });
    const r = await pending;
    expect(r.isError).toBe(false);
    expect(r.text).toContain('dom: 1 matched, 1 shown');
    expect(r.text).toContain('"button#save" visible box=1,2 30×10');
    expect(r.text).not.toContain(secret);
  });

  it('refuses bad parameters before anything is sent', async () => {
    const ext = await extension();
    const c = await agent('p');
    const r = await call(c, 'interact', { action: 'click' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('invalid_params: interact: selector: click needs selector');
    const nav = await call(c, 'interact', { action: 'navigate', url: 'javascript:alert(1)' });
    expect(nav.text).toContain('navigate only to http(s) URLs');
    expect(cmds(ext)).toHaveLength(0);
  });

  it('routes a long-running answer only to the client that asked, by query id', async () => {
    const ext = await extension();
    const a = await agent('owner', 300);
    const b = await agent('other', 300);
    const first = await call(a, 'analyze', { target: 'accessibility' });
    expect(first.isError).toBe(false);
    const id = /query_id=(q[0-9a-f]+)/.exec(first.text)![1]!;
    expect(first.text).toContain(`observe({what:"command_result", query_id:"${id}"})`);
    expect((await call(a, 'observe', { what: 'command_result', query_id: id })).text).toContain('still running');
    const cmd = await nextCmd(ext, 0);
    expect(cmd).toMatchObject({ id, type: 'a11y_audit', deadline_ms: 30_000 });
    ext.send({
      t: 'result',
      id,
      status: 'complete',
      result: {
        url: 'http://127.0.0.1:3000/',
        engine: 'axe-core 4.14.1',
        violations: [
          { id: 'image-alt', impact: 'critical', help: 'Images must have alternative text', node_count: 1, nodes: [{ selector: 'img', html: '<img src="/pixel.png">', failure_summary: 'Fix any of the following: Element does not have an alt attribute' }] },
          { id: 'color-contrast', impact: 'serious', help: 'Elements must meet minimum color contrast ratio thresholds', node_count: 1, nodes: [{ selector: '.low-contrast', html: '<p class="low-contrast">', failure_summary: 'Fix any of the following: insufficient contrast' }] },
        ],
      },
    });
    await waitFor('answer kept', () => server.commands.get('owner', id)?.outcome);
    const theirs = await call(b, 'observe', { what: 'command_result', query_id: id });
    expect(theirs.isError).toBe(true);
    expect(theirs.text).toContain('unknown_query');
    const mine = await call(a, 'observe', { what: 'command_result', query_id: id });
    expect(mine.isError).toBe(false);
    expect(mine.text).toMatch(/accessibility: 2 rules violated on 2 elements[\s\S]*## critical \(1\)\n- image-alt[\s\S]*## serious \(1\)\n- color-contrast/);
  });

  it('renders an audit compactly: WCAG tags, the fix once, three targets, the rule counts; an older shape still reads', async () => {
    const ext = await extension();
    const c = await agent('a11y');
    const node = (i: number, summary = 'Element has insufficient color contrast of 2.1') => ({ selector: `.muted:nth-of-type(${i})`, html: `<p class="muted">${i}</p>`, failure_summary: summary });
    const pending = call(c, 'analyze', { target: 'accessibility' });
    const cmd = await nextCmd(ext, 0);
    ext.send({
      t: 'result',
      id: cmd.id,
      status: 'complete',
      result: {
        url: 'http://127.0.0.1:3000/',
        engine: 'axe-core 4.14.1',
        violations: [
          { id: 'color-contrast', impact: 'serious', help: 'Elements must meet minimum color contrast ratio thresholds', help_url: 'https://dequeuniversity.com/rules/axe/4.14/color-contrast', tags: ['wcag2aa', 'wcag143'], fix: 'Element has insufficient color contrast of 2.1', node_count: 7, nodes: [node(1), node(2, 'Element has insufficient color contrast of 1.4'), node(3), node(4), node(5)] },
        ],
        incomplete: 2,
        counts: { passes: 31, incomplete: 2, inapplicable: 55 },
      },
    });
    const r = await pending;
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('## serious (1)\n- color-contrast [wcag2aa wcag143]: "Elements must meet minimum color contrast ratio thresholds" — 7 elements\n    fix: "Element has insufficient color contrast of 2.1"\n');
    // the first target with its html, then targets only; an element's own text only where it differs
    expect(r.text).toContain('    ".muted:nth-of-type(1)" "<p class=\\"muted\\">1</p>"\n    ".muted:nth-of-type(2)" "Element has insufficient color contrast of 1.4"\n    ".muted:nth-of-type(3)"\n    … 4 more\n');
    expect(r.text).toContain('rules: 1 violated, 31 passed, 2 incomplete (need manual review), 55 inapplicable (nothing to check)');
    expect(r.text).not.toContain('dequeuniversity');
    expect(r.text).not.toContain('nth-of-type(4)');

    // an extension from before these fields: its per-element summary stands in for the fix
    const old = call(c, 'analyze', { target: 'accessibility', force_refresh: true });
    const cmd2 = await nextCmd(ext, 1);
    ext.send({ t: 'result', id: cmd2.id, status: 'complete', result: { url: 'http://127.0.0.1:3000/', engine: 'axe-core 4.10.0', violations: [{ id: 'label', impact: 'critical', help: 'Form elements must have labels', node_count: 1, nodes: [{ selector: '#nick', html: '<input id="nick">', failure_summary: 'Fix any of the following: no label' }] }], incomplete: 3 } });
    const o = await old;
    expect(o.text).toContain('- label: "Form elements must have labels" — 1 element\n    fix: "Fix any of the following: no label"\n    "#nick" "<input id=\\"nick\\">"');
    expect(o.text).toContain('3 rules need manual review (incomplete)');

    // tags and fix are bounded like every other field
    const big = call(c, 'analyze', { target: 'accessibility', force_refresh: true });
    const cmd3 = await nextCmd(ext, 2);
    ext.send({ t: 'result', id: cmd3.id, status: 'complete', result: { url: 'u', engine: 'axe', violations: [{ id: 'x', impact: 'minor', help: 'h', tags: Array.from({ length: 13 }, (_, i) => `wcag${i}`), node_count: 0, nodes: [] }] } });
    expect((await big).text).toMatch(/^invalid_result: a11y_audit result rejected: violations\.0\.tags/);
  });

  it('dom matches carry the selector the extension checked unique, ready for interact', async () => {
    const ext = await extension();
    const c = await agent('sel');
    const pending = call(c, 'analyze', { target: 'dom', selector: 'li button' });
    const cmd = await nextCmd(ext, 0);
    ext.send({ t: 'result', id: cmd.id, status: 'complete', result: { ...DOM, match_count: 2, matches: [{ ...DOM.matches[0], selector: '#save' }, { tag: 'button', text: 'Buy', selector: 'li:nth-of-type(2) > button', bbox: { x: 0, y: 0, width: 1, height: 1 }, visible: true }] } });
    const r = await pending;
    expect(r.text).toContain('[0] "button#save" sel="#save" visible box=1,2 30×10 {"text":"Save"}');
    expect(r.text).toContain('[1] "button" sel="li:nth-of-type(2) > button" visible box=0,0 1×1 {"text":"Buy"}');
  });

  it('rejects a malformed result with a specific reason, counts it, and keeps the connection working', async () => {
    const ext = await extension();
    const c = await agent('m');
    const bad = call(c, 'analyze', { target: 'page_info' });
    const cmd = await nextCmd(ext, 0);
    ext.send({ t: 'result', id: cmd.id, status: 'complete', result: { url: 'x', title: 'y', headings: 'not a list' } });
    const r = await bad;
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^invalid_result: page_info result rejected: /);
    const oversized = call(c, 'analyze', { target: 'dom', selector: 'p' });
    const cmd2 = await nextCmd(ext, 1);
    ext.send({ t: 'result', id: cmd2.id, status: 'complete', result: { ...DOM, match_count: 60, matches: Array.from({ length: 51 }, () => DOM.matches[0]) } });
    expect((await oversized).text).toContain('invalid_result: dom_query result rejected: matches');
    // an answer nobody asked for is counted and ignored
    ext.send({ t: 'result', id: 'q-nobody', status: 'complete', result: {} });
    const good = call(c, 'analyze', { target: 'dom', selector: '#save' });
    const cmd3 = await nextCmd(ext, 2);
    ext.send({ t: 'result', id: cmd3.id, status: 'complete', result: DOM });
    expect((await good).isError).toBe(false);
    const h = server.health().commands as { rejected_results: Record<string, number> };
    expect(h.rejected_results.invalid_result).toBeGreaterThanOrEqual(2);
    await waitFor('unknown result counted', () => (server.health().commands as { rejected_results: Record<string, number> }).rejected_results.unknown_result);
    expect(ext.closeCode).toBeUndefined();
  });

  it('passes the extension\'s error codes through (agent control off, result too large, its worker stopping)', async () => {
    const ext = await extension();
    const c = await agent('e');
    const r = call(c, 'interact', { action: 'click', selector: '#save' });
    const cmd = await nextCmd(ext, 0);
    ext.send({ t: 'result', id: cmd.id, status: 'error', error: 'agent_control_off: agent control is off in the Gasoline extension. Ask the user to open the Gasoline popup and switch on "Allow agent control", then retry.' });
    const out = await r;
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^agent_control_off: .*Allow agent control/);
    const big = call(c, 'analyze', { target: 'dom', selector: '*' });
    const cmd2 = await nextCmd(ext, 1);
    ext.send({ t: 'result', id: cmd2.id, status: 'error', error: 'result_too_large: the answer was 2000000 bytes, over max_frame 1048576' });
    expect((await big).text).toMatch(/^result_too_large: /);
    // the extension's worker stopping under a command (Chrome's "No SW") is worded as a disconnect
    const gone = call(c, 'interact', { action: 'click', selector: '#save' });
    const cmd3 = await nextCmd(ext, 2);
    ext.send({ t: 'result', id: cmd3.id, status: 'error', error: "extension_disconnected: the extension's service worker stopped while running act; it restarts on its own, retry the call" });
    expect((await gone).text).toMatch(/^extension_disconnected: the extension's service worker stopped/);
  });

  it('sends to the newest extension connection and takes its answer from that connection only', async () => {
    const old = await extension();
    const fresh = await extension();
    const c = await agent('n');
    const r = call(c, 'analyze', { target: 'dom', selector: '#save' });
    const cmd = await nextCmd(fresh, 0);
    expect(cmds(old)).toHaveLength(0);
    const before = (server.health().commands as { rejected_results: Record<string, number> }).rejected_results.unknown_result ?? 0;
    // a stale worker's socket answering an id it never got must not complete the query
    old.send({ t: 'result', id: cmd.id, status: 'complete', result: { ...DOM, matches: [{ ...DOM.matches[0], text: 'forged' }] } });
    await waitFor('forged answer counted', () => ((server.health().commands as { rejected_results: Record<string, number> }).rejected_results.unknown_result ?? 0) > before);
    fresh.send({ t: 'result', id: cmd.id, status: 'complete', result: DOM });
    const out = await r;
    expect(out.text).toContain('"text":"Save"');
    expect(out.text).not.toContain('forged');
  });

  it('times out with a clear error when the extension never answers', async () => {
    await extension();
    const c = await agent('t', 8000);
    const t0 = Date.now();
    const r = await call(c, 'interact', { action: 'wait_for', selector: '#never', timeout_ms: 100 });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^command_timeout: interact got no answer from the extension within 2100 ms/);
    expect(Date.now() - t0).toBeLessThan(6000);
  });

  it('fails pending commands at once when the extension disconnects', async () => {
    const ext = await extension();
    const c = await agent('d', 8000);
    const r = call(c, 'analyze', { target: 'page_info' });
    await nextCmd(ext, 0);
    ext.close();
    const out = await r;
    // failed by the socket's close, not by a timer: the agent waits 8 s and the command's deadline
    // is 10 s, and either would answer otherwise (this replaces a 1 s wall-clock bound)
    expect(out.text).toMatch(/^extension_disconnected: /);
  });

  it('bounds the commands one client may leave pending', async () => {
    await extension();
    const c = await agent('many', 100);
    const outs = [];
    for (let i = 0; i < 17; i++) outs.push(await call(c, 'analyze', { target: 'page_info' }));
    expect(outs.slice(0, 16).every((o) => o.text.includes('still running'))).toBe(true);
    expect(outs[16]!.isError).toBe(true);
    expect(outs[16]!.text).toContain('too_many_pending');
  });
});
