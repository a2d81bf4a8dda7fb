/**
 * The POST /logs profile compares servers serving steadily: with warmupMs the same load runs
 * unmeasured first, and what it served is kept beside the window's figures, so a start-up
 * regression still shows. Against the ceiling server (no Go binary needed).
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../../bench/load/server-proc.js';
import { runHttpLoad, runHttpPaired } from '../../bench/load/http-load.js';

describe('runHttpLoad', () => {
  it('runs the warm-up unmeasured and reports what it served apart from the window', async () => {
    const r = await runHttpLoad({ target: 'ceiling', port: await freePort(), durationMs: 1000, warmupMs: 1000, connections: 2 });
    expect(r.skipped).toBeUndefined();
    expect(r.warmup_s).toBe(1);
    expect(r.warmup_entries_per_s).toBeGreaterThan(0);
    expect(r.ok_2xx).toBeGreaterThan(0);
    expect(r.non2xx).toBe(0);
    // the window's own count: its rate over its own duration, the warm-up's requests not in it
    expect(r.req_per_s).toBe(Math.round(r.ok_2xx / r.duration_s));
    expect(r.duration_s).toBeLessThan(1.9);
  }, 30_000);

  it('without a warm-up there is no warm-up figure', async () => {
    const r = await runHttpLoad({ target: 'ceiling', port: await freePort(), durationMs: 1000, connections: 2 });
    expect(r.warmup_s).toBe(0);
    expect(r.warmup_entries_per_s).toBeNull();
    expect(r.ok_2xx).toBeGreaterThan(0);
  }, 30_000);
});

describe('runHttpPaired', () => {
  it('alternates the two servers round by round, swapping who goes first, and divides pair by pair', async () => {
    const r = await runHttpPaired({ a: { target: 'ceiling', port: await freePort() }, b: { target: 'ceiling', port: await freePort() }, rounds: 3, roundMs: 1000, warmupMs: 1000, connections: 2 });
    if ('skipped' in r) throw new Error(r.skipped);
    expect(r.rounds.map((x) => x.first)).toEqual(['a', 'b', 'a']);
    for (const x of r.rounds) {
      expect(x.a_entries_per_s).toBeGreaterThan(0);
      expect(x.b_entries_per_s).toBeGreaterThan(0);
    }
    // the figure is the median of the rounds' own ratios, not the ratio of the sums
    const ratios = r.rounds.map((x) => x.a_entries_per_s / x.b_entries_per_s).sort((p, q) => p - q);
    expect(r.ratio.ratio).toBeCloseTo(ratios[1]!, 3);
    expect(r.ratio.ratio_p25).toBeLessThanOrEqual(r.ratio.ratio);
    expect(r.ratio.ratio_p75).toBeGreaterThanOrEqual(r.ratio.ratio);
    // each side's figures sum its own three windows; the warm-up is reported apart
    for (const side of [r.a, r.b]) {
      expect(side.duration_s).toBeGreaterThan(2.5);
      expect(side.duration_s).toBeLessThan(4.5);
      expect(side.warmup_entries_per_s).toBeGreaterThan(0);
      expect(side.req_per_s).toBe(Math.round(side.ok_2xx / side.duration_s));
      expect(side.non2xx).toBe(0);
    }
  }, 60_000);
});
