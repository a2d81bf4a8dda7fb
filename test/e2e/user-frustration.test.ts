/**
 * Issue 20 item 3, user frustration, end to end: Debian Chromium with the real extension on a
 * page with a button that does nothing, one that fetches and one that changes the DOM; the real
 * server; two agents (the SDK's client on the real MCP tool server), one streaming
 * `user_frustration`, one streaming only `errors`. Three fast clicks on the dead button are a rage
 * click and a dead click, pushed to the first agent only; a click that fetches or changes the DOM
 * is not dead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';

if (!hasChromium) console.warn(SKIP_REASON);

const PAGE = `<!doctype html><html><head><title>frustration</title></head><body>
<button id="dead">Save draft</button>
<button id="dead-later">Publish</button>
<button id="fetcher" onclick="fetch('/api/ok')">Load more</button>
<button id="mutator" onclick="document.getElementById('out').textContent = 'changed ' + Date.now()">Change text</button>
<div id="out"></div>
</body></html>`;

interface Alert {
  category: string;
  source: string;
  title: string;
  detail: string;
}

/** every alert a client was pushed, batches unfolded */
function collect(client: Client): Alert[] {
  const got: Alert[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const data = n.params.data as Alert & { batch?: boolean; alerts?: Alert[] };
    got.push(...(data.batch ? data.alerts! : [data]));
  });
  return got;
}

/** the answer itself (what rides along, alerts and notes, is not part of it) */
async function answer(c: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const r = await c.callTool({ name, arguments: args });
  return (r.content as Array<{ text: string }>)[0]!.text;
}

const eventually = <T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 15_000): Promise<T> => waitFor(what, fn, timeoutMs, 50);

describe.skipIf(!hasChromium)('user frustration streamed from a real page (#20 item 3)', () => {
  let server: App;
  let site: Server;
  let origin: string;
  let browser: Launched;
  let page: Page;
  let dir: string;
  let frustrated: Client;
  let errorsOnly: Client;
  let pushedFrustrated: Alert[];
  let pushedErrors: Alert[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gasoline-frustration-e2e-'));
    site = createServer((req, res) => {
      if (req.url?.startsWith('/api/ok')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    server = await startTestServer();
    frustrated = await connectAgent(server, dir, 'e2e-frustrated');
    errorsOnly = await connectAgent(server, dir, 'e2e-errors-only');
    pushedFrustrated = collect(frustrated);
    pushedErrors = collect(errorsOnly);
    browser = await launchWithExtension({ port: server.port, trackAll: true, perfDelayMs: 300 });
    page = await browser.ctx.newPage();
    await page.goto(`${origin}/`);
    await eventually('the extension', async () => (JSON.parse(await answer(frustrated, 'configure', { action: 'health' })) as { extension?: { connected?: boolean } }).extension?.connected);
    const on = await callTool(frustrated, 'configure', { action: 'streaming', streaming_action: 'enable', events: ['user_frustration'], throttle_seconds: 1 });
    expect(on.text).toContain('"user_frustration"');
    await callTool(errorsOnly, 'configure', { action: 'streaming', streaming_action: 'enable', events: ['errors'], throttle_seconds: 1 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await frustrated?.close();
    await errorsOnly?.close();
    await server?.close();
    if (site) {
      site.closeAllConnections();
      await new Promise<void>((r) => site.close(() => r()));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('three fast clicks on a button that does nothing: a rage click and a dead click, pushed only to the agent that asked', async () => {
    // the clicks' own times, as the page saw them: the call around them also waits for
    // actionability, and took 1 053 ms once with the whole suite on the slower machine of 2026-12-01
    await page.evaluate("window.__clicks = []; document.querySelector('#dead').addEventListener('click', (e) => window.__clicks.push(e.timeStamp), { capture: true })");
    // one action, three clicks (detail 1, 2, 3, as a browser numbers a real burst): three separate
    // page.click calls each wait for actionability: the three took 100-550 ms on a loaded machine
    await page.click('#dead', { clickCount: 3 });
    // all three within the second rage asks for
    const stamps = (await page.evaluate('window.__clicks')) as number[];
    expect(stamps).toHaveLength(3);
    expect(stamps[2]! - stamps[0]!).toBeLessThan(1000);
    await eventually('the rage and dead click notifications', () => pushedFrustrated.some((a) => a.title.startsWith('Rage click')) && pushedFrustrated.some((a) => a.title.startsWith('Dead click')));
    const rage = pushedFrustrated.find((a) => a.title.startsWith('Rage click'))!;
    expect(rage).toMatchObject({ category: 'user_frustration', source: 'frustration_detector', title: 'Rage click on button "Save draft"' });
    expect(rage.detail).toMatch(/3 clicks within \d+ ms/);
    const dead = pushedFrustrated.find((a) => a.title.startsWith('Dead click'))!;
    expect(dead).toMatchObject({ category: 'user_frustration', title: 'Dead click on button "Save draft"' });
    expect(dead.detail).toContain('no DOM change, navigation or request within 1 s');
    expect(pushedFrustrated.every((a) => a.category === 'user_frustration')).toBe(true);

    // the errors-only agent was offered both and filtered them: none reached it
    const status = await eventually('the errors-only agent to have been offered both', async () => {
      const s = JSON.parse(await answer(errorsOnly, 'configure', { action: 'streaming', streaming_action: 'status' })) as { notify_count: number; dropped: { filtered: number } };
      return s.dropped.filtered >= 2 ? s : undefined;
    });
    expect(status.notify_count).toBe(0);
    expect(pushedErrors).toEqual([]);
  }, 40_000);

  it('a click that fetches or changes the DOM is not dead; a later dead click is', async () => {
    const before = pushedFrustrated.length;
    await page.click('#fetcher');
    await page.click('#mutator');
    expect(await page.evaluate("document.getElementById('out').textContent")).toContain('changed');
    // its verdict comes a second after the click, after the other two clicks' verdicts
    await page.click('#dead-later');
    await eventually('the later dead click', () => pushedFrustrated.slice(before).some((a) => a.title === 'Dead click on button "Publish"'));
    const titles = pushedFrustrated.slice(before).map((a) => a.title);
    expect(titles.filter((t) => t.includes('Load more') || t.includes('Change text'))).toEqual([]);
    // and the clicks themselves are stored
    const actions = (await callTool(frustrated, 'observe', { what: 'actions', from: 'start', fold: false })).text;
    for (const id of ['#fetcher', '#mutator']) expect(actions).toMatch(new RegExp(`click ${id} tab=`));
    expect(actions).toContain('click #dead-later (dead: no effect within 1 s)');
  }, 40_000);
});
