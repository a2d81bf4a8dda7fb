/**
 * Detection against the real shared state (SharedArrayBuffer), with the clock in the test's
 * hands: every source raises what it should, once, and stays quiet otherwise.
 */
import { describe, expect, it } from 'vitest';
import { Detector } from '../../../src/domain/alerts/detect.js';
import type { Kind } from '../../../src/domain/kinds.js';
import { RECORD_SCHEMAS, type IngestedRecord } from '../../../src/domain/wire/schemas.js';
import { allocateDetectState, DetectState } from '../../../src/shm/detect-state.js';

function setup(start = 1_700_000_000_000) {
  let now = start;
  const state = new DetectState(allocateDetectState());
  const d = new Detector(state, () => now);
  return { d, state, advance: (ms: number) => (now += ms), at: () => now, other: () => new Detector(state, () => now) };
}

/** A record as a worker hands it to detection: fields checked by its real schema, time in epoch ms. */
function see(d: Detector, kind: Kind, fields: object, edgeAt: number, pageUrl?: string): void {
  // partial: a test names only the fields a check reads, but each must be valid
  const rec = { ...RECORD_SCHEMAS[kind].partial().parse(fields), ts: 0 };
  d.see({ kind, rec } as IngestedRecord, edgeAt, pageUrl);
}

const exception = (message: string) => ({ level: 'error', type: 'exception', message, stack: `Error: ${message}\n    at f (https://app.test/main.js:10:5)`, url: 'https://app.test/' });

describe('anomaly detection in the workers', () => {
  it('new error: once per signature, again only after 30 s of silence; numbers do not make it new', () => {
    const { d, advance } = setup();
    see(d, 'logs', exception('user 42 not found'), 1);
    see(d, 'logs', exception('user 43 not found'), 1);
    let out = d.take();
    expect(out).toHaveLength(1);
    expect(out[0]!.alert).toMatchObject({ severity: 'error', category: 'anomaly', source: 'error_detector', url: 'https://app.test/' });
    expect(out[0]!.alert.title).toContain('New exception: user 42 not found');
    expect(out[0]!.edgeTime).toBe(1);
    advance(20_000);
    see(d, 'logs', exception('user 44 not found'), 2);
    expect(d.take()).toHaveLength(0);
    advance(31_000);
    see(d, 'logs', exception('user 45 not found'), 3);
    out = d.take();
    expect(out).toHaveLength(1);
    see(d, 'logs', { level: 'error', type: 'console', message: 'a different problem' }, 4);
    expect(d.take()[0]!.alert.title).toBe('New console error: a different problem');
  });

  it('"new" is shared between workers', () => {
    const { d, other } = setup();
    see(d, 'logs', exception('boom'), 1);
    expect(d.take()).toHaveLength(1);
    const d2 = other();
    see(d2, 'logs', exception('boom'), 1);
    expect(d2.take()).toHaveLength(0);
  });

  it('server errors and network failures, repeats within a batch folded into a count', () => {
    const { d, advance } = setup();
    for (let i = 0; i < 5; i++) see(d, 'network', { method: 'POST', url: `https://api.test/api/users/${i}?x=1`, status: 500, duration: 12 }, 1, 'https://app.test/');
    see(d, 'network', { method: 'GET', url: 'https://api.test/ok', status: 200 }, 1);
    see(d, 'network', { method: 'GET', url: 'https://api.test/down', status: 0, error: 'net::ERR_CONNECTION_REFUSED' }, 1);
    const out = d.take().map((e) => e.alert);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ title: 'Server error: POST /api/users/0 → 500', count: 5, source: 'anomaly_detector', category: 'anomaly', severity: 'error' });
    expect(out[1]!.title).toBe('Network failure: GET /down (net::ERR_CONNECTION_REFUSED)');
    // the next batch within a second adds nothing new; after it, the same failure alerts again
    see(d, 'network', { method: 'POST', url: 'https://api.test/api/users/9', status: 500 }, 1);
    expect(d.take()).toHaveLength(0);
    advance(1500);
    see(d, 'network', { method: 'POST', url: 'https://api.test/api/users/9', status: 500 }, 1);
    expect(d.take()).toHaveLength(1);
  });

  it('issue 20 item 9: a failed request counts once, though its network record and its console line both describe it', () => {
    const { d, advance, other } = setup();
    const orders = (i: number) => ({ method: 'POST', url: 'https://api.test/api/orders', status: 500, duration: 40 + i });
    const line = (i: number) => ({ level: 'error', type: 'network', message: `POST https://api.test/api/orders → 500`, method: 'POST', request_url: 'https://api.test/api/orders', status: 500, duration: 40 + i, url: 'https://app.test/' });
    // the console lines come first (the network records wait for their sizes), in one batch
    for (let i = 0; i < 3; i++) see(d, 'logs', line(i), 1);
    const out = d.take().map((e) => e.alert);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ title: 'Server error: POST /api/orders → 500', count: 3 });
    // their network records, on another worker a second later, are the same three requests
    advance(1200);
    const d2 = other();
    for (let i = 0; i < 3; i++) see(d2, 'network', orders(i), 2);
    expect(d2.take()).toHaveLength(0);
    // a fourth request, described by both, alerts again after the repeat window with a count of 1
    advance(1000);
    see(d2, 'network', orders(3), 3);
    see(d2, 'logs', line(3), 3);
    expect(d2.take().map((e) => e.alert.count ?? 1)).toEqual([1]);
    // a producer that sends only console lines still counts every one
    advance(2000);
    for (let i = 10; i < 12; i++) see(d, 'logs', line(i), 4);
    expect(d.take().map((e) => e.alert.count)).toEqual([2]);
  });

  it('error spike: the last 10 s above 3× the 60 s average, checked once a second', () => {
    const { d, advance } = setup();
    // a steady trickle: 1 error every 2 s for 60 s is no spike (a batch is seen in one second: one batch each)
    const trickle: ReturnType<Detector['take']> = [];
    for (let s = 0; s < 60; s += 2) {
      see(d, 'logs', { level: 'error', type: 'console', message: 'steady' }, 1);
      trickle.push(...d.take());
      advance(2000);
    }
    expect(trickle.filter((e) => e.alert.source === 'spike_detector')).toHaveLength(0);
    // then 100 errors in one second
    for (let i = 0; i < 100; i++) see(d, 'logs', { level: 'error', type: 'console', message: `burst ${i}` }, 1);
    const burst = d.take();
    advance(1000);
    see(d, 'logs', { level: 'error', type: 'console', message: 'burst again' }, 1);
    const spikes = [...burst, ...d.take()].filter((e) => e.alert.source === 'spike_detector');
    expect(spikes).toHaveLength(1);
    expect(spikes[0]!.alert.title).toBe('Error spike');
    expect(spikes[0]!.alert.detail).toMatch(/^10\d errors in the last 10 s/);
  });

  it('performance: a regression against the URL baseline, then its recovery', () => {
    const { d } = setup();
    const snap = (lcp: number, cls = 0.01) => ({ url: 'https://app.test/cart?id=1', timing: { ttfb: 100, fcp: 800, lcp, cls, inp: 80, dom_content_loaded: 900, load: 1200 } });
    see(d, 'perf', snap(1000), 1);
    see(d, 'perf', snap(1100), 1);
    expect(d.take()).toHaveLength(0);
    see(d, 'perf', snap(2000), 1);
    let out = d.take().map((e) => e.alert);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ category: 'regression', source: 'performance_monitor', severity: 'warning', title: 'Performance regression: /cart' });
    expect(out[0]!.detail).toMatch(/LCP 2000 ms vs baseline 1050 ms/);
    see(d, 'perf', snap(1050, 0.3), 1);
    expect(d.take()[0]!.alert.detail).toMatch(/CLS 0.30/);
    see(d, 'perf', snap(1060), 1);
    out = d.take().map((e) => e.alert);
    expect(out[0]).toMatchObject({ severity: 'info', title: 'Performance recovered: /cart' });
  });

  it('WebSocket error and abnormal close, not a normal close', () => {
    const { d } = setup();
    see(d, 'ws_events', { event: 'close', id: 'c', url: 'wss://app.test/live', code: 1000 }, 1);
    see(d, 'ws_events', { event: 'close', id: 'c', url: 'wss://app.test/live', code: 1006, reason: 'gone' }, 1);
    const out = d.take().map((e) => e.alert);
    expect(out).toHaveLength(1);
    expect(out[0]!.title).toBe('WebSocket closed abnormally: /live (1006)');
  });

  it('noise: the 50th repeat of a console message within 30 s, once', () => {
    const { d } = setup();
    for (let i = 0; i < 120; i++) see(d, 'logs', { level: 'warn', type: 'console', message: `Warning: each child needs a key (row ${i})` }, 1);
    const out = d.take().map((e) => e.alert);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ category: 'noise', severity: 'info' });
  });

  it('caps per-event alerts per source and host (20 a second) so one flood cannot starve another origin; a spike still gets through', () => {
    const { d, state, advance, other } = setup();
    const d2 = other();
    const two = (i: number) => `${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26))}`;
    for (let i = 0; i < 60; i++) see(d, 'logs', { level: 'error', type: 'console', message: `distinct failure ${two(i)}`, url: 'https://app.test/' }, 1);
    for (let i = 0; i < 60; i++) see(d2, 'network', { method: 'GET', url: `https://api.test/route${two(i).toLowerCase()}`, status: 502 }, 1);
    // a different host in the same second still gets its alert
    see(d2, 'network', { method: 'GET', url: 'https://payments.test/charge', status: 503 }, 1);
    const sent = (out: ReturnType<Detector['take']>) => out.filter((e) => e.alert.source !== 'alert_cap');
    const t1 = d.take();
    const t2 = d2.take();
    const a1 = sent(t1);
    const a2 = sent(t2);
    expect(a1).toHaveLength(20);
    expect(a2).toHaveLength(21);
    // what was held back is tallied per scope, not lost (#20 item 2)
    expect(t1.find((e) => e.alert.source === 'alert_cap')!.alert.context?.held).toEqual([{ source: 'error_detector', host: 'app.test', n: 40, since: expect.any(Number) }]);
    expect(t2.find((e) => e.alert.source === 'alert_cap')!.alert.context?.held).toEqual([{ source: 'anomaly_detector', host: 'api.test', n: 40, since: expect.any(Number) }]);
    expect(a2.some((e) => e.alert.title === 'Server error: GET /charge → 503')).toBe(true);
    expect(state.alertsSuppressed).toBe(80);
    advance(1000);
    see(d, 'logs', { level: 'error', type: 'console', message: 'distinct failure next second', url: 'https://app.test/' }, 1);
    const next = d.take().map((e) => e.alert.source);
    expect(next).toContain('spike_detector');
    expect(next).toContain('error_detector');
  });

  it('forgets what an uncommitted batch raised', () => {
    const { d } = setup();
    see(d, 'logs', exception('lost'), 1);
    d.discard();
    expect(d.take()).toEqual([]);
  });

  it('an uncommitted batch marks nothing shared: the same records raise their alerts when the batch is retried', () => {
    const { d, state, other } = setup();
    see(d, 'logs', exception('retried'), 1);
    see(d, 'network', { method: 'GET', url: 'https://api.test/x', status: 503 }, 1);
    see(d, 'ws_events', { event: 'error', id: 'c', url: 'wss://app.test/live' }, 1);
    d.discard();
    expect(state.errorsIn(1_700_000_000, 60)).toBe(0);
    const retry = other();
    see(retry, 'logs', exception('retried'), 2);
    see(retry, 'logs', exception('retried'), 2);
    see(retry, 'network', { method: 'GET', url: 'https://api.test/x', status: 503 }, 2);
    see(retry, 'ws_events', { event: 'error', id: 'c', url: 'wss://app.test/live' }, 2);
    expect(retry.take().map((e) => [e.alert.source, e.alert.count ?? 1])).toEqual([
      ['error_detector', 1],
      ['anomaly_detector', 1],
      ['anomaly_detector', 1],
    ]);
    expect(state.errorsIn(1_700_000_000, 60)).toBe(2);
  });

  it('two workers that see the same new error before either commits: the first to commit alerts, the other finds it seen', () => {
    const { d, other } = setup();
    const d2 = other();
    see(d, 'logs', exception('raced'), 1);
    see(d2, 'logs', exception('raced'), 1);
    expect(d2.take()).toHaveLength(1);
    expect(d.take()).toHaveLength(0);
  });
});
