/**
 * The extension in real Debian Chromium (Playwright, persistent context), feeding the real ingest
 * server in-process. Each capture is asserted from the server's rings, never from the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { hasChromium, launchWithExtension, SKIP_REASON, EXTENSION_ID, type Launched } from './helpers/chromium.js';
import { startFixture, type Fixture } from './helpers/fixture-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { startSink, type Rec, type Sink } from './helpers/sink.js';

if (!hasChromium) console.warn(SKIP_REASON);

const SECRETS = ['hunter2-SECRET-pw', '4111111111111111', '4111 1111 1111 1111', 'fixture-secret-token', 'fixture-cookie-secret'];
const KINDS = ['logs', 'network', 'network_bodies', 'ws_events', 'actions', 'perf'];

function all(sink: Sink): Record<string, Rec[]> {
  return Object.fromEntries(KINDS.map((k) => [k, sink.records(k)]));
}

function markers(sink: Sink, marker: string): number[] {
  return sink
    .records('logs')
    .filter((r) => Array.isArray(r.args) && r.args[0] === marker)
    .map((r) => (r.args as unknown[])[1] as number);
}

async function driveForm(page: Page): Promise<void> {
  await page.fill('#name', 'Ada Lovelace');
  await page.fill('#password', 'hunter2-SECRET-pw');
  await page.fill('#card', '4111 1111 1111 1111');
  await page.selectOption('#color', 'blue');
  await page.press('#name', 'Tab');
  await page.click('[data-testid=do-thing]');
  await page.click('[data-testid=submit-btn]');
}

describe.skipIf(!hasChromium)('capture in real Chromium', () => {
  let sink: Sink;
  let fixture: Fixture;
  let browser: Launched;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    // a page with nothing to paint: its load has no first contentful paint, ever
    [sink, fixture] = await Promise.all([startSink(), startFixture({ '/blank.html': ['text/html', Buffer.from('<!doctype html><title>blank</title>')] })]);
    browser = await launchWithExtension({ port: sink.port, trackAll: true, perfDelayMs: 300, keepaliveMs: 20_000 });
    page = await browser.ctx.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${fixture.origin}/?gport=${sink.port}`);
    await page.evaluate('window.fixture.ready');
    await driveForm(page);
  }, 45_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([sink?.close(), fixture?.close()]);
  });

  it('pins the extension id the server allows by default', () => {
    expect(browser.extensionId).toBe(EXTENSION_ID);
  });

  it('captures console at every level with safely serialized arguments', async () => {
    const logs = await waitFor('five console levels', () => {
      const l = sink.records('logs').filter((r) => r.type === 'console' && String(r.message).startsWith('fixture '));
      return l.length >= 5 ? l : null;
    });
    const by = (level: string): Rec => logs.find((r) => r.level === level)!;
    expect(by('debug').args).toEqual(['fixture debug', 1]);
    expect(by('log').args).toEqual(['fixture log', { user: 'ada', nested: { deep: [1, 2, 3] } }]);
    expect(by('info').args).toEqual(['fixture info', 'h1#title']);
    expect(by('warn').args).toEqual(['fixture warn', { name: 'loop', self: '[Circular]' }]);
    const err = (by('error').args as unknown[])[1] as Rec;
    expect(err).toMatchObject({ name: 'TypeError', message: 'bad type' });
    expect(String(err.stack)).toContain('/app.js:');
    expect(String(by('warn').source)).toContain('/app.js:');
    for (const r of logs) expect(r.url).toBe(`${fixture.origin}/?gport=${sink.port}`);
    // the extension packs plain maps, so records nothing changed are stored as its own bytes
    expect(sink.verbatim('logs')).toBeGreaterThan(0);
  });

  it('captures the uncaught exception and the unhandled rejection with stack and position', async () => {
    const ex = await waitFor('two exceptions', () => {
      const l = sink.records('logs').filter((r) => r.type === 'exception');
      return l.length >= 2 ? l : null;
    });
    const boom = ex.find((r) => String(r.message).includes('fixture uncaught boom'))!;
    expect(boom).toMatchObject({ level: 'error', filename: `${fixture.origin}/app.js`, lineno: expect.any(Number), colno: expect.any(Number) });
    expect(String(boom.stack)).toContain('fixtureThrows');
    const rej = ex.find((r) => String(r.message).includes('fixture rejected promise'))!;
    expect(rej).toMatchObject({ level: 'error', filename: `${fixture.origin}/app.js` });
    expect(String(rej.stack)).toContain('Error: fixture rejected promise');
  });

  it('records every fetch and XHR, and failures as network logs with the response', async () => {
    const net = await waitFor('four network records', () => {
      const l = sink.records('network');
      return l.length >= 4 ? l : null;
    });
    const find = (part: string): Rec => net.find((r) => String(r.url).includes(part))!;
    expect(find('/api/ok')).toMatchObject({ method: 'GET', status: 200, duration: expect.any(Number), initiator_type: 'fetch' });
    expect(find('/api/ok').decoded_body_size).toBeGreaterThan(0);
    expect(find('/api/fail')).toMatchObject({ method: 'POST', status: 500 });
    expect(find('/unreachable')).toMatchObject({ status: 0, error: expect.stringContaining('Failed to fetch') });
    expect(find('/api/xhr')).toMatchObject({ method: 'GET', status: 200, initiator_type: 'xmlhttprequest' });
    // The Gasoline server's own URL is never recorded.
    expect(net.filter((r) => String(r.url).includes(`:${sink.port}/`))).toEqual([]);

    const netLogs = sink.records('logs').filter((r) => r.type === 'network');
    const fail = netLogs.find((r) => r.status === 500)!;
    expect(fail).toMatchObject({ level: 'error', method: 'POST', request_url: `${fixture.origin}/api/fail`, status_text: 'Internal Server Error' });
    expect(String(fail.response)).toContain('the database is on fire');
    expect(netLogs.find((r) => String(r.request_url).includes('/unreachable'))).toMatchObject({ level: 'error', error: expect.stringContaining('Failed to fetch') });
    // network bodies are off by default; what the service worker reads of headers is not a body
    // (issue 20: the document's security headers, and the cookie /api/fail set, without its value)
    const fromWorker = (r: Rec): boolean => r.document === true || r.cookies !== undefined;
    expect(sink.records('network_bodies').filter((r) => !fromWorker(r))).toEqual([]);
    // The page posts /api/fail while it loads, as the browser starts; once (1 fresh-clone CI run
    // in many) that response's headers never reached the worker's listener. So if its record is
    // not in after 3 s the page posts again, with the worker surely up: what is asserted is how
    // a Set-Cookie is recorded, and that one must arrive.
    const t0 = Date.now();
    let again = false;
    const cookie = await waitFor('the cookie /api/fail set', async () => {
      const c = sink.records('network_bodies').find((r) => r.cookies !== undefined);
      if (!c && !again && Date.now() - t0 > 3000) {
        again = true;
        await page.evaluate("fetch('/api/fail', { method: 'POST', body: 'again' }).catch(() => undefined)");
      }
      return c;
    }, 15_000);
    expect(cookie).toEqual({ ts: expect.any(Number), method: 'POST', url: `${fixture.origin}/api/fail`, status: 500, cookies: [{ name: 'sid', secure: false, http_only: false, expiry: 'session' }] });
    // the page's own document record is audit.test.ts's: here the first navigation is made as the
    // browser starts, and may precede the service worker's webRequest listener
  });

  it('records the WebSocket lifecycle and messages both ways', async () => {
    const ev = await waitFor('ws close', () => {
      const l = sink.records('ws_events');
      return l.some((r) => r.event === 'close') ? l : null;
    });
    const ids = new Set(ev.map((r) => r.id));
    expect(ids.size).toBe(1);
    expect(ev.map((r) => `${r.event}:${r.direction ?? ''}`)).toEqual(expect.arrayContaining(['open:', 'message:outgoing', 'message:incoming', 'close:']));
    const out = ev.filter((r) => r.direction === 'outgoing');
    expect(out.map((r) => r.data)).toEqual(['fixture ws hello', '[Binary: 4 bytes]']);
    expect(ev.find((r) => r.direction === 'incoming' && r.data === 'fixture ws hello')).toMatchObject({ size: 16, url: `ws://127.0.0.1:${fixture.port}/echo` });
    expect(ev.find((r) => r.event === 'close')).toMatchObject({ code: 1000, reason: 'fixture done' });
  });

  it('issue 20 item 6: follows the newest 20 WebSocket connections, letting the oldest go with an untracked record', async () => {
    await page.evaluate(`(async () => {
      const base = location.origin.replace(/^http/, 'ws') + '/echo?churn=';
      const socks = Array.from({ length: 22 }, (_, i) => new WebSocket(base + i));
      await Promise.all(socks.map((s) => new Promise((r) => s.addEventListener('open', r))));
      socks[0].send('sent after it was let go');
      socks[21].send('sent by the newest');
      window.__churn = socks;
    })()`);
    const ev = await waitFor('the newest socket\'s message', () => {
      const l = sink.records('ws_events').filter((r) => String(r.url).includes('churn='));
      return l.some((r) => r.data === 'sent by the newest') ? l : null;
    });
    const byUrl = (i: number) => ev.filter((r) => String(r.url).endsWith(`churn=${i}`));
    // the fixture's own socket is closed by now: 22 created at once, the first two let go (before
    // they even opened), each said once; the third is followed from its open on
    expect(byUrl(0).map((r) => r.event)).toEqual(['untracked']);
    expect(byUrl(1).map((r) => r.event)).toEqual(['untracked']);
    expect(byUrl(2).map((r) => r.event)).toEqual(['open']);
    expect(byUrl(0)[0]!.reason).toBe('more than 20 open connections: only the newest 20 are followed');
    expect(ev.filter((r) => r.event === 'untracked')).toHaveLength(2);
    expect(ev.some((r) => r.data === 'sent after it was let go')).toBe(false);
    await page.evaluate('window.__churn.forEach((s) => s.close(1000))');
    // the closes of the 20 still followed are recorded; the two let go stay silent
    const closes = await waitFor('20 closes', () => {
      const c = sink.records('ws_events').filter((r) => String(r.url).includes('churn=') && r.event === 'close');
      return c.length >= 20 ? c : null;
    });
    expect(closes.filter((r) => /churn=[01]$/.test(String(r.url)))).toEqual([]);
  });

  it('records actions with multi-strategy selectors and redacts password and card values', async () => {
    const acts = await waitFor('navigate action', () => {
      const l = sink.records('actions');
      return l.some((r) => r.type === 'navigate') ? l : null;
    });
    const inputs = acts.filter((r) => r.type === 'input');
    const name = inputs.find((r) => (r.selectors as Rec).id === 'name')!;
    expect(name).toMatchObject({ value: 'Ada Lovelace', selectors: { test_id: 'name-input', role: 'textbox', css_path: 'input#name' } });
    expect(inputs.find((r) => (r.selectors as Rec).id === 'password')).toMatchObject({ value: '[redacted]' });
    expect(inputs.find((r) => (r.selectors as Rec).id === 'card')).toMatchObject({ value: '[redacted]' });
    expect(acts.find((r) => r.type === 'select')).toMatchObject({ value: 'blue', selectors: { id: 'color', role: 'combobox' } });
    expect(acts.find((r) => r.type === 'keypress')).toMatchObject({ key: 'Tab' });
    expect(acts.find((r) => r.type === 'click' && (r.selectors as Rec).test_id === 'do-thing')).toMatchObject({ selectors: { text: 'Do the thing', role: 'button', id: 'do-thing' } });
    expect(acts.find((r) => r.type === 'submit')).toMatchObject({ selectors: { id: 'signup', aria_label: 'Sign up' } });
    expect(acts.find((r) => r.type === 'navigate')).toMatchObject({ from_url: `${fixture.origin}/?gport=${sink.port}`, to_url: `${fixture.origin}/submitted` });
  });

  it('sends one performance snapshot for the load', async () => {
    const perf = await waitFor('perf snapshot', () => {
      const l = sink.records('perf');
      return l.length ? l : null;
    });
    expect(perf).toHaveLength(1);
    const t = perf[0]!.timing as Rec;
    for (const k of ['ttfb', 'fcp', 'dom_content_loaded', 'load']) expect(t[k], k).toEqual(expect.any(Number));
    expect(perf[0]).toMatchObject({ url: `${fixture.origin}/?gport=${sink.port}`, long_tasks: { count: expect.any(Number) }, resources: { count: expect.any(Number) } });
  });

  it('a page that never paints still gets its one snapshot, without a first paint, a few seconds late', async () => {
    const blank = await browser.ctx.newPage();
    try {
      await blank.goto(`${fixture.origin}/blank.html`);
      const loaded = Date.now();
      const mine = (): Rec[] => sink.records('perf').filter((r) => r.url === `${fixture.origin}/blank.html`);
      const [perf] = await waitFor('the blank page snapshot', () => (mine().length ? mine() : null), 20_000, 25);
      // it waited for a paint that never came (perf_delay_ms 300, then 3 s): sent at 300 ms it arrived
      // ~2.2 s after the load here, waiting ~5.2 s
      expect(Date.now() - loaded).toBeGreaterThanOrEqual(3000);
      expect(perf!.timing).toMatchObject({ fcp: null, load: expect.any(Number), ttfb: expect.any(Number) });
      expect(mine()).toHaveLength(1);
    } finally {
      await blank.close();
    }
  });

  it('never lets a password, card number or credential reach the server', async () => {
    // what the page captured before a later record has arrived before it (one ordered session)
    await page.evaluate("window.fixture.log('secrets-fence', 1)");
    await waitFor('a record logged after the form was filled', () => markers(sink, 'secrets-fence').length >= 1);
    const dump = JSON.stringify(all(sink));
    for (const s of SECRETS) expect(dump, s).not.toContain(s);
  });

  it('lets no capture error escape into the page', () => {
    // the two the fixture throws on purpose, nothing else
    expect(pageErrors.sort()).toEqual(['fixture rejected promise', 'fixture uncaught boom']);
  });

  it('loses no acknowledged record and duplicates none when the service worker is killed', async () => {
    await page.evaluate("window.fixture.log('before-kill', 50)");
    await waitFor('before-kill records', () => markers(sink, 'before-kill').length >= 50);
    // Keep the page logging while the worker dies and restarts.
    await page.evaluate("(() => { let i = 0; window.__during = setInterval(() => console.log('during-kill', i++), 5); })()");
    await waitFor('during-kill records flowing', () => markers(sink, 'during-kill').length > 0);
    const sessions = Number(sink.health().sessions);
    const cdp = await browser.ctx.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    // the page keeps logging until the restarted worker has opened its new session
    await waitFor('the restarted worker connected', () => Number(sink.health().sessions) > sessions, 15_000);
    const during = (await page.evaluate("(() => { clearInterval(window.__during); return 0; })()")) as number;
    void during;
    await page.evaluate("window.fixture.log('after-kill', 50)");
    // One session's batches arrive in the order they were made, a resend before anything newer:
    // once every after-kill record is in, any during-kill duplicate would be in already.
    await waitFor('after-kill records', () => markers(sink, 'after-kill').length >= 50, 15_000);

    const before = markers(sink, 'before-kill');
    const after = markers(sink, 'after-kill');
    const dur = markers(sink, 'during-kill');
    expect(before.sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
    expect(after.sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
    expect(new Set(dur).size, 'no during-kill record twice').toBe(dur.length);
    // a second extension session proves the worker really died and came back
    expect(Number(sink.health().sessions)).toBeGreaterThanOrEqual(2);
    console.log(`[sw-kill] during-kill records delivered: ${dur.length}, max index ${Math.max(...dur)}`);
  }, 30_000);

  it('keeps the page working while the server is down and delivers what was captured meanwhile', async () => {
    // An outage without closing the port: a real restart on the same port must wait out the
    // TIME_WAIT of the connections it closed (uSockets sets no SO_REUSEADDR); transport.test.ts
    // covers a real restart.
    sink.outage!();
    const status = (await page.evaluate('window.fixture.fetchOk()')) as number;
    expect(status).toBe(200);
    await page.evaluate("window.fixture.log('outage', 20)");
    const errorsBefore = pageErrors.length;
    await new Promise((r) => setTimeout(r, 1000)); // the outage lasts a second: its length is the scenario, not a wait
    sink.recover!();
    await waitFor('outage records after reconnect', () => markers(sink, 'outage').length >= 20, 20_000);
    // a resend of an outage batch would come before anything logged later: wait for a later record
    await page.evaluate("window.fixture.log('after-outage', 1)");
    await waitFor('a record logged after the outage', () => markers(sink, 'after-outage').length >= 1, 15_000);
    expect(markers(sink, 'outage').sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    expect(pageErrors.length).toBe(errorsBefore);
  }, 30_000);
});

describe.skipIf(!hasChromium)('network bodies when enabled', () => {
  it('captures request and response bodies with sensitive headers removed', async () => {
    const [sink, fixture] = await Promise.all([startSink(), startFixture()]);
    const browser = await launchWithExtension({ port: sink.port, trackAll: true, captureBodies: true });
    try {
      const page = await browser.ctx.newPage();
      await page.goto(`${fixture.origin}/`);
      await page.evaluate('window.fixture.ready');
      // the XHR's body may ride a later batch than the fetch's: wait for both (failed under load)
      const bodies = await waitFor('bodies of /api/fail and /api/xhr', () => {
        // the page's own captures; the service worker's cookie record for /api/fail rides beside them
        const l = sink.records('network_bodies').filter((r) => r.cookies === undefined && r.document === undefined);
        return l.some((r) => String(r.url).endsWith('/api/fail')) && l.some((r) => String(r.url).includes('/api/xhr')) ? l : null;
      });
      const fail = bodies.find((r) => String(r.url).endsWith('/api/fail'))!;
      expect(fail).toMatchObject({ method: 'POST', status: 500, content_type: 'application/json', request_body: '{"q":1}' });
      expect(String(fail.response_body)).toContain('the database is on fire');
      expect(fail.request_headers).toEqual({ 'content-type': 'application/json' });
      expect(Object.keys(fail.response_headers as Rec)).not.toContain('set-cookie');
      expect(bodies.find((r) => String(r.url).includes('/api/xhr'))).toMatchObject({ status: 200, response_body: '{"via":"xhr"}' });
      const dump = JSON.stringify(KINDS.map((k) => sink.records(k)));
      for (const s of SECRETS) expect(dump, s).not.toContain(s);
    } finally {
      await browser.close();
      await Promise.all([sink.close(), fixture.close()]);
    }
  }, 45_000);
});
