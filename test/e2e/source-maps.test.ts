/**
 * Issue 21 item 4 end to end: Debian Chromium with the extension loads a page whose script is an
 * esbuild bundle, minified, with its source map beside it on the page's own (local) origin. The
 * bundle throws (an uncaught exception), rejects a promise through an async caller, and calls
 * console.error. Through the real MCP tools, observe errors, error_bundles and the alert block
 * show the original file:line:col and source line first, the generated position after; the
 * source line's secret is redacted at egress; configure source_maps off brings the generated
 * frames back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { AUDIT_LINE, bundleApp, THROW_LINE, type BundledApp } from '../helpers/bundled-app.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';
import { startFixture, type Fixture } from './helpers/fixture-server.js';

if (!hasChromium) console.warn(SKIP_REASON);

const SECRET = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
const PAGE = `<!doctype html><html><head><title>cart</title><script src="/maps/app.js"></script></head><body><h1>cart</h1></body></html>`;

describe.skipIf(!hasChromium)('source-mapped stacks from a real bundled page in Chromium (issue 21 item 4)', () => {
  let server: App;
  let client: Client;
  /** polls for the records with a client of its own: each client's alert block is its own to drain */
  let waiter: Client;
  let fixture: Fixture;
  let browser: Launched;
  let page: Page;
  let dir: string;
  let app: BundledApp;

  const observe = async (args: Record<string, unknown>): Promise<string> => (await callTool(client, 'observe', args)).text;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gasoline-maps-e2e-'));
    app = await bundleApp({ dir: join(dir, 'app') });
    [server, fixture] = await Promise.all([
      startTestServer({ state_dir: join(dir, 'state') }),
      startFixture({
        '/maps/': ['text/html; charset=utf-8', Buffer.from(PAGE)],
        '/maps/app.js': ['text/javascript', Buffer.from(app.js)],
        '/maps/app.js.map': ['application/json', Buffer.from(app.map)],
      }),
    ]);
    client = await connectAgent(server, join(dir, 'state'), 'e2e-maps');
    waiter = await connectAgent(server, join(dir, 'state'), 'e2e-maps-wait');
    browser = await launchWithExtension({ port: server.port, trackAll: true });
    page = await browser.ctx.newPage();
    await page.goto(`${fixture.origin}/maps/`);
    await waitFor('the extension', async () => {
      const r = await client.callTool({ name: 'configure', arguments: { action: 'health' } });
      return (JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as { extension?: { connected?: boolean } }).extension?.connected;
    }, 20_000, 100);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await waiter?.close();
    await Promise.all([server?.close(), fixture?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('observe errors, error_bundles and the alert block show the original frame first, with its source line', async () => {
    // the page's own code: an uncaught exception, a rejection through an async caller, a console.error
    await page.evaluate(`(() => {
      setTimeout(() => App.run(), 0);
      setTimeout(() => { App.checkout([]); }, 0);
    })()`);
    // A worker publishes a batch's alerts just after committing its records, and main takes them
    // on a later turn: the records can be read a moment before their alert reaches the sessions
    // (under load the first observe below once came first). The hub hands an alert to every
    // session at once, so once the waiter's answers carried it, the client holds it too.
    let waiterAlerts = '';
    await waitFor('the exception, the rejection and the console error stored, and the new-exception alert out', async () => {
      const t = (await callTool(waiter, 'observe', { what: 'logs', from: 'start', min_level: 'error', fold: false })).text;
      waiterAlerts += t.split('\n--- ALERTS').slice(1).join('\n');
      return /exception "Uncaught Error: empty cart"/.test(t) && /Unhandled rejection/.test(t) && /cart audit failed/.test(t) && waiterAlerts.includes('New exception: Uncaught Error: empty cart');
    }, 20_000, 100);

    const errors = await observe({ what: 'errors', from: 'start', fold: false });
    // the exception: src/cart.ts:3:11 with the line that threw, then the minified position
    expect(errors).toMatch(new RegExp(`exception "Uncaught Error: empty cart" at "src/cart.ts:${THROW_LINE}:11" code="throw new Error\\('empty cart'\\);" gen="app.js:1:\\d+"`));
    expect(errors).toMatch(new RegExp(`Unhandled rejection: Error: empty cart" at "src/cart.ts:${THROW_LINE}:11"`));
    // the console.error call site, its source line redacted at egress like every other page text
    const consoleLine = errors.split('\n').find((l) => l.includes('cart audit failed'))!;
    expect(consoleLine).toMatch(new RegExp(`at "src/cart.ts:${AUDIT_LINE}:11" code="console.error\\('cart audit failed', '`));
    expect(consoleLine).toMatch(/gen="app.js:1:\d+"/);
    expect(errors).not.toContain(SECRET);
    // the generated URLs are not repeated in full once resolved: compact
    expect(consoleLine).not.toContain(`${fixture.origin}/maps/app.js`);
    // the new-error alert rode along with its original frame
    expect(errors).toMatch(new RegExp(`--- ALERTS[\\s\\S]*New exception: Uncaught Error: empty cart" — at "src/cart.ts:${THROW_LINE}:11" code="throw new Error\\('empty cart'\\);" —`));

    const bundles = await observe({ what: 'error_bundles', from: 'start', limit: 5 });
    expect(bundles).toMatch(new RegExp(`■ .*exception "Uncaught Error: empty cart" at "src/cart.ts:${THROW_LINE}:11" code=`));
    // the rest of the stack, original positions: run() called total() at src/main.ts:10
    expect(bundles).toMatch(/\n {2}stack: "src\/main.ts:10:3"/);
    // the awaited caller of the rejection: checkout() at src/main.ts:5
    expect(bundles).toMatch(/stack: (?:async )?"src\/main.ts:5:10"/);
    expect(bundles).not.toContain(SECRET);
  }, 60_000);

  it('configure source_maps off: the same errors read as generated; on: original again', async () => {
    const off = await callTool(client, 'configure', { action: 'source_maps', value: 'off' });
    expect(off.text).toMatch(/^source maps off/);
    const generated = await observe({ what: 'errors', from: 'start', fold: false });
    expect(generated).not.toContain('src/cart.ts');
    expect(generated).toContain(`${fixture.origin}/maps/app.js:1`);
    const bad = await callTool(client, 'configure', { action: 'source_maps', value: 'maybe' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/invalid_argument/);
    await callTool(client, 'configure', { action: 'source_maps', value: 'on' });
    expect(await observe({ what: 'errors', from: 'start', fold: false })).toContain(`at "src/cart.ts:${THROW_LINE}:11"`);
    const status = await callTool(client, 'configure', { action: 'source_maps' });
    expect(status.text).toMatch(/^source maps on/);
    expect(status.text).toMatch(/"maps":1/);
  }, 60_000);
});
