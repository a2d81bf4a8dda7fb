/**
 * On-demand commands end to end: an MCP client (the SDK's own, over stdio) talks to the real
 * `gasoline` process, which asks the real extension in Debian Chromium about the fixture page.
 * Nothing in between is simulated; answers are asserted as the agent sees them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';
import { startFixture, type Fixture } from './helpers/fixture-server.js';
import { waitFor } from '../helpers/wait-for.js';

/** waitFor for checks that must ask the server (an MCP call) each time: polled less often */
const eventually = <T>(what: string, fn: () => Promise<T | null | false | undefined>, timeoutMs = 10_000): Promise<T> => waitFor(what, fn, timeoutMs, 100);

if (!hasChromium) console.warn(SKIP_REASON);

import { newSecret } from '../../src/pairing/index.js';
import { TEST_PAIRING_KEY } from '../helpers/pairing-key.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
/** small enough that one deliberately huge DOM answer passes it, large enough for every other */
const MAX_FRAME = 48 * 1024;

interface Answer {
  text: string;
  isError: boolean;
}

/** A real `gasoline` process on a fresh port and state dir, with an MCP client on its stdio. */
async function startGasoline(): Promise<{ client: Client; port: number; dir: string; close: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gasoline-cmd-e2e-'));
  const cfg = join(dir, 'config.json');
  // approvals are allowed here: these tests drive the page; test/e2e/approvals.test.ts asks the user
  writeFileSync(cfg, JSON.stringify({ limits: { max_frame: MAX_FRAME }, commands: { wait_ms: 8000 }, approvals: { policy: { mutating: 'allow', destructive: 'allow' } } }));
  // paired as a user's earlier `gasoline pair` would have left it: the extension's config.json holds the same secret
  newSecret(join(dir, 'state'), TEST_PAIRING_KEY);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--standalone'],
    env: { PATH: process.env.PATH ?? '', HOME: dir, GASOLINE_STATE_DIR: join(dir, 'state'), GASOLINE_THREADS: '1', GASOLINE_PORT: String(port), GASOLINE_LOG_LEVEL: 'warn', GASOLINE_CONFIG: cfg },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'e2e-agent', version: '1' });
  await client.connect(transport);
  return {
    client,
    port,
    dir,
    close: async () => {
      await client.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function answer(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const r = await client.callTool({ name, arguments: args });
  // the answer itself; alert blocks and pending-alert notes that ride along are not part of it
  return { text: (r.content as Array<{ text: string }>)[0]!.text, isError: r.isError === true };
}

// Each test sets up what it needs, so it passes alone (-t) and in any order (--sequence.shuffle):
// a test that must have no extension, or that stops the server, gets a server (and browser) of its
// own; the others share one server and browser, start on a freshly loaded fixture page, and set
// agent control to what they need.
describe.skipIf(!hasChromium)('commands with a server of their own', () => {
  it('fails a command at once when no extension is connected', async () => {
    const g = await startGasoline();
    try {
      // the standalone answers initialize before its engine loads: wait for the server itself first
      await g.client.listTools();
      const r = await answer(g.client, 'analyze', { target: 'page_info' });
      expect(r.isError).toBe(true);
      expect(r.text).toContain('no extension connected: open Chrome with the Gasoline extension and track a tab (popup)');
      // "at once" (COMMANDS.md) as the server does it: refused before anything is sent, so nothing
      // waits for an answer (no wait_ms, no deadline). This was a 4 s wall-clock bound around the
      // whole MCP call, which a loaded machine could miss while the server kept its promise.
      const commands = JSON.parse((await answer(g.client, 'configure', { action: 'health' })).text).commands as { sent: number; pending: number; failed: Record<string, number> };
      expect(commands).toMatchObject({ sent: 0, pending: 0, failed: { no_extension: 1 } });
    } finally {
      await g.close();
    }
  }, 30_000);

  it('the page keeps working with the server down', async () => {
    const fixture = await startFixture();
    const g = await startGasoline();
    const browser = await launchWithExtension({ port: g.port, trackAll: true, perfDelayMs: 300 });
    try {
      const page = await browser.ctx.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${fixture.origin}/`);
      await page.evaluate('window.fixture.ready');
      await eventually('extension connected', async () => JSON.parse((await answer(g.client, 'configure', { action: 'health' })).text).extension?.connected, 15_000);
      const errorsBefore = pageErrors.length;
      await g.client.close(); // stdin closes: the gasoline process shuts down
      await eventually('server gone', async () => {
        try {
          await fetch(`http://127.0.0.1:${g.port}/health`);
          return false;
        } catch {
          return true;
        }
      }, 10_000);
      expect(await page.evaluate('window.fixture.fetchOk()')).toBe(200);
      await page.evaluate("window.fixture.log('server-down', 20)");
      await page.click('#do-thing');
      expect(await page.evaluate("document.getElementById('out').textContent")).toContain('clicked');
      await page.reload();
      expect(await page.evaluate('window.fixture.ready')).toBe('ok');
      // the fixture throws two errors on purpose per load; nothing else may escape
      expect(pageErrors.slice(errorsBefore).sort()).toEqual(['fixture rejected promise', 'fixture uncaught boom']);
    } finally {
      await browser.close();
      await g.close();
      await fixture.close();
    }
  }, 60_000);
});

describe.skipIf(!hasChromium)('commands through MCP, the server and the extension in real Chromium', () => {
  let fixture: Fixture;
  let browser: Launched;
  let page: Page;
  let server: Awaited<ReturnType<typeof startGasoline>>;
  let client: Client;

  const call = (name: string, args: Record<string, unknown>): Promise<Answer> => answer(client, name, args);
  const health = async (): Promise<Record<string, any>> => JSON.parse((await call('configure', { action: 'health' })).text) as Record<string, any>;
  const extensionUp = async (): Promise<void> => {
    await eventually('extension connected', async () => (await health()).extension?.connected, 15_000);
  };
  /** Agent control as the user sets it in the popup; the worker picks chrome.storage up asynchronously. */
  const agentControl = async (on: boolean): Promise<void> => {
    const popup = await browser.ctx.newPage();
    await popup.goto(`chrome-extension://${browser.extensionId}/popup.html`);
    await popup.setChecked('#allow_agent_control', on);
    await popup.waitForFunction(`document.getElementById("allow_agent_control").checked === ${on}`);
    await popup.close();
    await page.bringToFront();
    // a probe that changes nothing either way: refused while off, "no element" once on
    await eventually(`agent control ${on ? 'on' : 'off'}`, async () => (await call('interact', { action: 'click', selector: '#agent-control-probe' })).text.startsWith('agent_control_off') === !on);
  };
  /** each index once? the N distinct console.log(marker, i) the agent can read */
  const markers = async (marker: string): Promise<number[]> => {
    const text = await readAll({ what: 'logs', contains: marker });
    return [...text.matchAll(new RegExp(`args="\\[\\\\"${marker}\\\\",(\\d+)\\]"`, 'g'))].map((m) => Number(m[1]));
  };
  /** every buffered record: a scan is time-boxed per call, so follow its `more` cursor to the end */
  const readAll = async (args: Record<string, unknown>): Promise<string> => {
    // one line per record: these tests count records, so repeats must not fold
    let r = await call('observe', { ...args, from: 'start', limit: 500, fold: false });
    let text = r.text;
    for (let i = 0; i < 50; i++) {
      const more = /more: observe\(\{.*after:"([^"]+)"\}\)/.exec(r.text);
      if (!more) break;
      r = await call('observe', { ...args, after: more[1], limit: 500, fold: false });
      text += `\n${r.text}`;
    }
    return text;
  };

  beforeAll(async () => {
    fixture = await startFixture();
    server = await startGasoline();
    client = server.client;
    browser = await launchWithExtension({ port: server.port, trackAll: true, perfDelayMs: 300 });
    page = await browser.ctx.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fixture?.close();
  });

  // a freshly loaded fixture page (no scroll, no leftovers), tracked by a connected extension
  beforeEach(async () => {
    await page.goto(`${fixture.origin}/`);
    await page.evaluate('window.fixture.ready');
    await extensionUp();
  }, 30_000);

  /**
   * The agent's actions on the page, done once per run whichever test asks first: the test that
   * drives the page and the one that reads the recorded actions back both need them, and the
   * record must hold each action exactly once.
   */
  let driven: Promise<void> | undefined;
  const drive = (): Promise<void> => (driven ??= drivePage());

  it('the extension connects from Chromium and tracks the fixture page', async () => {
    await extensionUp();
    expect((await health()).extension.producers.length).toBeGreaterThan(0);
  }, 45_000);

  it('analyze page_info describes the live page', async () => {
    const r = await call('analyze', { target: 'page_info' });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain(`page_info: "${fixture.origin}/" title="Gasoline fixture app"`);
    expect(r.text).toMatch(/viewport \d+×\d+, scroll 0,0, document height (\d+)/);
    expect(Number(/document height (\d+)/.exec(r.text)![1])).toBeGreaterThan(2000); // the fixture's spacer
    expect(r.text).toContain('counts: links=1 images=1 interactive=9 forms=1');
    expect(r.text).toContain('headings: h1 "Fixture app"');
    expect(r.text).toContain('form "signup" get');
    expect(r.text).toContain('input name="name" label="Name"');
    expect(r.text).toContain('input[password] name="password" label="Password"');
    expect(r.text).toContain('input name="nickname" (no label)');
  });

  it('analyze dom answers matches with text, box, visibility, styles and children', async () => {
    const r = await call('analyze', { target: 'dom', selector: 'button', include_styles: true });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('dom: 3 matched, 3 shown');
    const thing = r.text.split('\n').find((l) => l.includes('"button#do-thing"'))!;
    expect(thing).toMatch(/visible box=\d+,\d+ \d+×\d+/);
    expect(thing).toContain('"text":"Do the thing"');
    expect(thing).toContain('"data-testid":"do-thing"');
    expect(thing).toContain('"display":"inline-block"');
    const icon = r.text.split('\n').find((l) => l.includes('"button#icon-only.icon"'))!;
    expect(icon).not.toContain('"text"');

    const form = await call('analyze', { target: 'dom', selector: '#signup', include_children: true, max_depth: 1, properties: ['color'] });
    expect(form.text).toContain('"styles":{"color":"rgb(0, 0, 0)"}');
    expect(form.text).toContain('{"tag":"input","id":"name"}');
    expect(form.text).toContain('{"tag":"select","id":"color","text":"Red Blue"}');

    const none = await call('analyze', { target: 'dom', selector: '.nothing-here' });
    expect(none.text).toContain('dom: 0 matched, 0 shown');
    const bad = await call('analyze', { target: 'dom', selector: 'button[' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^invalid_params: selector "button\[" is not valid CSS/);
  });

  it('analyze accessibility finds the four planted violations, grouped by impact, then serves the cache', async () => {
    const r = await call('analyze', { target: 'accessibility' });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toMatch(/^accessibility: \d+ rules violated on \d+ elements \(axe-core 4\.\d+\.\d+\)/);
    for (const rule of ['image-alt', 'label', 'button-name', 'color-contrast']) expect(r.text).toMatch(new RegExp(`\\n- ${rule} \\[wcag[^\\]]*\\]: `)); // with its WCAG tags (issue 20)
    expect(r.text).toMatch(/## critical \(\d+\)\n[\s\S]*- image-alt[\s\S]*## serious/);
    expect(r.text).toContain('"#unlabelled"');
    expect(r.text).toContain('"<img src=\\"/pixel.png\\" width=\\"10\\" height=\\"10\\">"');
    expect(r.text).not.toContain('cached');
    // the injected engine stays out of the page's own world
    expect(await page.evaluate('typeof window.axe')).toBe('undefined');

    const again = await call('analyze', { target: 'accessibility' });
    expect(again.text).toMatch(/cached \d+s ago/);
    const fresh = await call('analyze', { target: 'accessibility', force_refresh: true });
    expect(fresh.text).not.toContain('cached');
    const scoped = await call('analyze', { target: 'accessibility', scope: '#signup', tags: ['wcag2a'], include_passes: true });
    expect(scoped.text).toMatch(/\n- label \[[^\]]*\]: /);
    expect(scoped.text).not.toContain('image-alt');
    expect(scoped.text).toMatch(/passes \(\d+\): /);
  }, 45_000);

  it('an answer larger than max_frame fails with its size, and the connection keeps working', async () => {
    const producersBefore = (await health()).extension.producers.map((p: { id: number }) => p.id);
    // 50 elements with 20 long data attributes each: ~400 KB of answer, every field within its own limit
    await page.evaluate(`(() => {
      const box = document.createElement('div');
      box.id = 'bulk';
      for (let i = 0; i < 50; i++) {
        const d = document.createElement('div');
        d.className = 'bulk';
        for (let k = 0; k < 20; k++) d.setAttribute('data-k' + k, String(i).repeat(400).slice(0, 400));
        box.append(d);
      }
      document.body.append(box);
    })()`);
    const r = await call('analyze', { target: 'dom', selector: '.bulk', include_styles: true });
    await page.evaluate("document.getElementById('bulk').remove()");
    expect(r.isError, r.text.slice(0, 300) + ` (${r.text.length} chars)`).toBe(true);
    expect(r.text).toMatch(new RegExp(`^result_too_large: the answer was \\d+ bytes, over max_frame ${MAX_FRAME}`));
    const after = await call('analyze', { target: 'dom', selector: 'h1' });
    expect(after.text).toContain('"text":"Fixture app"');
    expect((await health()).extension.producers.map((p: { id: number }) => p.id)).toEqual(producersBefore);
  });

  it('interact is refused while agent control is off, and says whom to ask', async () => {
    await agentControl(false);
    const r = await call('interact', { action: 'click', selector: '#do-thing' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^agent_control_off: .*ask the user to open the Gasoline popup and switch on "Allow agent control"/i);
    expect(await page.evaluate("document.getElementById('out').textContent")).not.toContain('clicked');
  });

  async function drivePage(): Promise<void> {
    await agentControl(true);
    const click = await call('interact', { action: 'click', selector: '#do-thing' });
    expect(click.isError, click.text).toBe(false);
    expect(click.text).toContain('interact click: done — "clicked button"');
    expect(await page.evaluate("document.getElementById('out').textContent")).toContain('clicked');

    expect((await call('interact', { action: 'type', selector: '#name', text: 'Grace Hopper' })).isError).toBe(false);
    expect(await page.inputValue('#name')).toBe('Grace Hopper');
    expect((await call('interact', { action: 'type', selector: '#password', text: 'hunter2-AGENT-pw' })).isError).toBe(false);
    expect((await call('interact', { action: 'select', selector: '#color', value: 'blue' })).text).toContain('selected \\"blue\\"');
    expect(await page.inputValue('#color')).toBe('blue');
    expect((await call('interact', { action: 'scroll_to', selector: '#spacer' })).isError).toBe(false);
    expect(Number(await page.evaluate('scrollY'))).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 600)); // past the hook's 250 ms scroll throttle, so a misattributed scroll would show

    const missing = await call('interact', { action: 'click', selector: '#no-such-button' });
    expect(missing.text).toMatch(/^command_failed: no element matches "#no-such-button" \(answered by producer #\d+ \(client "extension", version "[^"]+", session "[^"]+"\)\)$/);

    // a click that leaves the page still answers
    const link = await call('interact', { action: 'click', selector: '#next-link' });
    expect(link.isError, link.text).toBe(false);
    await waitFor('link followed', () => page.url() === `${fixture.origin}/submitted?via=link`);
    // not `back`: Chrome skips, on back, an entry whose page navigated away without a user
    // gesture (the agent's click is synthetic), as its own back button would
    expect((await call('interact', { action: 'navigate', url: `${fixture.origin}/` })).isError).toBe(false);
    // Playwright learns of the navigation over its own CDP channel, which may trail our answer
    await waitFor('home again', () => page.url() === `${fixture.origin}/`);

    const nav = await call('interact', { action: 'navigate', url: `${fixture.origin}/submitted?via=agent` });
    expect(nav.isError, nav.text).toBe(false);
    expect(nav.text).toContain(`now on "${fixture.origin}/submitted?via=agent"`);
    await waitFor('agent navigation seen', () => page.url() === `${fixture.origin}/submitted?via=agent`);
    const back = await call('interact', { action: 'back' });
    expect(back.isError, back.text).toBe(false);
    await waitFor('back on the first page', () => page.url() === `${fixture.origin}/`);
    expect((await call('interact', { action: 'refresh' })).isError).toBe(false);
  }

  it('with agent control switched on in the popup, click, type, select, navigate and back drive the page', async () => {
    await drive();
  }, 60_000);

  it('records each agent action once, marked (agent), with secrets redacted', async () => {
    await drive();
    let last = '';
    const acts = await eventually('agent navigate records', async () => {
      last = await readAll({ what: 'actions' });
      return (last.match(/navigate .* \(agent\)/g) ?? []).length >= 3 ? last : null;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; actions seen:\n${last}`);
    });
    const lines = acts.split('\n');
    const thingClicks = lines.filter((l) => l.includes('click [data-testid=do-thing]'));
    expect(thingClicks).toHaveLength(1);
    expect(thingClicks[0]).toContain('(agent)');
    expect(lines.filter((l) => l.includes('input [data-testid=name-input] value="Grace Hopper" (agent)'))).toHaveLength(1);
    expect(lines.some((l) => l.includes('input #password value="[redacted]" (agent)'))).toBe(true);
    expect(lines.some((l) => l.includes('select #color value="blue" (agent)'))).toBe(true);
    expect(lines.some((l) => l.includes('scroll #spacer (agent)'))).toBe(true);
    expect(lines.some((l) => l.includes(`navigate "${fixture.origin}/" → "${fixture.origin}/submitted?via=agent" (agent)`))).toBe(true);
    expect(acts).not.toContain('hunter2-AGENT-pw');
    // the page hook recorded none of the agent's synthetic events as the user's
    expect(lines.filter((l) => / (click|input|select|scroll) /.test(l) && !l.includes('(agent)'))).toEqual([]);
  }, 90_000);

  it('wait_for that never matches times out with a clear error', async () => {
    await agentControl(true);
    const r = await call('interact', { action: 'wait_for', selector: '#never', timeout_ms: 300 });
    expect(r.isError).toBe(true);
    // The extension's own answer, after the 300 ms asked for: the time bound the product promises
    // (deadline_ms = timeout_ms + 2 s, COMMANDS.md) is enforced by the server itself, which past it
    // (+ 1.5 s grace) fails the command with its own text ("got no answer from the extension") and
    // refuses a later answer. So this text is the proof; it replaces a 3 s wall-clock bound around
    // the whole MCP call (agent round trip included), which measured this test's machine, not that.
    expect(r.text).toMatch(/^command_timeout: no element matched "#never" within 300 ms \(answered by producer #\d+ \(client "extension", version "[^"]+", session "[^"]+"\)\)$/);
    await page.evaluate("setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id=late>late</p>'), 200)");
    const late = await call('interact', { action: 'wait_for', selector: '#late', timeout_ms: 3000 });
    expect(late.text).toContain('matched 1 element(s)');
  });

  it('a killed service worker fails its pending command at once, loses no acknowledged record and duplicates none', async () => {
    await agentControl(true);
    await page.evaluate("window.fixture.log('cmd-before-kill', 40)");
    await eventually('before-kill records', async () => (await markers('cmd-before-kill')).length >= 40, 15_000);
    const pending = call('interact', { action: 'wait_for', selector: '#never', timeout_ms: 8000 });
    await eventually('the command pending at the extension', async () => (await health()).commands.pending >= 1);
    await page.evaluate("(() => { let i = 0; window.__during = setInterval(() => console.log('cmd-during-kill', i++), 5); })()");
    const cdp = await browser.ctx.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    const r = await pending;
    // Failed by the socket's close ("at once", COMMANDS.md), not by a timer: waiting would have
    // ended in command_timeout (the extension's 8 s, the server's 10 s deadline + 1.5 s). This
    // code replaces a 2 s wall-clock bound that counted Chromium stopping the worker too.
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^extension_disconnected: /);
    // the page keeps logging until the restarted worker is connected again: across the whole outage
    await extensionUp();
    await page.evaluate('clearInterval(window.__during)');
    await page.evaluate("window.fixture.log('cmd-after-kill', 40)");
    // One session's batches are stored in the order the page logged them, a replay before anything
    // newer: once every after-kill record is in, any during-kill duplicate would be in already.
    await eventually('after-kill records', async () => (await markers('cmd-after-kill')).length >= 40, 20_000);
    const before = await markers('cmd-before-kill');
    const after = await markers('cmd-after-kill');
    const during = await markers('cmd-during-kill');
    expect(before.sort((a, b) => a - b)).toEqual([...Array(40).keys()]);
    expect(after.sort((a, b) => a - b)).toEqual([...Array(40).keys()]);
    expect(new Set(during).size, 'no during-kill record twice').toBe(during.length);
    // the restarted worker answers commands again
    await extensionUp();
    const info = await call('analyze', { target: 'page_info' });
    expect(info.isError, info.text).toBe(false);
  }, 60_000);
});
