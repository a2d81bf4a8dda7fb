/**
 * Issue 20 item 2: alerts over the rate caps are held back, counted per scope and surfaced —
 * the workers' detectors tally them (real shared state), main's hub names them on the next alert
 * of their scope or in a summary.
 */
import { describe, expect, it } from 'vitest';
import type { Alert, AlertEnvelope } from '../../../src/domain/alerts/alert.js';
import { Detector } from '../../../src/domain/alerts/detect.js';
import { HELD_SOURCE, HELD_SUMMARY_MS, HeldTallies, hostOf } from '../../../src/domain/alerts/held.js';
import { AlertHub } from '../../../src/domain/alerts/hub.js';
import { RECORD_SCHEMAS, type IngestedRecord } from '../../../src/domain/wire/schemas.js';
import { allocateDetectState, DetectState, MAX_ALERTS_PER_SCOPE_PER_S } from '../../../src/shm/detect-state.js';

function setup() {
  let now = 1_700_000_000_000;
  const state = new DetectState(allocateDetectState());
  return { d: new Detector(state, () => now), state, advance: (ms: number) => (now += ms), at: () => now };
}

const fail = (d: Detector, host: string, i: number): void => {
  const rec = { ...RECORD_SCHEMAS.network.partial().parse({ method: 'GET', url: `https://${host}/endpoint-${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`, status: 500 }), ts: 0 };
  d.see({ kind: 'network', rec } as IngestedRecord, 1, 'https://app.test/');
};

describe('the workers tally what they hold back', () => {
  it('25 failing endpoints on one host in a second: 20 alerts, and a tally of the 5 held back', () => {
    const { d, state } = setup();
    for (let i = 0; i < 25; i++) fail(d, 'api.test', i);
    const out = d.take();
    const sent = out.filter((e) => e.alert.source !== HELD_SOURCE);
    const tally = out.filter((e) => e.alert.source === HELD_SOURCE);
    expect(sent).toHaveLength(MAX_ALERTS_PER_SCOPE_PER_S);
    expect(tally).toHaveLength(1);
    expect(tally[0]!.alert.context).toEqual({ held: [{ source: 'anomaly_detector', host: 'api.test', n: 5, since: expect.any(Number) }] });
    expect(state.alertsSuppressed).toBe(5);
  });

  it('while holding back goes on a worker reports at most every 250 ms; a batch without any reports the rest at once', () => {
    const { d, advance } = setup();
    for (let i = 0; i < 22; i++) fail(d, 'api.test', i);
    expect(d.take().filter((e) => e.alert.source === HELD_SOURCE)).toHaveLength(1);
    advance(100);
    for (let i = 22; i < 25; i++) fail(d, 'api.test', i);
    expect(d.take().filter((e) => e.alert.source === HELD_SOURCE)).toHaveLength(0);
    advance(50);
    const rest = d.take();
    expect(rest).toHaveLength(1);
    expect(rest[0]!.alert.context?.held).toEqual([expect.objectContaining({ n: 3 })]);
    expect(d.take()).toHaveLength(0);
  });

  it('a tally is bounded: scopes past the first 15 are counted under one "*"', () => {
    const t = new HeldTallies();
    for (let i = 0; i < 40; i++) t.hold('anomaly_detector', `https://h${i}.test/x`, 0);
    const a = t.report(0);
    const held = a.context?.held as Array<{ host: string; n: number }>;
    expect(held).toHaveLength(16);
    expect(held.at(-1)).toMatchObject({ host: '*', n: 25 });
    expect(JSON.stringify(a).length).toBeLessThan(8000);
    expect(hostOf('wss://a.b:8443/x?y')).toBe('a.b:8443');
  });
});

describe('main names them', () => {
  const alert = (over: Partial<Alert>): Alert => ({ severity: 'error', category: 'anomaly', title: 't', detail: 'd', timestamp: new Date().toISOString(), source: 'anomaly_detector', dedup_key: 'k', correlation_id: 'c', ...over });
  const tally = (n: number, host: string, since: number): AlertEnvelope => ({ alert: alert({ source: HELD_SOURCE, category: 'threshold', context: { held: [{ source: 'anomaly_detector', host, n, since }] } }), edgeTime: 0 });

  it('the next alert of the scope says "+N more … in the last N s"; another scope waits for the summary', () => {
    let now = 1_000_000;
    const hub = new AlertHub(() => now);
    const got: Alert[] = [];
    hub.subscribe((e) => got.push(e.alert));
    hub.fromWorkers([tally(5, 'api.test', now - 3000), tally(2, 'cdn.test', now - 100)], 0);
    expect(got).toHaveLength(0);
    hub.fromWorkers([{ alert: alert({ title: 'Server error: GET /x → 500', url: 'https://api.test/x' }), edgeTime: 1 }], 0);
    expect(got[0]!.detail).toBe('d (+5 more anomaly_detector alerts on api.test held back over the rate caps in the last 3 s)');
    expect(got[0]!.context).toEqual({ held_back: 5 });
    // the next one of that scope has nothing more to say
    hub.fromWorkers([{ alert: alert({ url: 'https://api.test/y' }), edgeTime: 1 }], 0);
    expect(got[1]!.detail).toBe('d');
    hub.tick();
    expect(got).toHaveLength(2);
    now += HELD_SUMMARY_MS;
    hub.tick();
    expect(got[2]).toMatchObject({ source: HELD_SOURCE, severity: 'warning', category: 'threshold', title: '+2 more alerts held back over the rate caps in the last 3 s', context: { held_back: 2 } });
    expect(got[2]!.detail).toContain('+2 anomaly_detector on cdn.test');
    hub.tick();
    expect(got).toHaveLength(3);
    expect(hub.stats.held_back).toEqual({ total: 7, in_alerts: 5, in_summaries: 2, pending: 0 });
    expect(hub.heldTotal()).toBe(7);
    expect(hub.stats.invalid).toBe(0);
  });

  it('what a worker held back but never reported (no batch came after) is named from the shared count, and not twice', () => {
    let now = 5_000_000;
    const hub = new AlertHub(() => now);
    const got: Alert[] = [];
    hub.subscribe((e) => got.push(e.alert));
    hub.tick(4);
    now += HELD_SUMMARY_MS - 1;
    hub.tick(4);
    expect(got).toHaveLength(0);
    now += 1;
    hub.tick(4);
    expect(got).toHaveLength(1);
    expect(got[0]!.title).toBe('+4 more alerts held back over the rate caps in the last 2 s');
    expect(got[0]!.detail).toContain('+4 not yet reported by a worker');
    // the worker's tally comes at last: those 4 were named already, only the fifth is new
    hub.fromWorkers([tally(5, 'late.test', now - 3000)], 0);
    hub.tick(5);
    now += HELD_SUMMARY_MS;
    hub.tick(5);
    expect(got).toHaveLength(2);
    expect(got[1]!.title).toMatch(/^\+1 more alert held back/);
    expect(got[1]!.detail).toContain('+1 anomaly_detector on late.test');
    now += HELD_SUMMARY_MS;
    hub.tick(5);
    expect(got).toHaveLength(2);
    expect(hub.stats.held_back).toEqual({ total: 5, in_alerts: 0, in_summaries: 5, pending: 0 });
  });
});

