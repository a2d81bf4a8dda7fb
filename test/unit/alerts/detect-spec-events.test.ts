/**
 * The detectors behind the spec's stream categories (issue 20 item 3), against the real shared
 * state: security findings as their records arrive, rage clicks by the clicks' own times, dead
 * clicks by the extension's verdict. Each raises once per element or finding and host, and goes
 * through the same rate caps as every per-event alert.
 */
import { describe, expect, it } from 'vitest';
import { Detector } from '../../../src/domain/alerts/detect.js';
import { HELD_SOURCE } from '../../../src/domain/alerts/held.js';
import { eventMatches } from '../../../src/domain/streaming/stream-state.js';
import type { Kind } from '../../../src/domain/kinds.js';
import { RECORD_SCHEMAS, type IngestedRecord } from '../../../src/domain/wire/schemas.js';
import { allocateDetectState, DetectState } from '../../../src/shm/detect-state.js';

const T0 = 1_700_000_000_000;

function setup() {
  let now = T0;
  const state = new DetectState(allocateDetectState());
  return { d: new Detector(state, () => now), advance: (ms: number) => (now += ms), other: () => new Detector(state, () => now) };
}

function see(d: Detector, kind: Kind, fields: object, pageUrl?: string): void {
  const { ts, ...rest } = fields as { ts?: number };
  const rec = { ...RECORD_SCHEMAS[kind].partial().parse(rest), ts: ts ?? T0 };
  d.see({ kind, rec } as IngestedRecord, 1, pageUrl);
}

const button = { css_path: 'main > button.save', text: 'Save', role: 'button' };
const click = (ts: number, extra: object = {}) => ({ type: 'click', url: 'https://app.test/settings', selectors: button, ts, ...extra });

describe('security findings as they are ingested', () => {
  it('a credential in a query parameter alerts once per finding and host, worded as analyze security words it', () => {
    const { d, advance } = setup();
    see(d, 'network', { method: 'GET', url: 'https://api.test/v1/items?token=[REDACTED]', status: 200, duration: 3 }, 'https://app.test/');
    see(d, 'network', { method: 'GET', url: 'https://api.test/v2/other?token=[REDACTED]', status: 200, duration: 3 });
    const out = d.take();
    expect(out).toHaveLength(1);
    expect(out[0]!.alert).toMatchObject({ severity: 'error', category: 'security', source: 'security', title: 'Security: credential-like query parameter in URL (api.test)', count: 2 });
    expect(out[0]!.alert.detail).toContain('/v1/items');
    // the same finding on the same host: counted by the record, not raised again for 10 min
    advance(60_000);
    see(d, 'network', { method: 'GET', url: 'https://api.test/v3?token=x', status: 200, duration: 3 });
    expect(d.take()).toHaveLength(0);
    // another host is another alert
    see(d, 'network', { method: 'GET', url: 'https://other.test/a?api_key=x', status: 200, duration: 3 });
    expect(d.take().map((e) => e.alert.title)).toEqual(['Security: credential-like query parameter in URL (other.test)']);
    advance(600_000);
    see(d, 'network', { method: 'GET', url: 'https://api.test/v3?token=x', status: 200, duration: 3 });
    expect(d.take()).toHaveLength(1);
  });

  it('mixed content from the page URL; header findings from a bodies record; a clean request raises nothing', () => {
    const { d } = setup();
    see(d, 'network', { method: 'GET', url: 'http://cdn.test/lib.js', status: 200, duration: 3, page_url: 'https://app.test/' });
    see(d, 'network', { method: 'GET', url: 'https://api.test/clean', status: 200, duration: 3, page_url: 'https://app.test/' });
    see(d, 'network_bodies', { method: 'GET', url: 'https://app.test/login?token=x', status: 200, content_type: 'text/html', response_headers: { 'Content-Type': 'text/html', 'X-Frame-Options': 'DENY' } });
    const titles = d
      .take()
      .map((e) => [e.alert.severity, e.alert.title])
      .sort();
    expect(titles).toEqual([
      ['info', 'Security: document without X-Content-Type-Options: nosniff (app.test)'],
      ['info', 'Security: https document without Strict-Transport-Security (app.test)'],
      ['warning', 'Security: document without Content-Security-Policy (app.test)'],
      ['warning', 'Security: mixed content (http request from an https page) (cdn.test)'],
    ]);
  });

  it("the extension's cookie and document descriptions alert as analyze security reports them, without any value", () => {
    const { d } = setup();
    see(d, 'network_bodies', { method: 'GET', url: 'https://app.test/', status: 200, document: true, response_headers: { 'content-security-policy': "script-src 'self' 'unsafe-inline'", 'x-content-type-options': 'nosniff', 'strict-transport-security': 'max-age=1', 'x-frame-options': 'DENY' } });
    see(d, 'network_bodies', { method: 'POST', url: 'https://app.test/login', status: 200, cookies: [{ name: 'sid', secure: false, http_only: false, same_site: 'none', expiry: 'session' }] });
    const titles = d
      .take()
      .map((e) => [e.alert.severity, e.alert.title])
      .sort();
    expect(titles).toEqual([
      ['info', "Security: Content-Security-Policy allows 'unsafe-inline' scripts (app.test)"],
      ['info', 'Security: cookie sid without HttpOnly (scripts can read it) (app.test)'],
      ['warning', 'Security: cookie sid SameSite=None without Secure (browsers refuse it) (app.test)'],
      ['warning', 'Security: cookie sid without Secure (app.test)'],
    ]);
  });

  it('shares the per-source-and-host cap: past 20 a second the rest are held back and reported', () => {
    const { d } = setup();
    for (let i = 0; i < 30; i++) see(d, 'network_bodies', { method: 'GET', url: `https://app.test/p${i}`, status: 200, response_headers: { 'set-cookie': `c${i}=1; Secure` } });
    const out = d.take();
    const security = out.filter((e) => e.alert.source === 'security');
    expect(security).toHaveLength(20);
    const held = out.find((e) => e.alert.source === HELD_SOURCE);
    expect(held?.alert.context).toMatchObject({ held: [{ source: 'security', host: 'app.test', n: 10 }] });
  });
});

describe('user frustration from click records', () => {
  it('rage: the third click on one element within 1 s, by the clicks own times, across batches and workers', () => {
    const { d, other, advance } = setup();
    see(d, 'actions', click(T0));
    see(d, 'actions', click(T0 + 400));
    expect(d.take()).toHaveLength(0);
    // the third arrives in another worker's batch, late: its own time decides
    advance(2000);
    const d2 = other();
    see(d2, 'actions', click(T0 + 900));
    const out = d2.take();
    expect(out).toHaveLength(1);
    expect(out[0]!.alert).toMatchObject({ severity: 'warning', category: 'user_frustration', source: 'frustration_detector', title: 'Rage click on button "Save"', url: 'https://app.test/settings' });
    expect(out[0]!.alert.detail).toContain('3 clicks within 900 ms');
    expect(out[0]!.alert.context).toMatchObject({ kind: 'rage_click' });
  });

  it('not rage: three clicks spread over more than 1 s, three elements, or the agent clicking', () => {
    const { d } = setup();
    for (const t of [0, 600, 1200]) see(d, 'actions', click(T0 + t));
    for (const [i, t] of [0, 10, 20].entries()) see(d, 'actions', click(T0 + 5000 + t, { selectors: { css_path: `li:nth-child(${i})` } }));
    for (const t of [0, 10, 20]) see(d, 'actions', click(T0 + 9000 + t, { source: 'agent' }));
    // the same selector on another page is another element
    see(d, 'actions', click(T0 + 20_000));
    see(d, 'actions', click(T0 + 20_010, { url: 'https://app.test/other' }));
    see(d, 'actions', click(T0 + 20_020));
    expect(d.take()).toHaveLength(0);
  });

  it('a burst of clicks is one rage alert with a count; again after 10 s', () => {
    const { d, advance } = setup();
    for (let i = 0; i < 6; i++) see(d, 'actions', click(T0 + i * 100));
    const out = d.take();
    expect(out).toHaveLength(1);
    expect(out[0]!.alert.count).toBe(4);
    for (let i = 0; i < 3; i++) see(d, 'actions', click(T0 + 1000 + i * 100));
    expect(d.take()).toHaveLength(0);
    advance(10_000);
    for (let i = 0; i < 3; i++) see(d, 'actions', click(T0 + 20_000 + i * 100));
    expect(d.take()).toHaveLength(1);
  });

  it('dead: a click the extension saw change nothing within 1 s; a click with an effect, or none recorded, is not', () => {
    const { d } = setup();
    see(d, 'actions', click(T0, { effect: 'none' }));
    see(d, 'actions', click(T0 + 5000, { effect: 'dom', selectors: { css_path: 'button.ok', text: 'OK' } }));
    see(d, 'actions', click(T0 + 5000, { effect: 'request', selectors: { css_path: 'button.load' } }));
    see(d, 'actions', click(T0 + 5000, { selectors: { css_path: 'button.old-extension' } }));
    const out = d.take();
    expect(out.map((e) => e.alert.title)).toEqual(['Dead click on button "Save"']);
    expect(out[0]!.alert.detail).toContain('no DOM change, navigation or request within 1 s');
    expect(out[0]!.alert.context).toMatchObject({ kind: 'dead_click' });
  });

  it('the wire schema takes the click effect as optional and refuses an unknown one', () => {
    const schema = RECORD_SCHEMAS.actions;
    expect(schema.safeParse({ ts: 1, type: 'click' }).success).toBe(true);
    expect(schema.parse({ ts: 1, type: 'click', effect: 'none' }).effect).toBe('none');
    expect(schema.safeParse({ ts: 1, type: 'click', effect: 'maybe' }).success).toBe(false);
  });
});

describe("the spec's event names", () => {
  it('select the categories the detectors file', () => {
    const a = (category: string, source: string) => ({ category, source }) as never;
    expect(eventMatches(['security'], a('security', 'security'))).toBe(true);
    expect(eventMatches(['security'], a('anomaly', 'anomaly_detector'))).toBe(false);
    expect(eventMatches(['user_frustration'], a('user_frustration', 'frustration_detector'))).toBe(true);
    expect(eventMatches(['user_frustration'], a('anomaly', 'error_detector'))).toBe(false);
    expect(eventMatches(['errors'], a('user_frustration', 'frustration_detector'))).toBe(false);
    for (const s of ['error_detector', 'spike_detector', 'anomaly_detector']) expect(eventMatches(['anomaly'], a('anomaly', s))).toBe(true);
    expect(eventMatches(['anomaly'], a('regression', 'performance_monitor'))).toBe(false);
    expect(eventMatches(['regression'], a('regression', 'performance_monitor'))).toBe(true);
    expect(eventMatches(['regression'], a('ci', 'ci'))).toBe(false);
  });
});
