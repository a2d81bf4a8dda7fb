/**
 * `--compare`'s observe of two builds at once: the per-pair ratios are head ÷ base (not swapped),
 * two real daemons answer the same read under the same load, and a base that cannot run is "not
 * measured" with the reason, leaving no process behind.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pairedSummary } from '../../bench/load/paired-observe.js';
import { ROOT } from '../../bench/load/server-proc.js';

// the producers are worker threads that load their own file: run the built bench, as `pnpm bench` does
const { pairedObserve } = (await import(pathToFileURL(join(ROOT, 'dist/bench/load/paired-observe.js')).href)) as typeof import('../../bench/load/paired-observe.js');

/** gasoline processes started from this test's process */
function ourDaemons(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), '-f', 'bin/gasoline'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
}

describe('pairedSummary', () => {
  it('divides head by base pair by pair and takes the median and quartiles of those ratios', () => {
    // pair-wise ratios 0.5, 0.5, 0.5, 2, 0.5: the median ratio is 0.5 although the medians are 4 / 4
    const s = pairedSummary([8, 8, 8, 2, 8], [4, 4, 4, 4, 4]);
    expect(s).toMatchObject({ base_ms: 8, head_ms: 4, ratio: 0.5, ratio_p25: 0.5, pairs: 5, base_max_ms: 8, head_max_ms: 4 });
    expect(pairedSummary([1, 1], [3, 3]).ratio).toBe(3);
  });

  it('refuses samples that are not pairs', () => {
    expect(() => pairedSummary([1, 2], [1])).toThrow(/one length/);
    expect(() => pairedSummary([], [])).toThrow(/non-empty/);
  });
});

describe('pairedObserve', () => {
  it('runs two real daemons under the same load and reads the same answers from both', { timeout: 90_000 }, async () => {
    const r = await pairedObserve(ROOT, ROOT, { pairs: 6, pairEveryMs: 200, warmCalls: 2, rate: 4000 });
    if (typeof r === 'string') throw new Error(r);
    expect(r.pairs).toBe(6);
    expect(r.base_ms).toBeGreaterThan(0);
    expect(r.head_ms).toBeGreaterThan(0);
    expect(r.ratio).toBeGreaterThan(0);
    // both stores took every event offered, and both answers carry the read's groups
    expect(r.accepted_events).toBe(r.head_accepted_events);
    expect(r.accepted_events).toBeGreaterThan(0);
    expect(r.base_answer_chars).toBeGreaterThan(200);
    expect(r.head_answer_chars).toBeGreaterThan(200);
    expect(ourDaemons()).toEqual([]);
  });

  it('says why when a build is missing, before starting either', { timeout: 60_000 }, async () => {
    const r = await pairedObserve(ROOT, '/nonexistent-gasoline-build', { pairs: 2 });
    expect(r).toMatch(/^head: .* is missing/);
    expect(ourDaemons()).toEqual([]);
  });
});
