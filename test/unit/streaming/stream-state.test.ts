import { describe, expect, it } from 'vitest';
import type { Alert, AlertEnvelope } from '../../../src/domain/alerts/alert.js';
import { LatencyReservoir } from '../../../src/domain/streaming/latency.js';
import {
  clip,
  EVENT_RULES,
  eventMatches,
  MAX_ALERT_JSON,
  STREAM_EVENTS,
  StreamingArgs,
  type StreamNotification,
  StreamState,
  type StreamStatus,
  wireAlert,
} from '../../../src/domain/streaming/stream-state.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Manual clock and timers: time only moves when a test says so, and every live timer is visible. */
class FakeTime {
  t = 1_000_000;
  unrefs = 0;
  cleared = 0;
  private seq = 0;
  readonly timers = new Map<number, { at: number; fn: () => void }>();
  /** when false, clearTimer forgets to clear: a timer whose callback was already queued */
  clearWorks = true;
  now = (): number => this.t;
  setTimer = (fn: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return { id, unref: () => void this.unrefs++ };
  };
  clearTimer = (h: unknown): void => {
    this.cleared++;
    if (this.clearWorks) this.timers.delete((h as { id: number }).id);
  };
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
  get active(): number {
    return this.timers.size;
  }
}

let seq = 0;
function alert(over: Partial<Alert> = {}): Alert {
  seq++;
  return {
    severity: 'error',
    category: 'anomaly',
    title: `New exception: boom ${seq}`,
    detail: 'TypeError: x is undefined',
    timestamp: '2025-01-01T00:00:00.000Z',
    source: 'error_detector',
    dedup_key: `error:${seq}`,
    correlation_id: `alert-${seq}`,
    ...over,
  };
}
const env = (a: Alert, edgeTime = 0): AlertEnvelope => ({ alert: a, edgeTime });

function setup(emitResult: (n: StreamNotification) => Promise<boolean> = async () => true) {
  const time = new FakeTime();
  const sent: StreamNotification[] = [];
  const s = new StreamState({
    emit: (n) => {
      sent.push(n);
      return emitResult(n);
    },
    now: time.now,
    setTimer: time.setTimer,
    clearTimer: time.clearTimer,
  });
  return { s, time, sent };
}
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
const status = (s: StreamState): StreamStatus => s.configure({ streaming_action: 'status' }) as StreamStatus;
const batchOf = (n: StreamNotification) => n.params.data as { batch: true; count: number; alerts: Alert[] };

describe('configure', () => {
  it('is off by default and enable answers with the defaults', () => {
    const { s } = setup();
    expect(status(s).status).toBe('disabled');
    expect(s.configure({ streaming_action: 'enable' })).toEqual({
      status: 'enabled',
      config: { events: ['all'], throttle_seconds: 5, url_filter: null, severity_min: 'warning' },
    });
    expect(s.enabled).toBe(true);
  });

  it('status reports config, counters, drops and latency', () => {
    const { s } = setup();
    s.configure({ streaming_action: 'enable', events: ['errors', 'ci'], throttle_seconds: 10, url_filter: '/api', severity_min: 'info' });
    expect(status(s)).toEqual({
      status: 'enabled',
      config: { events: ['errors', 'ci'], throttle_seconds: 10, url_filter: '/api', severity_min: 'info' },
      notify_count: 0,
      pending: 0,
      dropped: { throttled_overflow: 0, rate_limited: 0, stdout: 0, deduped: 0, filtered: 0 },
      latency_ms: { p50: null, p99: null, max: null, samples: 0 },
      latency_stages_ms: Object.fromEntries(['queue', 'worker', 'wake', 'emit'].map((k) => [k, { p50: null, p99: null, max: null, samples: 0 }])),
    });
  });

  it.each([
    [{ throttle_seconds: 0 }, 'throttle_seconds must be between 1 and 60 (got 0)'],
    [{ throttle_seconds: 61 }, 'throttle_seconds must be between 1 and 60 (got 61)'],
    [{ throttle_seconds: 2.5 }, 'throttle_seconds must be a whole number between 1 and 60 (got 2.5)'],
    [{ throttle_seconds: '5' }, 'throttle_seconds must be between 1 and 60 (got "5")'],
    [{ events: Array(11).fill('all') }, 'events must list 1 to 10 of: all, errors, network_errors, performance, ci, noise, threshold, regression, anomaly, security, user_frustration (got a list of 11)'],
    [{ events: [] }, 'events must list 1 to 10 of'],
    [{ events: ['ci', 'bogus'] }, 'events[1] must be one of: all, errors, network_errors, performance, ci, noise, threshold, regression, anomaly, security, user_frustration (got "bogus")'],
    [{ url_filter: 'x'.repeat(501) }, 'url_filter must be a string of at most 500 characters (got a string of 501 characters)'],
    [{ severity_min: 'fatal' }, 'severity_min must be one of: info, warning, error (got "fatal")'],
  ])('rejects %# with a message naming the field and its range', (bad, message) => {
    const { s } = setup();
    const r = s.configure({ streaming_action: 'enable', ...bad });
    expect(r).toEqual({ error: { code: 'invalid_argument', message: expect.stringContaining(message) } });
    expect(s.enabled).toBe(false);
  });

  it('rejects a missing action and non-object arguments, and reports every bad field at once', () => {
    const { s } = setup();
    expect(s.configure({})).toEqual({ error: { code: 'invalid_argument', message: 'streaming_action must be one of: enable, disable, status (got nothing)' } });
    expect(s.configure(null)).toEqual({ error: { code: 'invalid_argument', message: 'arguments must be an object (got null)' } });
    const r = s.configure({ streaming_action: 'enable', throttle_seconds: 0, severity_min: 'x' });
    expect('error' in r && r.error.message).toBe('throttle_seconds must be between 1 and 60 (got 0); severity_min must be one of: info, warning, error (got "x")');
  });

  it('StreamingArgs is bounded and lets the configure tool carry its other fields', () => {
    expect(StreamingArgs.safeParse({ events: ['all', 'errors'], throttle_seconds: 60, url_filter: 'x'.repeat(500), severity_min: 'info' }).success).toBe(true);
    expect(StreamingArgs.safeParse({ events: Array(11).fill('ci') }).success).toBe(false);
    expect(StreamingArgs.safeParse({ throttle_seconds: 1, action: 'health' }).success).toBe(true);
  });
});

describe('filtering', () => {
  const cases: Array<[Partial<Alert>, string[]]> = [
    [{ category: 'anomaly', source: 'error_detector' }, ['all', 'errors', 'anomaly']],
    [{ category: 'anomaly', source: 'spike_detector' }, ['all', 'errors', 'anomaly']],
    [{ category: 'threshold', source: 'spike_detector' }, ['all', 'errors', 'threshold']],
    [{ category: 'anomaly', source: 'anomaly_detector' }, ['all', 'network_errors', 'anomaly']],
    [{ category: 'regression', source: 'performance_monitor' }, ['all', 'performance', 'regression']],
    [{ category: 'security', source: 'security' }, ['all', 'security']],
    [{ category: 'user_frustration', source: 'frustration_detector' }, ['all', 'user_frustration']],
    [{ category: 'ci', source: 'ci' }, ['all', 'ci']],
    [{ category: 'noise', source: 'noise_detector' }, ['all', 'noise']],
    [{ category: 'threshold', source: 'budget' }, ['all', 'threshold']],
  ];
  it.each(cases)('%j is selected by exactly %j', (a, expected) => {
    const matched = STREAM_EVENTS.filter((e) => eventMatches([e], alert(a)));
    expect(matched).toEqual(expected);
  });

  it('exports the mapping as data, with "all" unconstrained', () => {
    expect(EVENT_RULES.all).toEqual({});
    expect(EVENT_RULES.performance.categories).toEqual(['regression']);
    expect(Object.keys(EVENT_RULES)).toEqual([...STREAM_EVENTS]);
  });

  it('drops (and counts) alerts outside the chosen events and below severity_min', () => {
    const { s, sent } = setup();
    s.configure({ streaming_action: 'enable', events: ['ci'] });
    s.offer(env(alert({ category: 'anomaly' })));
    s.offer(env(alert({ category: 'ci', source: 'ci', severity: 'info' }))); // default minimum: warning
    expect(sent).toHaveLength(0);
    expect(status(s).dropped.filtered).toBe(2);
    s.configure({ streaming_action: 'enable', events: ['ci'], severity_min: 'info' });
    s.offer(env(alert({ category: 'ci', source: 'ci', severity: 'info' })));
    expect(sent).toHaveLength(1);
  });

  it('applies url_filter only to alerts whose URL means something', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable', url_filter: '/api/', throttle_seconds: 1 });
    const net = (url: string) => alert({ source: 'anomaly_detector', url });
    s.offer(env(net('https://app.test/static/x.js'))); // meaningful, no match
    s.offer(env(net('https://app.test/api/users'))); // meaningful, match
    time.advance(1000);
    s.offer(env(alert({ source: 'error_detector' }))); // no URL at all
    time.advance(1000);
    s.offer(env(alert({ source: 'error_detector', url: 'https://app.test/page' }))); // URL, but not a meaningful one
    expect(status(s).dropped.filtered).toBe(1);
    expect(sent.map((n) => (n.params.data as Alert).source)).toEqual(['anomaly_detector', 'error_detector', 'error_detector']);
  });

  it('ignores offers while disabled, without counting them', () => {
    const { s, sent } = setup();
    s.offer(env(alert()));
    expect(sent).toHaveLength(0);
    s.configure({ streaming_action: 'enable' });
    expect(status(s).dropped).toEqual({ throttled_overflow: 0, rate_limited: 0, stdout: 0, deduped: 0, filtered: 0 });
  });
});

describe('dedup', () => {
  it('drops the same category:title for 30 s, then lets it through again', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    const a = alert({ title: 'Error spike' });
    s.offer(env(a));
    time.advance(29_999);
    s.offer(env({ ...a, correlation_id: 'again' }));
    s.offer(env(alert({ title: 'Error spike', category: 'threshold', source: 'spike_detector' }))); // other category: not a duplicate
    expect(status(s).dropped.deduped).toBe(1);
    expect(sent).toHaveLength(2);
    time.advance(1);
    s.offer(env(a)); // not a duplicate any more; it waits only for the throttle window
    expect(status(s)).toMatchObject({ pending: 1, dropped: { deduped: 1 } });
  });

  it('a full cache stays at 500: expired entries go first, then the oldest', () => {
    const { s, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    const firstTitle = 'first of all';
    s.offer(env(alert({ title: firstTitle })));
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 100; i++) s.offer(env(alert({ title: `r${round} #${i}` })));
      time.advance(1000);
    }
    expect(s.footprint().dedup_entries).toBe(500);
    expect(status(s).dropped.deduped).toBe(0);
    // the oldest were evicted to make room although still inside 30 s, the newest are still known
    s.offer(env(alert({ title: firstTitle })));
    s.offer(env(alert({ title: 'r5 #99' })));
    expect(status(s).dropped.deduped).toBe(1);
    // once every entry has expired, one insertion prunes them all
    time.advance(30_000);
    s.offer(env(alert({ title: 'late' })));
    expect(s.footprint().dedup_entries).toBe(1);
  });

  it('does not remember an alert it had to drop on overflow', () => {
    const { s, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    for (let i = 0; i < 102; i++) s.offer(env(alert({ title: `t${i}` })));
    expect(status(s).dropped.throttled_overflow).toBe(1);
    time.advance(1000);
    s.offer(env(alert({ title: 't101' })));
    expect(status(s).dropped.deduped).toBe(0);
    expect(status(s).pending).toBe(1);
  });
});

describe('throttle and caps', () => {
  it('sends the first alert at once, batches the window, and flushes by timer with no further alert', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable' });
    const first = alert({ severity: 'warning' });
    s.offer(env(first));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toEqual({ method: 'notifications/message', params: { level: 'warning', logger: 'gasoline', data: first } });
    time.advance(1000);
    s.offer(env(alert({ severity: 'warning' })));
    s.offer(env(alert({ severity: 'error' })));
    expect(sent).toHaveLength(1);
    expect(status(s).pending).toBe(2);
    time.advance(3999);
    expect(sent).toHaveLength(1);
    time.advance(1);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.params.level).toBe('error');
    const b = batchOf(sent[1]!);
    expect(b.batch).toBe(true);
    expect(b.count).toBe(2);
    expect(b.alerts.map((a) => a.severity)).toEqual(['warning', 'error']);
    expect(time.active).toBe(0);
    // a quiet window later, the next alert goes at once again
    time.advance(5000);
    s.offer(env(alert()));
    expect(sent).toHaveLength(3);
  });

  it('100 alerts in one second: one immediate notification, one batch at window end, nothing unbounded', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable' });
    for (let i = 0; i < 100; i++) {
      s.offer(env(alert()));
      time.advance(10);
    }
    expect(sent).toHaveLength(1);
    expect(time.active).toBe(1);
    time.advance(4000);
    expect(sent).toHaveLength(2);
    expect(batchOf(sent[1]!).count).toBe(99);
    const st = status(s);
    expect(st.pending).toBe(0);
    expect(st.dropped.throttled_overflow).toBe(0);
    expect(st.dropped.rate_limited).toBe(0);
    expect(time.active).toBe(0);
  });

  it('holds at most 100 alerts and counts the overflow', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable' });
    for (let i = 0; i < 150; i++) s.offer(env(alert()));
    expect(status(s).pending).toBe(100);
    expect(status(s).dropped.throttled_overflow).toBe(49);
    time.advance(5000);
    expect(batchOf(sent[1]!).count).toBe(100);
  });

  it('sends at most 12 notifications per rolling minute and keeps the rest pending until allowed', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    for (let i = 0; i < 15; i++) {
      s.offer(env(alert()));
      time.advance(1000);
    }
    expect(sent).toHaveLength(12);
    expect(status(s).pending).toBe(3);
    expect(status(s).dropped.rate_limited).toBe(3);
    // the pending cap still applies while held
    for (let i = 0; i < 120; i++) s.offer(env(alert()));
    expect(status(s).pending).toBe(100);
    expect(status(s).dropped.throttled_overflow).toBe(23);
    expect(status(s).dropped.rate_limited).toBe(100);
    time.advance(60_000 - 15_000 - 1); // 1 ms before the first send leaves the minute
    expect(sent).toHaveLength(12);
    time.advance(1);
    expect(sent).toHaveLength(13);
    expect(batchOf(sent[12]!).count).toBe(100);
  });

  it('enabling again while enabled opens a fresh window: what was queued goes out at once, the next alert too', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 30 });
    s.offer(env(alert()));
    s.offer(env(alert()));
    expect(sent).toHaveLength(1);
    expect(status(s).pending).toBe(1);
    s.configure({ streaming_action: 'enable', throttle_seconds: 2 });
    expect(sent).toHaveLength(2);
    expect(status(s).pending).toBe(0);
    s.configure({ streaming_action: 'enable', throttle_seconds: 2 });
    s.offer(env(alert()));
    expect(sent).toHaveLength(3);
    time.advance(2000);
    expect(time.active).toBe(0);
  });
});

describe('latency', () => {
  it('records emit completion minus edgeTime for each alert that has one', async () => {
    const releases: Array<(ok: boolean) => void> = [];
    const { s, time } = setup(() => new Promise<boolean>((r) => releases.push(r)));
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    s.offer(env(alert(), time.t - 50));
    time.advance(10); // the write completes 10 ms after it started
    releases[0]!(true);
    await settle();
    time.advance(1000);
    s.offer(env(alert(), time.t - 5)); // sent at once, written at once
    releases[1]!(true);
    await settle();
    s.offer(env(alert(), 0)); // no edge time: no sample
    s.offer(env(alert(), time.t - 7));
    time.advance(1000);
    releases[2]!(true);
    await settle();
    const st = status(s);
    expect(st.notify_count).toBe(3);
    expect(st.latency_ms).toEqual({ p50: 60, p99: 1007, max: 1007, samples: 3 });
  });

  it('splits each worker alert\'s latency at the thread hand-offs; alerts raised on main add to the total only', async () => {
    const releases: Array<(ok: boolean) => void> = [];
    const { s, time } = setup(() => new Promise<boolean>((r) => releases.push(r)));
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    const t = time.t;
    // edge at t-9, begun by a worker at t-8, published at t-6, read by main at t-5, written at t+2
    s.offer({ alert: alert(), edgeTime: t - 9, startTime: t - 8, publishTime: t - 6, readTime: t - 5 });
    time.advance(2);
    releases[0]!(true);
    await settle();
    time.advance(1000);
    s.offer(env(alert(), time.t - 4)); // CI result: stamped at the edge on main, no worker stages
    releases[1]!(true);
    await settle();
    const st = status(s);
    expect(st.latency_ms.samples).toBe(2);
    expect(st.latency_stages_ms).toEqual({
      queue: { p50: 1, p99: 1, max: 1, samples: 1 },
      worker: { p50: 2, p99: 2, max: 2, samples: 1 },
      wake: { p50: 1, p99: 1, max: 1, samples: 1 },
      emit: { p50: 7, p99: 7, max: 7, samples: 1 },
    });
    // disable clears them with everything else
    s.configure({ streaming_action: 'disable' });
    s.configure({ streaming_action: 'enable' });
    expect(status(s).latency_stages_ms.worker.samples).toBe(0);
  });

  it('keeps the last 2048 samples only', () => {
    const r = new LatencyReservoir();
    for (let i = 0; i < 5000; i++) r.record(i < 3500 ? 1000 : 1);
    expect(r.summary()).toEqual({ p50: 1, p99: 1000, max: 1000, samples: 2048 });
    r.record(-3);
    r.record(Number.NaN);
    expect(r.summary().samples).toBe(2048);
    expect(new LatencyReservoir(4).bytes).toBe(32);
  });
});

describe('stdout pressure and failures', () => {
  it('counts a refused write as dropped (stdout) and carries on', async () => {
    const { s, sent, time } = setup(async () => false);
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    s.offer(env(alert(), time.t));
    s.offer(env(alert()));
    s.offer(env(alert()));
    time.advance(1000);
    await settle();
    expect(sent).toHaveLength(2);
    const st = status(s);
    expect(st.dropped.stdout).toBe(3);
    expect(st.notify_count).toBe(0);
    expect(st.latency_ms.samples).toBe(0);
  });

  it('never throws when emit throws or rejects', async () => {
    let mode: 'throw' | 'reject' = 'throw';
    const { s, time } = setup(() => {
      if (mode === 'throw') throw new Error('sync');
      return Promise.reject(new Error('async'));
    });
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    expect(() => s.offer(env(alert()))).not.toThrow();
    mode = 'reject';
    time.advance(1000);
    s.offer(env(alert()));
    await settle();
    expect(status(s).dropped.stdout).toBe(2);
  });
});

describe('lifecycle', () => {
  it('disable stops at once and clears everything; re-enable starts fresh', async () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable', events: ['errors'], throttle_seconds: 10 });
    s.offer(env(alert(), time.t - 1));
    s.offer(env(alert()));
    s.offer(env(alert()));
    s.offer(env(alert({ category: 'ci', source: 'ci' })));
    await settle();
    expect(s.configure({ streaming_action: 'disable' })).toEqual({ status: 'disabled', pending_cleared: 2 });
    expect(time.active).toBe(0);
    const off = status(s);
    expect(off).toMatchObject({ status: 'disabled', notify_count: 0, pending: 0, latency_ms: { samples: 0 } });
    expect(off.config).toEqual({ events: ['all'], throttle_seconds: 5, url_filter: null, severity_min: 'warning' });
    expect(Object.values(off.dropped).every((n) => n === 0)).toBe(true);
    expect(s.footprint().dedup_entries).toBe(0);
    time.advance(60_000);
    expect(sent).toHaveLength(1);
    // fresh: no throttle window or dedup memory survives
    s.configure({ streaming_action: 'enable' });
    const again = sent[0]!.params.data as Alert;
    s.offer(env(again));
    expect(sent).toHaveLength(2);
  });

  it('rapid enable/disable/enable: a stale flush from the first enable never fires', () => {
    const { s, sent, time } = setup();
    time.clearWorks = false; // as if the old callback were already queued when clearTimeout ran
    s.configure({ streaming_action: 'enable', throttle_seconds: 5 });
    s.offer(env(alert()));
    s.offer(env(alert())); // arms the 5 s flush
    s.configure({ streaming_action: 'disable' });
    s.configure({ streaming_action: 'enable', throttle_seconds: 60 });
    s.offer(env(alert())); // immediate in the new generation
    s.offer(env(alert())); // waits 60 s
    time.advance(5000); // the first enable's timer runs now
    expect(sent).toHaveLength(2);
    expect(status(s).pending).toBe(1);
    time.advance(55_000);
    expect(sent).toHaveLength(3);
  });

  it('a flush racing with disable: a late result touches nothing and nothing throws', async () => {
    const releases: Array<(ok: boolean) => void> = [];
    const { s, sent, time } = setup(() => new Promise<boolean>((r) => releases.push(r)));
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    s.offer(env(alert(), time.t));
    s.offer(env(alert()));
    time.advance(1000); // the flush is in flight...
    expect(sent).toHaveLength(2);
    s.configure({ streaming_action: 'disable' }); // ...when the agent turns streaming off
    s.configure({ streaming_action: 'enable' });
    releases[0]!(true);
    releases[1]!(false);
    await settle();
    expect(status(s)).toMatchObject({ notify_count: 0, dropped: { stdout: 0 }, latency_ms: { samples: 0 } });
    expect(time.active).toBe(0);
  });

  it('reset() returns to off with the defaults', () => {
    const { s, time } = setup();
    s.configure({ streaming_action: 'enable', events: ['ci'], throttle_seconds: 60, url_filter: 'x', severity_min: 'error' });
    s.offer(env(alert({ category: 'ci', source: 'ci' })));
    s.offer(env(alert({ category: 'ci', source: 'ci' })));
    s.reset();
    expect(s.enabled).toBe(false);
    expect(status(s)).toMatchObject({ status: 'disabled', pending: 0, config: { events: ['all'], throttle_seconds: 5, url_filter: null, severity_min: 'warning' } });
    expect(time.active).toBe(0);
  });

  it('close() stops every timer, later offers are no-ops, and it leaks nothing', () => {
    const { s, sent, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    for (let i = 0; i < 20; i++) s.offer(env(alert()));
    expect(time.active).toBe(1);
    expect(time.unrefs).toBe(1); // every timer is unref'd
    s.close();
    s.close();
    expect(time.active).toBe(0);
    s.offer(env(alert()));
    expect(s.configure({ streaming_action: 'enable' })).toEqual({ error: { code: 'shutting_down', message: expect.any(String) } });
    s.offer(env(alert()));
    time.advance(120_000);
    expect(sent).toHaveLength(1);
    expect(time.active).toBe(0);
  });

  it('works on real timers by default, unref\'d', async () => {
    const sent: StreamNotification[] = [];
    const s = new StreamState({ emit: async (n) => (sent.push(n), true) });
    s.configure({ streaming_action: 'enable', throttle_seconds: 1 });
    s.offer(env(alert(), performance.timeOrigin + performance.now()));
    s.offer(env(alert()));
    await waitFor('the throttled second push on a real timer', () => sent.length >= 2, 3000);
    expect(sent).toHaveLength(2);
    const st = status(s);
    expect(st.latency_ms.samples).toBe(1);
    expect(st.latency_ms.max!).toBeLessThan(100);
    s.close();
  });
});

describe('memory', () => {
  const nasty = (n: number) => '"\u0001😀é'.repeat(n); // escapes, surrogate pairs, two-byte chars
  const worst = (i: number): Alert => ({
    severity: 'warning',
    category: 'regression',
    title: `${i} ${nasty(50)}`.slice(0, 200),
    detail: nasty(500),
    timestamp: nasty(10),
    source: nasty(10), // not a URL-meaningful source, so the url_filter below lets it through
    url: `https://x.test/${nasty(500)}`,
    count: Number.MAX_SAFE_INTEGER,
    dedup_key: nasty(75),
    correlation_id: nasty(20),
    context: { blob: nasty(1000) },
  });

  it('clip cuts by encoded length and never splits a surrogate pair', () => {
    expect(clip('short', 10)).toBe('short');
    for (let max = 3; max < 60; max++) {
      const c = clip(nasty(20), max);
      expect(JSON.stringify(c).length).toBeLessThanOrEqual(max);
      expect(c.endsWith('…')).toBe(true);
      expect(c).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it('a worst-case alert fits MAX_ALERT_JSON; a small context survives, a large one is marked', () => {
    for (let i = 0; i < 20; i++) expect(wireAlert(worst(i)).length).toBeLessThanOrEqual(MAX_ALERT_JSON);
    const ok = alert({ context: { page_url: '/x' } });
    expect(JSON.parse(wireAlert(ok))).toEqual(ok);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(JSON.parse(wireAlert(alert({ context: cyclic }))).context).toEqual({ truncated: true });
  });

  it('a full dedup cache (500) and a full batch (100) of worst-case alerts stay under 500 KB', () => {
    const { s, time } = setup();
    s.configure({ streaming_action: 'enable', throttle_seconds: 1, url_filter: 'x'.repeat(500) , events: ['all', 'errors', 'network_errors', 'performance', 'ci', 'noise', 'threshold', 'all', 'ci', 'noise'] });
    let i = 0;
    for (let round = 0; round < 5; round++) {
      for (let k = 0; k < 100; k++) s.offer(env(worst(i++)));
      time.advance(1000);
    }
    for (let k = 0; k < 150; k++) s.offer(env(worst(i++)));
    const f = s.footprint();
    expect(f.dedup_entries).toBe(500);
    expect(f.pending).toBe(100);
    expect(f.bytes).toBeLessThan(500_000);
  });
});
