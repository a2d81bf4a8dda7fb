#!/usr/bin/env node
// The popup picture in the README (docs/popup.png), made by hand and kept reproducible:
//
//   pnpm build && node scripts/screenshot-popup.mjs [--out docs/popup.png]
//
// What it runs, all on 127.0.0.1 and all stopped at the end: a real `gasoline --server` on a free
// port (a temporary state dir), a small app page that logs, fetches and fails now and then, and
// Debian's Chromium (GASOLINE_CHROMIUM, default /usr/bin/chromium) with the extension built into a
// temporary folder, pointed at that port the way a user does it (the popup's Port setting, kept in
// chrome.storage). Once the daemon has stored the page's traffic, the popup page
// (chrome-extension://<id>/popup.html) is opened in a background tab, so the tab it describes is
// the app's, as when the toolbar button is clicked, and its body is captured at 2× scale.
// Flags and how the unpacked MV3 extension loads: test/e2e/helpers/chromium.ts.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { freePort, health, until } from './shot-helpers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out');
const OUT = resolve(outArg >= 0 ? process.argv[outArg + 1] : join(ROOT, 'docs', 'popup.png'));
const CHROMIUM = process.env.GASOLINE_CHROMIUM ?? '/usr/bin/chromium';

const APP = `<!doctype html><meta charset="utf-8"><title>Shop</title><h1>Shop</h1><script>
console.log('app started');
let n = 0;
const tick = setInterval(async () => {
  n++;
  await fetch('/api/items?page=' + n).then((r) => r.json()).catch(() => {});
  if (n % 4 === 0) await fetch('/api/cart', { method: 'POST', body: '{"sku":"A1"}', headers: { 'content-type': 'application/json' } }).catch(() => {});
  if (n % 5 === 0) console.error(new Error('cart total is NaN'));
  if (n >= 24) clearInterval(tick);
}, 150);
</script>`;

const base = mkdtempSync(join(tmpdir(), 'gasoline-shot-'));
const cleanups = [() => rmSync(base, { recursive: true, force: true })];
try {
  const port = await freePort(7890);
  // paired, as `gasoline pair` leaves a user: the daemon's secret in its state dir, the same key in
  // the extension (here through its config.json rather than by typing the code)
  const { newSecret } = await import(join(ROOT, 'dist', 'src', 'pairing', 'index.js'));
  const { key } = newSecret(join(base, 'state'));
  const daemon = spawn(process.execPath, [join(ROOT, 'bin', 'gasoline'), '--server', '--port', String(port), '--state-dir', join(base, 'state'), '--threads', '1', '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
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
  writeFileSync(join(extDir, 'config.json'), JSON.stringify({ pairingKey: key }));
  const ctx = await chromium.launchPersistentContext(join(base, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 344, height: 480 },
    deviceScaleFactor: 2,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1', `--disable-extensions-except=${extDir}`, `--load-extension=${extDir}`],
    ignoreDefaultArgs: ['--disable-extensions'],
  });
  cleanups.unshift(() => ctx.close());
  const sw = ctx.serviceWorkers()[0] ?? (await ctx.waitForEvent('serviceworker', { timeout: 15_000 }));
  const id = new URL(sw.url()).host;
  // the user's way: the popup's Port field, stored in chrome.storage.local; bodies on, as most users run it
  await sw.evaluate(async (p) => {
    const cur = (await chrome.storage.local.get('settings')).settings ?? {};
    await chrome.storage.local.set({ settings: { ...cur, server_port: p, capture_bodies: true } });
  }, port);
  await until('the extension connects', async () => (await health(port)).extension?.connected === true);

  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`http://127.0.0.1:${app.address().port}/`);
  await until('the page traffic stored', async () => ((await health(port)).kinds?.network?.stored ?? 0) >= 24);

  const opened = ctx.waitForEvent('page');
  await sw.evaluate((url) => chrome.tabs.create({ url, active: false }), `chrome-extension://${id}/popup.html`);
  const popup = await opened;
  await popup.waitForFunction(() => document.getElementById('state')?.textContent === 'connected' && document.querySelectorAll('#counters dd').length > 0);
  // the counters settle once the last batch is acked
  await popup.waitForFunction(() => document.querySelectorAll('#counters dd')[3]?.textContent === '0' && document.querySelectorAll('#counters dd')[4]?.textContent === '0');
  const height = await popup.evaluate(() => Math.ceil(document.body.getBoundingClientRect().height));
  mkdirSync(dirname(OUT), { recursive: true });
  await popup.screenshot({ path: OUT, clip: { x: 0, y: 0, width: 344, height } });
  process.stderr.write(`wrote ${OUT} (popup of ${id}, connected to the daemon on port ${port})\n`);
} finally {
  for (const c of cleanups) await c();
}
