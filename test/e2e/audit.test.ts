/**
 * Issue 20 items 5 and 8 in Debian Chromium with the real extension, the real server and the MCP
 * tools: the accessibility audit answers WCAG tags, fix text and rule counts; a DOM match's
 * selector is one `interact` can click; document security headers and cookie attributes reach
 * `analyze security`, and no cookie value reaches the answer or the stored records.
 * The pages come from this test's own HTTP server, so each header and cookie is known.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { KINDS } from '../../src/domain/kinds.js';
import { readAll } from '../helpers/accounting.js';
import { connectAgent } from '../helpers/mcp-agent.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';

if (!hasChromium) console.warn(SKIP_REASON);

const eventually = <T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> => waitFor(what, fn, timeoutMs, 100);

/** every cookie value the server sets carries this; none may be stored or answered */
const SECRET = 'S3CRETv4lue';

const AUDIT_PAGE = `<!doctype html><html lang="en"><head><title>Audit page</title></head><body><main>
<h1>Audit</h1>
<img src="/pixel.png" width="10" height="10">
<input id="unlabelled" type="text">
<button class="icon"></button>
<p style="color:#c8c8c8;background:#ffffff">Low contrast text</p>
<ul id="list"><li><button class="buy">Buy</button></li><li><button class="buy">Buy</button></li><li><button class="buy">Buy</button></li></ul>
<div><button class="buy">Buy</button></div>
<p id="out">none</p>
<section><div><div><div><div><span class="deep">a</span></div></div></div></div></section>
<section><div><div><div><div><span class="deep">b</span></div></div></div></div></section>
<script>document.querySelectorAll('.buy').forEach((b, i) => b.addEventListener('click', () => { document.getElementById('out').textContent = 'bought ' + i; }));</script>
</main></body></html>`;

const PLAIN = '<!doctype html><html lang="en"><head><title>t</title></head><body><p>hello</p></body></html>';

interface Site {
  origin: string;
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const html = (headers: Record<string, string | string[]>, body = PLAIN): void => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(body);
    };
    if (path === '/audit') return html({}, AUDIT_PAGE);
    if (path === '/secure') {
      return html({
        'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'permissions-policy': 'camera=()',
        'cross-origin-opener-policy': 'same-origin',
        'set-cookie': [`sid=${SECRET}-sid; HttpOnly; SameSite=Lax; Path=/`, `theme=${SECRET}-theme; Path=/; Max-Age=86400`],
      });
    }
    if (path === '/bare') return html({ 'set-cookie': `track=${SECRET}-track; SameSite=None; Max-Age=999999999` });
    if (path === '/api/login') {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `token=${SECRET}-token; HttpOnly; SameSite=Strict; Path=/api` });
      res.end('{"ok":true}');
      return;
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe.skipIf(!hasChromium)('audit answers from the real extension in Chromium (issue 20 items 5 and 8)', () => {
  let server: App;
  let client: Client;
  let site: Site;
  let browser: Launched;
  let page: Page;
  let dir: string;

  /** the answer itself; alert blocks that ride along are not part of it */
  const call = async (name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> => {
    const r = await client.callTool({ name, arguments: args });
    return { text: (r.content as Array<{ text: string }>)[0]!.text, isError: r.isError === true };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gasoline-audit-e2e-'));
    [server, site] = await Promise.all([startTestServer(), startSite()]);
    client = await connectAgent(server, dir, 'e2e-audit');
    browser = await launchWithExtension({ port: server.port, trackAll: true, perfDelayMs: 300 });
    page = await browser.ctx.newPage();
    await page.goto(`${site.origin}/audit`);
    await eventually('the extension', async () => (JSON.parse((await call('configure', { action: 'health' })).text) as { extension?: { connected?: boolean } }).extension?.connected);
  }, 45_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await Promise.all([server?.close(), site?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('analyze accessibility: rules grouped with WCAG tags, fix text, a few targets and the rule counts', async () => {
    await page.goto(`${site.origin}/audit`);
    const r = await call('analyze', { target: 'accessibility', force_refresh: true });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toMatch(/^accessibility: \d+ rules violated on \d+ elements \(axe-core 4\.\d+\.\d+\)/);
    // the criteria an agent can cite, beside each rule
    expect(r.text).toMatch(/\n- image-alt \[[^\]]*\bwcag2a\b[^\]]*\bwcag111\b[^\]]*\]: "Images must have alternative text" — 1 element/);
    expect(r.text).toMatch(/\n- color-contrast \[[^\]]*\bwcag2aa\b[^\]]*\bwcag143\b[^\]]*\]: /);
    expect(r.text).toMatch(/\n- label \[[^\]]*wcag/);
    // the fix once per rule, shortened: no "Fix any of the following:" boilerplate, no raw line breaks
    expect(r.text).toMatch(/- image-alt [^\n]*\n {4}fix: "[^"\n]*alt attribute[^"\n]*"/);
    expect(r.text).not.toContain('Fix any of the following');
    expect(r.text).toContain('"#unlabelled"');
    expect(r.text).toMatch(/\nrules: \d+ violated, (\d+) passed, \d+ incomplete \(need manual review\), (\d+) inapplicable \(nothing to check\)/);
    const [, passed, inapplicable] = /rules: \d+ violated, (\d+) passed, \d+ incomplete .*, (\d+) inapplicable/.exec(r.text)!;
    expect(Number(passed)).toBeGreaterThan(0);
    expect(Number(inapplicable)).toBeGreaterThan(0);
    // compact: at most 3 targets per rule, the rest counted
    for (const block of r.text.split('\n- ').slice(1)) expect(block.split('\n').filter((l) => l.startsWith('    "')).length).toBeLessThanOrEqual(3);
  }, 45_000);

  it('analyze dom gives each match a selector unique in the document, and interact clicks with it', async () => {
    await page.goto(`${site.origin}/audit`);
    const r = await call('analyze', { target: 'dom', selector: '.buy' });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('dom: 4 matched, 4 shown');
    const sels = [...r.text.matchAll(/^\[\d\] "button\.buy" sel="((?:[^"\\]|\\.)+)"/gm)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(sels).toHaveLength(4);
    expect(new Set(sels).size).toBe(4);
    // each is unique in the live page, and names the element the query matched in that order
    const counts = await page.evaluate(`(${JSON.stringify(sels)}).map((s) => [document.querySelectorAll(s).length, [...document.querySelectorAll('.buy')].indexOf(document.querySelector(s))])`);
    expect(counts).toEqual([[1, 0], [1, 1], [1, 2], [1, 3]]);
    // twins deeper than the tails tried: the whole path from the root, still checked unique
    const deep = await call('analyze', { target: 'dom', selector: '.deep' });
    const deepSels = [...deep.text.matchAll(/ sel="((?:[^"\\]|\\.)+)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(deepSels).toEqual(['html > body > main > section:nth-of-type(1) > div > div > div > div > span', 'html > body > main > section:nth-of-type(2) > div > div > div > div > span']);
    expect(await page.evaluate(`(${JSON.stringify(deepSels)}).map((s) => document.querySelector(s).textContent)`)).toEqual(['a', 'b']);
    // an id wins when it is unique
    expect((await call('analyze', { target: 'dom', selector: 'input' })).text).toContain('sel="#unlabelled"');

    // agent control on, as the user does it in the popup
    const popup = await browser.ctx.newPage();
    await popup.goto(`chrome-extension://${browser.extensionId}/popup.html`);
    await popup.setChecked('#allow_agent_control', true);
    await popup.waitForFunction('document.getElementById("allow_agent_control").checked === true');
    await popup.close();
    await page.bringToFront();
    await eventually('agent control on', async () => !(await call('interact', { action: 'click', selector: '#probe-nothing' })).text.startsWith('agent_control_off'));
    const click = await call('interact', { action: 'click', selector: sels[2]! });
    expect(click.isError, click.text).toBe(false);
    expect(await page.evaluate("document.getElementById('out').textContent")).toBe('bought 2');
  }, 60_000);

  it('analyze security reports document headers present and missing and cookie flags, never a cookie value', async () => {
    await page.goto(`${site.origin}/secure`);
    await page.goto(`${site.origin}/bare`);
    // a cookie set on a fetch: the page itself can never see this Set-Cookie
    expect(await page.evaluate("fetch('/api/login', { method: 'POST' }).then((r) => r.status)")).toBe(200);
    const port = new URL(site.origin).port;
    const r = await eventually('documents and cookies reported', async () => {
      const t = (await call('analyze', { target: 'security' })).text;
      return t.includes('"token"') && t.includes(`"${site.origin}/bare"`) && t.includes(`"${site.origin}/secure"`) ? t : null;
    });
    expect(r).toMatch(/^security: \d+ findings/);
    // the document that has none of them
    expect(r).toContain(`[medium] document without Content-Security-Policy — "127.0.0.1:${port}/bare"`);
    expect(r).toContain(`[low] document without X-Content-Type-Options: nosniff — "127.0.0.1:${port}/bare"`);
    expect(r).not.toContain(`document without Content-Security-Policy — "127.0.0.1:${port}/secure"`);
    const secure = r.split('\n').find((l) => l.startsWith(`- "${site.origin}/secure" 200`))!;
    expect(secure).toContain(`Content-Security-Policy="default-src 'self'; frame-ancestors 'none'"`);
    expect(secure).toContain('X-Content-Type-Options="nosniff"');
    expect(secure).toContain('Referrer-Policy="no-referrer"');
    expect(secure).toContain('Cross-Origin-Opener-Policy="same-origin"');
    // frame-ancestors stands in for X-Frame-Options; HSTS means nothing over http
    expect(secure).toMatch(/; missing Cross-Origin-Embedder-Policy$/);
    const bare = r.split('\n').find((l) => l.startsWith(`- "${site.origin}/bare" 200`))!;
    expect(bare).toContain('present none; missing Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, Referrer-Policy, Permissions-Policy, Cross-Origin-Opener-Policy, Cross-Origin-Embedder-Policy');
    // each cookie's flags, from the document and from the fetch
    expect(r).toContain(`- "sid" no Secure HttpOnly SameSite=lax session path="/" — set by "127.0.0.1:${port}/secure"`);
    expect(r).toContain(`- "theme" no Secure no HttpOnly no SameSite persistent path="/" — set by "127.0.0.1:${port}/secure"`);
    expect(r).toContain(`- "track" no Secure no HttpOnly SameSite=none long_lived — set by "127.0.0.1:${port}/bare"`);
    expect(r).toContain(`- "token" no Secure HttpOnly SameSite=strict session path="/api" — set by "127.0.0.1:${port}/api/login"`);
    expect(r).toContain(`[medium] cookie track SameSite=None without Secure (browsers refuse it) — "127.0.0.1:${port}/bare"`);
    expect(r).toContain(`[low] cookie theme without HttpOnly (scripts can read it) — "127.0.0.1:${port}/secure"`);

    // no value anywhere: not in the answer, not in any stored record of any kind
    expect(r).not.toContain(SECRET);
    await server.pool.dispatcher.whenIdle();
    for (const kind of KINDS) expect(JSON.stringify(readAll(server, kind)), kind).not.toContain(SECRET);
    const docs = readAll(server, 'network_bodies').filter((x) => x.document === true);
    expect(docs.length).toBeGreaterThanOrEqual(2);
    for (const d of docs) expect(Object.keys(d.response_headers as object)).not.toContain('set-cookie');
    for (const what of ['network_bodies', 'timeline', 'logs']) {
      const t = (await call('observe', { what, from: 'start', fold: false, limit: 500, budget: 60_000 })).text;
      expect(t, what).not.toContain(SECRET);
    }
  }, 60_000);
});
