/**
 * The POST /logs profile compares servers serving steadily: with warmupMs the same load runs
 * unmeasured first, and what it served is kept beside the window's figures, so a start-up
 * regression still shows. Against the ceiling server (no Go binary needed).
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../../bench/load/server-proc.js';
import { runHttpLoad } from '../../bench/load/http-load.js';

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
