/**
 * An approval end to end (issue 19 item 4): an MCP client (the SDK's, over stdio) asks the real
 * `gasoline --standalone` (policy ask, the product default) to click; the real extension in
 * Debian Chromium receives the `approval_request` and lists it in its real popup page, where the
 * test clicks Approve once, as the user would. Then the click runs on the page. A denial and the
 * master switch are proven on the same page.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { waitFor } from '../helpers/wait-for.js';
import { newSecret } from '../../src/pairing/index.js';
import { TEST_PAIRING_KEY } from '../helpers/pairing-key.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';
import { startFixture, type Fixture } from './helpers/fixture-server.js';

if (!hasChromium) console.warn(SKIP_REASON);

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
const eventually = <T>(what: string, fn: () => Promise<T | null | false | undefined>, timeoutMs = 10_000): Promise<T> => waitFor(what, fn, timeoutMs, 100);

describe.skipIf(!hasChromium)('approvals in real Chromium', () => {
  let fixture: Fixture;
  let browser: Launched;
  let page: Page;
  let client: Client;
  let dir: string;

  const call = async (name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> => {
    const r = await client.callTool({ name, arguments: args });
    return { text: (r.content as Array<{ text: string }>)[0]!.text, isError: r.isError === true };
  };
  const popup = async (): Promise<Page> => {
    const p = await browser.ctx.newPage();
    await p.goto(`chrome-extension://${browser.extensionId}/popup.html`);
    return p;
  };

  beforeAll(async () => {
    fixture = await startFixture();
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'gasoline-approvals-e2e-'));
    const cfg = join(dir, 'config.json');
    // the default policy (ask) spelled out; a long wait so the test's click lands within one call
    writeFileSync(cfg, JSON.stringify({ commands: { wait_ms: 20_000 }, approvals: { policy: { mutating: 'ask', destructive: 'ask' } } }));
    // paired as `gasoline pair` leaves it: the extension's config.json holds the same secret
    newSecret(join(dir, 'state'), TEST_PAIRING_KEY);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--standalone'],
      env: { PATH: process.env.PATH ?? '', HOME: dir, GASOLINE_STATE_DIR: join(dir, 'state'), GASOLINE_THREADS: '1', GASOLINE_PORT: String(port), GASOLINE_LOG_LEVEL: 'warn', GASOLINE_CONFIG: cfg },
      stderr: 'pipe',
    });
    client = new Client({ name: 'e2e-agent', version: '7' });
    await client.connect(transport);
    browser = await launchWithExtension({ port, trackAll: true, perfDelayMs: 300 });
    page = await browser.ctx.newPage();
    await page.goto(`${fixture.origin}/`);
    await page.evaluate('window.fixture.ready');
    await eventually('extension connected', async () => JSON.parse((await call('configure', { action: 'health' })).text).extension?.connected, 15_000);
    // the master switch on, as the user sets it in the popup
    const p = await popup();
    await p.setChecked('#allow_agent_control', true);
    await p.close();
    // the worker takes the switch a moment after the click: a popup opened now renders what it holds
    await waitFor('agent control on in the worker', async () => {
      const check = await popup();
      try {
        return await check.evaluate<boolean>("document.getElementById('server').textContent.length > 0 && document.getElementById('allow_agent_control').checked");
      } finally {
        await check.close();
      }
    }, 10_000, 100);
    await page.bringToFront();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close().catch(() => undefined);
    await fixture?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the popup lists the request with action, target, tab and client; Approve once runs the click', async () => {
    const pending = call('interact', { action: 'click', selector: '#do-thing' });
    const p = await popup();
    const item = p.locator('#approval-list li');
    await item.first().waitFor({ timeout: 15_000 });
    const text = (await item.first().textContent()) ?? '';
    expect(text).toContain('e2e-agent 7 asks: interact click');
    expect(text).toContain('on #do-thing');
    expect(text).toMatch(/in tab \d+/);
    // nothing ran before the user decided
    expect(await page.evaluate("document.getElementById('out').textContent")).not.toContain('clicked');
    await item.first().locator('button[name="approve"]').click();
    const r = await pending;
    expect(r.isError).toBe(false);
    expect(r.text).toContain('interact click: done');
    expect(await page.evaluate("document.getElementById('out').textContent")).toContain('clicked');
    await eventually('the list empties', async () => (await p.locator('#approval-list li').count()) === 0);
    expect(await p.locator('#approvals').isHidden()).toBe(true);
    await p.close();
  }, 45_000);

  it('Deny answers approval_denied and the page is untouched; a typed text is never shown', async () => {
    await page.bringToFront();
    const pending = call('interact', { action: 'type', selector: '#name', text: 'secret-typed-words' });
    const p = await popup();
    const item = p.locator('#approval-list li').first();
    await item.waitFor({ timeout: 15_000 });
    const text = (await item.textContent()) ?? '';
    expect(text).toContain('typing 18 characters (not shown)');
    expect(text).not.toContain('secret-typed-words');
    await item.locator('button[name="deny"]').click();
    const r = await pending;
    expect(r.text).toMatch(/^approval_denied/);
    expect(await page.evaluate("document.getElementById('name').value")).not.toContain('secret-typed-words');
    await p.close();
  }, 45_000);
});
