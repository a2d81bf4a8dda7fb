/**
 * What the anomaly detectors remember, shared by every ingest worker so that "new", "spike" and
 * "baseline" mean the same whichever worker a batch lands on:
 *
 * - error time buckets: 64 one-second buckets (stamp, count), O(1) per error;
 * - a keyed table of recent signatures (hash → last seen, count in window), bounded, for "not
 *   seen in the last 30 s", once-per-window suppression and noise counting;
 * - per-URL performance baselines.
 *
 * One spin lock guards the keyed tables; it is held for a handful of loads and stores. Only
 * workers take it (main never blocks); a worker that cannot get it within a bounded spin skips
 * that detection and counts the skip instead of waiting.
 */

const BUCKETS = 64;
const KEYED_SLOTS = 8192;
const KEYED_WORDS = 4; // hash, last seen (s), window start (s), count in window
const PROBES = 8;
const PERF_SLOTS = 256;
export const PERF_METRICS = ['ttfb', 'fcp', 'lcp', 'cls', 'inp', 'dom_content_loaded', 'load'] as const;
const PERF_WORDS = 4; // hash, baseline count, regressed flag, (pad)

// header words
const LOCK = 0;
const LAST_SPIKE_CHECK = 1;
const LOCK_SKIPS = 2;
const ALERT_SEC = 3;
const ALERT_COUNT = 4;
const ALERTS_SUPPRESSED = 5;
const HEADER = 8;

/**
 * Alerts per second from the per-event sources (new errors, server errors, closes, noise), all
 * workers together. A page throwing thousands of distinct errors a second is one story — the
 * spike alert tells it — not thousands of alerts: past these, they are counted, not sent. The
 * allowance is per scope (source and host) first, so one flooding origin cannot starve another's
 * alerts (a 5xx from the API must still be heard while the page spews console errors), then
 * overall.
 */
export const MAX_ALERTS_PER_SCOPE_PER_S = 20;
export const MAX_EVENT_ALERTS_PER_S = 200;

export interface DetectStateBuffers {
  words: SharedArrayBuffer;
  perf: SharedArrayBuffer;
}

export function allocateDetectState(): DetectStateBuffers {
  return {
    words: new SharedArrayBuffer((HEADER + BUCKETS * 2 + KEYED_SLOTS * KEYED_WORDS + PERF_SLOTS * PERF_WORDS) * 4),
    perf: new SharedArrayBuffer(PERF_SLOTS * PERF_METRICS.length * 8),
  };
}

/** FNV-1a, 32 bits, never 0 (0 marks an empty slot). The basis as the int32 it is: as a double it kept the loop in doubles. */
export function hash32(s: string): number {
  let h = -2128831035; // 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h === 0 ? 1 : h | 0;
}

export class DetectState {
  private readonly w: Int32Array;
  private readonly perfVals: Float64Array;
  private readonly bucketsAt = HEADER;
  private readonly keyedAt = HEADER + BUCKETS * 2;
  private readonly perfAt = HEADER + BUCKETS * 2 + KEYED_SLOTS * KEYED_WORDS;

  constructor(b: DetectStateBuffers) {
    this.w = new Int32Array(b.words);
    this.perfVals = new Float64Array(b.perf);
  }

  get lockSkips(): number {
    return Atomics.load(this.w, LOCK_SKIPS);
  }

  /** alerts not sent because the per-second cap was reached */
  get alertsSuppressed(): number {
    return Atomics.load(this.w, ALERTS_SUPPRESSED);
  }

  /** One alert's place in this second's allowance for its scope and overall; false (and counted) once used up. */
  claimAlert(sec: number, scope: number): boolean {
    const mine = this.touch(scope ^ 0x6a09e667, sec, 1);
    if (mine && mine.countInWindow > MAX_ALERTS_PER_SCOPE_PER_S) {
      Atomics.add(this.w, ALERTS_SUPPRESSED, 1);
      return false;
    }
    const stamp = Atomics.load(this.w, ALERT_SEC);
    if (stamp !== sec && Atomics.compareExchange(this.w, ALERT_SEC, stamp, sec) === stamp) Atomics.store(this.w, ALERT_COUNT, 0);
    if (Atomics.add(this.w, ALERT_COUNT, 1) < MAX_EVENT_ALERTS_PER_S) return true;
    Atomics.add(this.w, ALERTS_SUPPRESSED, 1);
    return false;
  }

  /** Runs `fn` under the lock, or returns undefined (counted) when the lock stays busy. */
  locked<T>(fn: () => T): T | undefined {
    for (let i = 0; i < 20_000; i++) {
      if (Atomics.compareExchange(this.w, LOCK, 0, 1) === 0) {
        try {
          return fn();
        } finally {
          Atomics.store(this.w, LOCK, 0);
        }
      }
    }
    Atomics.add(this.w, LOCK_SKIPS, 1);
    return undefined;
  }

  // ── error buckets ──

  /** Counts one error at second `sec`. */
  countError(sec: number, n = 1): void {
    const at = this.bucketsAt + (sec & (BUCKETS - 1)) * 2;
    const stamp = Atomics.load(this.w, at);
    if (stamp !== sec) {
      // the first error of a new second resets the bucket; a racing writer's count may be lost,
      // which only makes a spike look a little smaller
      if (Atomics.compareExchange(this.w, at, stamp, sec) === stamp) Atomics.store(this.w, at + 1, 0);
    }
    Atomics.add(this.w, at + 1, n);
  }

  /** errors counted in the `span` seconds ending at `sec` (inclusive) */
  errorsIn(sec: number, span: number): number {
    let n = 0;
    for (let s = sec - span + 1; s <= sec; s++) {
      const at = this.bucketsAt + (s & (BUCKETS - 1)) * 2;
      if (Atomics.load(this.w, at) === s) n += Atomics.load(this.w, at + 1);
    }
    return n;
  }

  /** true for exactly one caller per second: the spike check runs once a second, not per event */
  claimSpikeCheck(sec: number): boolean {
    const last = Atomics.load(this.w, LAST_SPIKE_CHECK);
    return last !== sec && Atomics.compareExchange(this.w, LAST_SPIKE_CHECK, last, sec) === last;
  }

  // ── keyed table ──

  /**
   * Notes one occurrence of `key` at `sec`. Returns the time it was last seen before (or -1 when
   * it was not in the table) and its count in the current window of `windowS` seconds.
   */
  touch(key: number, sec: number, windowS: number): { lastSeen: number; countInWindow: number } | undefined {
    return this.locked(() => {
      const base = this.keyedAt;
      let victim = -1;
      let victimSeen = Infinity;
      for (let p = 0; p < PROBES; p++) {
        const slot = base + (((key >>> 0) + p) & (KEYED_SLOTS - 1)) * KEYED_WORDS;
        const h = this.w[slot]!;
        if (h === key) {
          const lastSeen = this.w[slot + 1]!;
          this.w[slot + 1] = sec;
          if (sec - this.w[slot + 2]! >= windowS) {
            this.w[slot + 2] = sec;
            this.w[slot + 3] = 0;
          }
          const count = ++this.w[slot + 3]!;
          return { lastSeen, countInWindow: count };
        }
        const seen = h === 0 ? -Infinity : this.w[slot + 1]!;
        if (seen < victimSeen) {
          victimSeen = seen;
          victim = slot;
        }
      }
      // not there: take an empty slot or the stalest of the probed ones
      this.w[victim] = key;
      this.w[victim + 1] = sec;
      this.w[victim + 2] = sec;
      this.w[victim + 3] = 1;
      return { lastSeen: -1, countInWindow: 1 };
    });
  }

  /**
   * `key`'s count in its current window of `windowS` seconds at `sec`, without noting an
   * occurrence (0 when absent or its window is over). Pairs two records that describe one thing
   * (#20 item 9: a failed request's network record and its console line).
   */
  peek(key: number, sec: number, windowS: number): number | undefined {
    return this.locked(() => {
      for (let p = 0; p < PROBES; p++) {
        const slot = this.keyedAt + (((key >>> 0) + p) & (KEYED_SLOTS - 1)) * KEYED_WORDS;
        if (this.w[slot] === key) return sec - this.w[slot + 2]! >= windowS ? 0 : this.w[slot + 3]!;
      }
      return 0;
    });
  }

  // ── performance baselines ──

  /**
   * Compares a snapshot with the URL's baseline and folds it in when it is not a regression.
   * `isRegression(baseline, current)` decides; returns the baseline it compared against (null
   * for the first snapshot) and whether the URL was, and now is, regressed.
   */
  comparePerf(
    urlKey: number,
    current: Partial<Record<(typeof PERF_METRICS)[number], number>>,
    isRegression: (baseline: Partial<Record<(typeof PERF_METRICS)[number], number>>) => boolean,
  ): { baseline: Partial<Record<(typeof PERF_METRICS)[number], number>> | null; wasRegressed: boolean; regressed: boolean } | undefined {
    return this.locked(() => {
      let slot = -1;
      let empty = -1;
      for (let p = 0; p < PROBES; p++) {
        const s = ((urlKey >>> 0) + p) & (PERF_SLOTS - 1);
        const h = this.w[this.perfAt + s * PERF_WORDS]!;
        if (h === urlKey) {
          slot = s;
          break;
        }
        if (h === 0 && empty < 0) empty = s;
      }
      if (slot < 0) {
        // a new URL: its first snapshot is the baseline (a full table forgets the probe's first)
        slot = empty >= 0 ? empty : (urlKey >>> 0) & (PERF_SLOTS - 1);
        const at = this.perfAt + slot * PERF_WORDS;
        this.w[at] = urlKey;
        this.w[at + 1] = 0;
        this.w[at + 2] = 0;
        this.fold(slot, current, 0);
        this.w[at + 1] = 1;
        return { baseline: null, wasRegressed: false, regressed: false };
      }
      const at = this.perfAt + slot * PERF_WORDS;
      const n = this.w[at + 1]!;
      const baseline: Partial<Record<(typeof PERF_METRICS)[number], number>> = {};
      PERF_METRICS.forEach((m, i) => {
        const v = this.perfVals[slot * PERF_METRICS.length + i]!;
        if (!Number.isNaN(v)) baseline[m] = v;
      });
      const wasRegressed = this.w[at + 2] === 1;
      const regressed = isRegression(baseline);
      this.w[at + 2] = regressed ? 1 : 0;
      if (!regressed) {
        // a running mean over the last ≤ 20 good snapshots: slow drift is followed, a jump is not
        this.fold(slot, current, Math.min(n, 19));
        this.w[at + 1] = Math.min(n + 1, 20);
      }
      return { baseline, wasRegressed, regressed };
    });
  }

  private fold(slot: number, current: Partial<Record<(typeof PERF_METRICS)[number], number>>, n: number): void {
    PERF_METRICS.forEach((m, i) => {
      const idx = slot * PERF_METRICS.length + i;
      const c = current[m];
      const old = this.perfVals[idx]!;
      if (typeof c !== 'number') {
        if (n === 0) this.perfVals[idx] = Number.NaN;
        return;
      }
      this.perfVals[idx] = n === 0 || Number.isNaN(old) ? c : (old * n + c) / (n + 1);
    });
  }
}
