/**
 * The side panel (issue 19 item 6) in real Debian Chromium, with the real `gasoline --standalone`
 * and the real, paired extension. Headless Chromium cannot open a side panel (there is no browser
 * UI to host it), so panel.html is opened as a tab at chrome-extension://<id>/panel.html: the same
 * page, the same worker messages, the same MCP session.
 *
 * Panel-local behaviour is proven whatever the server is: states, connection and pairing health,
 * an agent's approval request decided with the keyboard only, typed text never shown, questions
 * rendered as text (never HTML), Enter to send, tab order and visible focus, the aria-live log,
 * axe-core clean in light and dark, the token refused to any page but the panel, and the page's
 * memory; and with the server's panel token (contract A), a ready session, a triage answer with its
 * redaction badge, and evidence cards.
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

// page-side expressions as strings: the test project compiles without DOM types (as the other e2e files)
const FOCUSED = "(() => { const a = document.activeElement; if (!a) return ''; const n = a.getAttribute('name'); return a.tagName.toLowerCase() + (a.id ? '#' + a.id : '') + (n ? '[name=' + n + ']' : ''); })()";
const BLUR = 'document.activeElement?.blur()';
const TOKEN_ASK = "chrome.runtime.sendMessage({ type: 'panel_token' })";

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: number;
  targets: string[];
}

describe.skipIf(!hasChromium)('the side panel in real Chromium', () => {
  let fixture: Fixture;
  let browser: Launched;
  let page: Page;
  let panel: Page;
  let client: Client;
  let dir: string;
  /** what the panel page said on its console and threw, from before it loaded */
  const panelConsole: string[] = [];
  const panelErrors: string[] = [];

  const call = async (name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> => {
    const r = await client.callTool({ name, arguments: args });
    return { text: (r.content as Array<{ text: string }>)[0]!.text, isError: r.isError === true };
  };
  const state = (): Promise<string> => panel.evaluate<string>("document.body.dataset.state ?? ''");
  /** Tab until `selector` has focus; the focused elements on the way, in order */
  const tabTo = async (selector: string, max = 60): Promise<string[]> => {
    const seen: string[] = [];
    for (let i = 0; i < max; i++) {
      await panel.keyboard.press('Tab');
      const here = await panel.evaluate<string>(FOCUSED);
      seen.push(here);
      if (await panel.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) === true`)) return seen;
    }
    throw new Error(`Tab never reached ${selector}; focus went ${seen.join(' → ')}`);
  };
  const axe = async (): Promise<AxeViolation[]> => {
    if (!(await panel.evaluate<boolean>("'axe' in window"))) await panel.addScriptTag({ url: `chrome-extension://${browser.extensionId}/vendor/axe.min.js` });
    return panel.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => String(n.target[0])) })))`);
  };

  beforeAll(async () => {
    fixture = await startFixture();
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'gasoline-panel-e2e-'));
    const cfg = join(dir, 'config.json');
    // the product's default policy (ask), and a wait long enough for the keyboard to decide within one call
    writeFileSync(cfg, JSON.stringify({ commands: { wait_ms: 20_000 }, approvals: { policy: { mutating: 'ask', destructive: 'ask' } } }));
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
    const popup = await browser.ctx.newPage();
    await popup.goto(`chrome-extension://${browser.extensionId}/popup.html`);
    await popup.setChecked('#allow_agent_control', true);
    await popup.close();
    // the worker takes the switch a moment after the click: a popup opened now renders what it holds
    await waitFor('agent control on in the worker', async () => {
      const check = await browser.ctx.newPage();
      try {
        await check.goto(`chrome-extension://${browser.extensionId}/popup.html`);
        return await check.evaluate<boolean>("document.getElementById('server').textContent.length > 0 && document.getElementById('allow_agent_control').checked");
      } finally {
        await check.close();
      }
    }, 10_000, 100);
    panel = await browser.ctx.newPage();
    panel.on('console', (m) => void panelConsole.push(`${m.type()}: ${m.text()}`));
    panel.on('pageerror', (e) => void panelErrors.push(String(e)));
    // registered before any panel script runs: the CSP report of a probe the page swallows still fires this
    await panel.addInitScript({ content: "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));" });
    await panel.goto(`chrome-extension://${browser.extensionId}/panel.html`);
    const settled = await eventually('the panel settles', async () => {
      const s = await state();
      return s !== 'idle' && s !== 'connecting' ? s : null;
    }, 15_000);
    // the server issues panel tokens to the paired extension: the panel has a session
    expect(settled, (await panel.textContent('#state-detail')) ?? '').toBe('ready');
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close().catch(() => undefined);
    await fixture?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('settles in a defined state and shows the connection and pairing health from the worker', async () => {
    expect(await state()).toBe('ready');
    await eventually('health', async () => ((await panel.textContent('#health-link')) ?? '').startsWith('connected'));
    expect(await panel.textContent('#health-pairing')).toContain('paired (preset); the server proved it');
  });

  it('loads without a CSP violation (zod runs jitless: no `new Function` probe) and without page errors', async () => {
    // the listener was there from the start (an array, not undefined)
    // zod was configured before the SDK built its schemas (zod keeps its config on globalThis)
    expect(await panel.evaluate<unknown>('globalThis.__zod_globalConfig?.jitless')).toBe(true);
    expect(await panel.evaluate<unknown>('window.__csp')).toEqual([]);
    expect(panelConsole.filter((l) => /Content Security Policy|unsafe-eval|EvalError/i.test(l))).toEqual([]);
    expect(panelErrors).toEqual([]);
  });

  it('a panel token goes to the panel page only: the popup, also ours, is refused', async () => {
    const popup = await browser.ctx.newPage();
    await popup.goto(`chrome-extension://${browser.extensionId}/popup.html`);
    expect(await popup.evaluate(TOKEN_ASK)).toMatchObject({ ok: false, error: 'forbidden' });
    await popup.close();
    const a = (await panel.evaluate(TOKEN_ASK)) as { ok: boolean; error?: string; url?: string; token?: string };
    expect(a.ok).toBe(true);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('an agent approval is listed with action, target, tab and client, and approved with the keyboard only', async () => {
    await page.bringToFront();
    const pending = call('interact', { action: 'click', selector: '#do-thing' });
    await panel.locator('#approval-list li').first().waitFor({ timeout: 15_000 });
    const text = (await panel.locator('#approval-list li').first().textContent()) ?? '';
    expect(text).toContain('e2e-agent 7 asks: interact click');
    expect(text).toContain('on #do-thing');
    expect(text).toMatch(/in tab \d+/);
    // the state says a decision waits
    expect(await state()).toBe('needs_approval');
    expect(await page.evaluate("document.getElementById('out').textContent")).not.toContain('clicked');
    await panel.bringToFront();
    await panel.evaluate(BLUR);
    await tabTo('#approval-list button[name="approve"]');
    await panel.keyboard.press('Enter');
    const r = await pending;
    expect(r.isError).toBe(false);
    expect(r.text).toContain('interact click: done');
    await eventually('the prompt goes', async () => (await panel.locator('#approval-list li').count()) === 0);
    expect(await panel.isHidden('#approvals')).toBe(true);
    // the decided request's button is gone: keyboard focus lands on the question, not on <body>
    await eventually('focus on the question field', async () => (await panel.evaluate<string>(FOCUSED)) === 'textarea#question');
    await eventually('ready again', async () => (await state()) === 'ready');
  }, 45_000);

  it('a typed text is never shown; Deny by keyboard answers approval_denied', async () => {
    await page.bringToFront();
    const pending = call('interact', { action: 'type', selector: '#name', text: 'secret-typed-words' });
    const item = panel.locator('#approval-list li').first();
    await item.waitFor({ timeout: 15_000 });
    expect(await item.textContent()).toContain('typing 18 characters (not shown)');
    expect(await panel.content()).not.toContain('secret-typed-words');
    await panel.bringToFront();
    await item.locator('button[name="approve-5"]').focus();
    await tabTo('#approval-list button[name="deny"]');
    await panel.keyboard.press('Enter');
    expect((await pending).text).toMatch(/^approval_denied/);
  }, 45_000);

  it('keyboard: the tab order reaches the question, Send and the evidence; focus is visible; Enter sends; the answer lands in a live log as text', async () => {
    await panel.bringToFront();
    // From a known place: a decision moves focus to the question, and where Tab starts after a
    // blur is the browser's to keep (under load the sequence began past the question). One step
    // back from the question and Tab again must land on it: it is in the tab order.
    await panel.focus('textarea#question');
    await panel.keyboard.press('Shift+Tab');
    const order = await tabTo('#evidence-refresh');
    const at = (s: string): number => order.findIndex((x) => x.startsWith(s));
    expect(at('textarea#question')).toBe(0);
    expect(at('textarea#question')).toBeLessThan(at('button#send'));
    expect(at('button#send')).toBeLessThan(at('button#evidence-refresh'));
    // the focus ring: :focus-visible draws a 2px solid outline in the theme's focus colour
    expect(await panel.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
    expect(await panel.getAttribute('#timeline', 'role')).toBe('log');

    const before = await panel.locator('#timeline article').count();
    await tabTo('textarea#question');
    const hostile = 'Why does checkout fail? <img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
    await panel.keyboard.type(hostile);
    await panel.keyboard.press('Enter');
    await eventually('an exchange', async () => (await panel.locator('#timeline article').count()) === before + 1);
    const entry = panel.locator('#timeline article').last();
    expect(await entry.locator('.question').textContent()).toBe(hostile);
    expect(await entry.locator('img, b').count()).toBe(0);
    expect(await panel.inputValue('#question')).toBe('');
    await eventually('the answer', async () => ((await entry.locator('.answer').textContent()) ?? 'thinking…') !== 'thinking…', 60_000);
    const answer = (await entry.locator('.answer').textContent()) ?? '';
    expect(await panel.title()).not.toBe('pwned');
    expect(await entry.locator('.answer').getAttribute('class')).not.toContain('error');
    expect(answer.length).toBeGreaterThan(0);
    // contract B's footer is shown as a badge, not as part of the answer
    expect(answer).not.toMatch(/^redaction: policy/m);
    expect(await entry.locator('.badge').textContent()).toMatch(/^redaction: policy \S+ · redacted \d+ · blocked \d+/);
    // evidence from the panel's own observe calls: the fixture's errors and its failing POST /api/fail
    await eventually('evidence cards', async () => (await panel.locator('[data-card]').count()) >= 4, 20_000);
    expect(await panel.textContent('[data-card="errors"]')).toContain('fixture');
    expect(await panel.textContent('[data-card="network"]')).toContain('/api/fail');
    expect(await panel.textContent('[data-card="calls"]')).toContain('analyze triage');
  }, 90_000);

  it('the timeline keeps the last 50 exchanges: the oldest falls off when a question is sent', async () => {
    await panel.evaluate(`(() => { const t = document.getElementById('timeline'); t.replaceChildren(); for (let i = 0; i < 50; i++) { const a = document.createElement('article'); a.className = 'exchange'; a.dataset.old = String(i); t.append(a); } })()`);
    await panel.fill('#question', 'what failed last?');
    await panel.press('#question', 'Enter');
    await eventually('the new exchange', async () => (await panel.locator('#timeline article').last().locator('.question').textContent()) === 'what failed last?');
    expect(await panel.locator('#timeline article').count()).toBe(50);
    expect(await panel.locator('#timeline article[data-old="0"]').count()).toBe(0);
    expect(await panel.locator('#timeline article[data-old="1"]').count()).toBe(1);
    await eventually('the answer', async () => ((await panel.locator('#timeline article').last().locator('.answer').textContent()) ?? 'thinking…') !== 'thinking…', 60_000);
  }, 90_000);

  it('axe-core finds nothing on the panel, light and dark, and the themes differ', async () => {
    const colours: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await panel.emulateMedia({ colorScheme: scheme });
      colours.push(await panel.evaluate<string>('getComputedStyle(document.body).backgroundColor'));
      const v = await axe();
      expect(v, `${scheme}: ${JSON.stringify(v)}`).toEqual([]);
    }
    expect(colours).toEqual(['rgb(255, 255, 255)', 'rgb(27, 28, 31)']);
    await panel.emulateMedia({ colorScheme: 'light' });
  }, 45_000);

  it('stays small: the panel page under 40 MB of JS heap (CDP), printed', async () => {
    const cdp = await browser.ctx.newCDPSession(panel);
    await cdp.send('HeapProfiler.collectGarbage');
    const { usedSize, totalSize } = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; totalSize: number };
    await cdp.send('Performance.enable');
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> };
    const m = (n: string): number => metrics.find((x) => x.name === n)?.value ?? 0;
    const mb = (b: number): string => (b / 1024 / 1024).toFixed(1);
    console.warn(`panel e2e: panel memory: JS heap used ${mb(usedSize)} MB of ${mb(totalSize)} MB allocated; ${m('Nodes')} DOM nodes, ${m('JSEventListeners')} listeners, ${m('Documents')} documents`);
    expect(totalSize).toBeLessThan(40 * 1024 * 1024);
    await cdp.detach();
  });
});
