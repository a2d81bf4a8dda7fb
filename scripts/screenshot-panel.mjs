#!/usr/bin/env node
// The side panel pictures in the README (docs/panel-light.png, docs/panel-dark.png), kept reproducible:
//
//   pnpm build && node scripts/screenshot-panel.mjs [--out-dir docs]
//
// What it runs, all on 127.0.0.1 and all stopped at the end: a real `gasoline --server` on a free
// port (a temporary state dir, the default approval policy: ask), a small app page that logs and
// fails, Debian's Chromium (GASOLINE_CHROMIUM, default /usr/bin/chromium) with the extension built
// into a temporary folder and paired, and an agent (the SDK's client on the daemon's /mcp, as a
// bridge is) that asks to click a button, so the panel shows an approval prompt. The panel asks one
// triage question and gathers its evidence; then the page is captured at 2× in light and in dark.
// Headless Chromium cannot host a side panel, so panel.html is opened as a tab of side panel width.
// Flags and how the unpacked MV3 extension loads: test/e2e/helpers/chromium.ts.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { freePort, health, until } from './shot-helpers.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out-dir');
const OUT_DIR = resolve(outArg >= 0 ? process.argv[outArg + 1] : join(ROOT, 'docs'));
const CHROMIUM = process.env.GASOLINE_CHROMIUM ?? '/usr/bin/chromium';
const WIDTH = 360;

const APP = `<!doctype html><meta charset="utf-8"><title>Shop</title><h1>Shop</h1><button id="checkout">Checkout</button><script>
console.log('app started');
fetch('/api/items').then((r) => r.json()).catch(() => {});
fetch('/api/cart', { method: 'POST', body: '{"sku":"A1"}', headers: { 'content-type': 'application/json' } }).catch(() => {});
setTimeout(() => console.error(new Error('cart total is NaN')), 100);
document.getElementById('checkout').onclick = () => console.log('checkout clicked');
</script>`;

const base = mkdtempSync(join(tmpdir(), 'gasoline-panel-shot-'));
const cleanups = [() => rmSync(base, { recursive: true, force: true })];
try {
  const port = await freePort();
  const { newSecret } = await import(join(ROOT, 'dist', 'src', 'pairing', 'index.js'));
  const { readDaemonToken } = await import(join(ROOT, 'dist', 'src', 'daemon', 'contract.js'));
  const state = join(base, 'state');
  const { key } = newSecret(state);
  const daemon = spawn(process.execPath, [join(ROOT, 'bin', 'gasoline'), '--server', '--port', String(port), '--state-dir', state, '--threads', '1', '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  cleanups.unshift(() => daemon.kill('SIGTERM'));
  await until('the daemon', async () => (await health(port)).status === 'ok');

  const app = createServer((req, res) => {
    if (req.url.startsWith('/api/items')) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[{"id":1,"name":"Lamp"}]}');
    if (req.url.startsWith('/api/cart')) return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"cart service unavailable"}');
    res.writeHead(200, { 'content-type': 'text/html' }).end(APP);
  });
  await new Promise((r) => app.listen(0, '127.0.0.1', r));
  cleanups.unshift(() => app.close());

  const extDir = join(base, 'ext');
  execFileSync(process.execPath, [join(ROOT, 'extension', 'build.mjs'), '--out', extDir], { stdio: 'pipe' });
  writeFileSync(join(extDir, 'config.json'), JSON.stringify({ pairingKey: key, port, trackAll: true }));
  const ctx = await chromium.launchPersistentContext(join(base, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: WIDTH, height: 900 },
    deviceScaleFactor: 2,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1', `--disable-extensions-except=${extDir}`, `--load-extension=${extDir}`],
    ignoreDefaultArgs: ['--disable-extensions'],
  });
  cleanups.unshift(() => ctx.close());
  const sw = ctx.serviceWorkers()[0] ?? (await ctx.waitForEvent('serviceworker', { timeout: 15_000 }));
  const id = new URL(sw.url()).host;
  // agent control on, as the user switches it in the popup
  await sw.evaluate(async () => {
    const cur = (await chrome.storage.local.get('settings')).settings ?? {};
    await chrome.storage.local.set({ settings: { ...cur, allow_agent_control: true } });
  });
  await until('the extension connects', async () => (await health(port)).extension?.connected === true);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`http://127.0.0.1:${app.address().port}/`);
  await until('the page traffic stored', async () => ((await health(port)).kinds?.network?.stored ?? 0) >= 2);

  const panel = await ctx.newPage();
  await panel.goto(`chrome-extension://${id}/panel.html`);
  await panel.waitForFunction(() => !['idle', 'connecting'].includes(document.body.dataset.state));
  if ((await panel.evaluate(() => document.body.dataset.state)) !== 'error') {
    await panel.fill('#question', 'Why does checkout fail?');
    await panel.press('#question', 'Enter');
    await panel.waitForFunction(() => [...document.querySelectorAll('#timeline .answer')].every((a) => a.textContent !== 'thinking…'), undefined, { timeout: 60_000 });
    await panel.waitForFunction(() => document.querySelectorAll('[data-card]').length >= 4, undefined, { timeout: 30_000 });
  } else process.stderr.write(`the panel has no session: ${await panel.textContent('#state-detail')}\n`);

  // an agent asks to click; the daemon holds the call until the user decides (never, here)
  await page.bringToFront();
  const agent = new Client({ name: 'claude-code', version: '2.1' });
  await agent.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${readDaemonToken(state, port)}`, 'x-gasoline-client': 'claude-code' } } }));
  cleanups.unshift(() => agent.close().catch(() => undefined));
  void agent.callTool({ name: 'interact', arguments: { action: 'click', selector: '#checkout' } }).catch(() => undefined);
  await panel.bringToFront();
  await panel.waitForSelector('#approval-list li', { timeout: 15_000 });

  mkdirSync(OUT_DIR, { recursive: true });
  for (const scheme of ['light', 'dark']) {
    await panel.emulateMedia({ colorScheme: scheme });
    await panel.evaluate(() => document.activeElement?.blur());
    const height = await panel.evaluate(() => Math.ceil(document.documentElement.scrollHeight));
    const out = join(OUT_DIR, `panel-${scheme}.png`);
    await panel.screenshot({ path: out, fullPage: true, clip: { x: 0, y: 0, width: WIDTH, height } });
    process.stderr.write(`wrote ${out} (panel of ${id}, daemon on port ${port})\n`);
  }
} finally {
  for (const c of cleanups) await c();
}
