/**
 * Per-client state through the real server, the real MCP SDK client and a real producer (#16
 * items 4, 5, 7): a tab filter by page URL pattern or tab id narrows observe, analyze and the
 * alert block; two clients stay isolated; a global noise rule hides for everyone; `CLIENT:name`
 * reaches another client's checkpoint; /health lists clients; and a client gets its checkpoints,
 * noise rules, store and tab filter back after the app restarts on the same state dir.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { batch, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const APP = 'http://app.local:3000/checkout';
const OTHER = 'http://other.test/news';
const call = callTool;

let server: App;
let producer: Producer;
let seq = 0;
const stateDir = tempStateDir('gasoline-clients-');

const agent = (id: string): Promise<Client> => connectAgent(server, stateDir, id);

/** one error on each of two tabs, with distinct signatures (each raises its own new-error alert) */
async function errorsOnTwoTabs(tag: string): Promise<void> {
  const rec = (page: string, what: string) => ({ ts: Date.now(), level: 'error', type: 'exception', message: `TypeError: ${what} ${tag} failed`, url: page });
  for (const [tab, page, what] of [[1, APP, 'checkout'], [2, OTHER, 'headline']] as const) {
    const s = seq++;
    producer.send(batch(s, { logs: [rec(page, what)], network: [{ ts: Date.now(), method: 'GET', url: `${page}/api/${tag}`, status: 200, duration: 3 }], ws_events: [{ ts: Date.now(), event: 'open', id: `ws-${what}-${tag}`, url: 'wss://socket.test/' }] }, { tab_id: tab, page_url: page }));
    await producer.ackFor(s);
  }
}

beforeAll(async () => {
  server = await startTestServer({ state_dir: stateDir });
  producer = await Producer.connect(server.port);
  await producer.hello('clients-test');
});

afterAll(async () => {
  producer.close();
  await server.close();
});

describe('tab filter', () => {
  it('by page URL pattern narrows observe, analyze and the alert block to that tab; another client sees every tab', async () => {
    const a = await agent('tab-url');
    const b = await agent('tab-none');
    const set = await call(a, 'configure', { action: 'tab_filter', pattern: 'app\\.local' });
    expect(set.text).toContain('tabs whose page URL matches /app\\.local/i');
    await errorsOnTwoTabs('url');
    // the alert block rides on observe: a's shows only the checkout tab's new error
    const errs = await waitFor('a sees its alert', async () => {
      const r = await call(a, 'observe', { what: 'errors', from: 'start' });
      return r.text.includes('--- ALERTS') ? r : undefined;
    });
    expect(errs.text).toContain('checkout url failed');
    expect(errs.text).not.toContain('headline url failed');
    const ws = await call(a, 'observe', { what: 'websocket_status' });
    // a WebSocket event names no page: it follows its tab (the checkout tab showed a matching page)
    expect(ws.text).toContain('ws-checkout-url');
    expect(ws.text).not.toContain('ws-headline-url');
    const clusters = await call(a, 'analyze', { target: 'error_clusters' });
    expect(clusters.text).toContain('checkout url failed');
    expect(clusters.text).not.toContain('headline url failed');
    const net = await call(a, 'observe', { what: 'network', from: 'start' });
    expect(net.text).toContain('/api/url');
    expect(net.text).not.toContain('other.test');

    const all = await waitFor('b sees both alerts', async () => {
      const r = await call(b, 'observe', { what: 'errors', from: 'start' });
      return r.text.includes('headline url failed') && r.text.includes('checkout url failed') ? r : undefined;
    });
    expect(all.isError).toBe(false);

    const cleared = await call(a, 'configure', { action: 'tab_filter', scope: 'all' });
    expect(cleared.text).toContain('every tab');
    expect((await call(a, 'observe', { what: 'errors', from: 'start' })).text).toContain('headline url failed');
  });

  it('by tab id keeps that tab only; a pattern the linear-time engine refuses leaves the filter unchanged', async () => {
    const a = await agent('tab-id');
    expect((await call(a, 'configure', { action: 'tab_filter', tab_ids: [2] })).text).toContain('tab ids 2');
    await errorsOnTwoTabs('byid');
    const errs = await call(a, 'observe', { what: 'errors', from: 'start' });
    expect(errs.text).toContain('headline byid failed');
    expect(errs.text).not.toContain('checkout byid failed');
    const refused = await call(a, 'configure', { action: 'tab_filter', pattern: '(a)\\1' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^pattern_refused/);
    expect((await call(a, 'configure', { action: 'tab_filter' })).text).toContain('tab ids 2');
    const both = await call(a, 'configure', { action: 'tab_filter', tab_ids: [1], pattern: 'x' });
    expect(both.text).toMatch(/^invalid_argument/);
  });
});

describe('isolation and sharing', () => {
  it('checkpoints and noise rules are per client; CLIENT:name reaches another client\'s checkpoint explicitly', async () => {
    const x = await agent('iso-x');
    const y = await agent('iso-y');
    await call(x, 'configure', { action: 'checkpoint', checkpoint_action: 'create', name: 'before' });
    await call(x, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: 'headline' });
    expect((await call(y, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('no checkpoints');
    expect((await call(y, 'configure', { action: 'noise_rule', noise_action: 'list' })).text).not.toContain('headline');
    const own = await call(y, 'analyze', { target: 'changes', checkpoint: 'before' });
    expect(own.text).toMatch(/^unknown_name/);
    const theirs = await call(y, 'analyze', { target: 'changes', checkpoint: 'iso-x:before' });
    expect(theirs.isError).toBe(false);
    expect(theirs.text).toContain('changes since checkpoint "iso-x:before"');
    expect((await call(y, 'analyze', { target: 'changes', checkpoint: 'nobody:before' })).text).toMatch(/^unknown_name: no client "nobody"/);
  });

  it('a global noise rule hides for every client, lists as global with who added it, and any client may remove it', async () => {
    const x = await agent('glob-x');
    const y = await agent('glob-y');
    await errorsOnTwoTabs('global');
    const added = await call(x, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: 'headline global', scope: 'global' });
    const id = /global noise rule (g\d+)/.exec(added.text)?.[1];
    expect(id).toBeDefined();
    const listed = await call(y, 'configure', { action: 'noise_rule', noise_action: 'list' });
    expect(listed.text).toContain(`${id} message /headline global/i (global, by glob-x)`);
    // the records it matches are hidden (noise rules hide records, not the alert block riding along)
    const seen = (await call(y, 'observe', { what: 'errors', from: 'start' })).text.split('--- ALERTS')[0]!;
    expect(seen).toContain('checkout global failed');
    expect(seen).not.toContain('headline global failed');
    expect(seen).toContain('hidden by noise rules');
    expect((await call(y, 'configure', { action: 'noise_rule', noise_action: 'remove', id })).text).toBe(`removed noise rule ${id}`);
    expect((await call(x, 'observe', { what: 'errors', from: 'start' })).text).toContain('headline global failed');
  });

  it('/health lists each client with its sessions, times and cursor lag', async () => {
    await agent('health-a');
    const h = server.health() as { clients: Array<{ id: string; sessions: number; connected_at: string | null; last_seen: string; cursor_lag: Record<string, number>; cursor_lag_max: number }> };
    const mine = h.clients.find((c) => c.id === 'health-a')!;
    expect(mine.sessions).toBe(1);
    expect(mine.connected_at).not.toBeNull();
    expect(mine.cursor_lag_max).toBeGreaterThan(0); // it has read nothing yet
    expect(Object.keys(mine.cursor_lag)).toContain('logs');
  });
});

describe('after a restart', () => {
  let second: App | undefined;
  afterEach(async () => {
    await second?.close();
  });

  it('a client gets its checkpoints, noise rules, store, tab filter and streaming config back from its state file', async () => {
    const dir = tempStateDir('gasoline-restart-');
    const first = await startTestServer({ state_dir: dir });
    const c1 = await connectAgent(first, dir, 'comes-back');
    await call(c1, 'configure', { action: 'checkpoint', checkpoint_action: 'create', name: 'before-fix' });
    await call(c1, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'url', pattern: 'analytics\\.test' });
    await call(c1, 'configure', { action: 'store', store_action: 'set', key: 'plan', value: 'fix the login form' });
    await call(c1, 'configure', { action: 'tab_filter', pattern: 'localhost:5173' });
    await call(c1, 'configure', { action: 'streaming', streaming_action: 'enable', throttle_seconds: 3, severity_min: 'error' });
    await c1.close();
    await first.close();

    second = await startTestServer({ state_dir: dir });
    const c2 = await connectAgent(second, dir, 'comes-back');
    expect((await call(c2, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('before-fix');
    expect((await call(c2, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('(before the daemon restarted)');
    expect((await call(c2, 'configure', { action: 'noise_rule', noise_action: 'list' })).text).toContain('url /analytics\\.test/i');
    expect((await call(c2, 'configure', { action: 'store', store_action: 'get', key: 'plan' })).text).toBe('fix the login form');
    expect((await call(c2, 'configure', { action: 'tab_filter' })).text).toContain('/localhost:5173/i');
    const status = JSON.parse((await call(c2, 'configure', { action: 'streaming', streaming_action: 'status' })).text) as { status: string; config: { throttle_seconds: number } };
    expect(status).toMatchObject({ status: 'enabled', config: { throttle_seconds: 3, severity_min: 'error' } });
    const changes = await call(c2, 'analyze', { target: 'changes', checkpoint: 'before-fix' });
    expect(changes.text).toContain('before the daemon restarted');
    // another client on the new daemon starts clean
    const other = await connectAgent(second, dir, 'new-one');
    expect((await call(other, 'configure', { action: 'store', store_action: 'list' })).text).toBe('store is empty');
    expect(JSON.parse((await call(other, 'configure', { action: 'streaming', streaming_action: 'status' })).text).status).toBe('disabled');
  }, 30_000);
});
