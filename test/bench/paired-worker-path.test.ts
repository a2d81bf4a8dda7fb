/**
 * `--compare`'s worker path of two builds side by side: the sides must not be swapped (a build that
 * does four times the work reads as slower, whichever side it is on), a build without the task rig
 * is "not measured" with the reason, and the row's verdict follows its tolerance.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PAIRED_WORKER_PATH, pairedRow } from '../../bench/compare.js';
import { loadRig, pairedRounds, type Rig } from '../../bench/micro/paired-worker-path.js';

/** a rig whose every task does `work` units and reports 100 records */
function rig(work: number): Rig {
  let sink = 0;
  return {
    runNext() {
      for (let i = 0; i < work * 2000; i++) sink = (sink * 31 + i) | 0;
      return sink === 0.5 ? 0 : 100;
    },
  };
}

describe('paired rounds', () => {
  it('reads the side that does four times the work as slower, on either side', () => {
    const o = { rounds: 6, msPerRound: 20, warmRuns: 50 };
    const slowerHead = pairedRounds(rig(1), rig(4), o);
    expect(slowerHead.ratio).toBeGreaterThan(2);
    expect(slowerHead.head_us).toBeGreaterThan(slowerHead.base_us);
    const fasterHead = pairedRounds(rig(4), rig(1), o);
    expect(fasterHead.ratio).toBeLessThan(0.5);
    expect(fasterHead.ratio_p25).toBeLessThanOrEqual(fasterHead.ratio);
    expect(fasterHead.ratio_p75).toBeGreaterThanOrEqual(fasterHead.ratio);
    expect(fasterHead.rounds).toBe(6);
  });
});

describe('a build without the rig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paired-rig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says the file is missing, or that the build predates the rig', async () => {
    expect(await loadRig(join(dir, 'none'), [])).toMatch(/missing/);
    mkdirSync(join(dir, 'old', 'dist', 'bench', 'micro'), { recursive: true });
    writeFileSync(join(dir, 'old', 'dist', 'bench', 'micro', 'pipeline.bench.js'), 'export const other = 1;\n');
    expect(await loadRig(join(dir, 'old'), [])).toMatch(/no workerTaskRig/);
  });
});

describe('the compare row', () => {
  const m = { metric: PAIRED_WORKER_PATH, better: 'lower' as const, tolerance: 0.1 };
  const result = (ratio: number) => ({ base: 4, head: 4 * ratio, ratio, ratio_p25: ratio - 0.02, ratio_p75: ratio + 0.04 });

  it('is ok within the tolerance and regressed beyond it; its noise is half the ratios’ spread', () => {
    expect(pairedRow(m, result(0.94))).toMatchObject({ verdict: 'ok', ratio: 0.94, base_median: 4, observed_noise: 0.03 });
    expect(pairedRow(m, result(1.09)).verdict).toBe('ok');
    expect(pairedRow(m, result(1.12)).verdict).toBe('REGRESSED');
  });

  it('is not measured when the rounds could not run', () => {
    expect(pairedRow(m, 'base: no workerTaskRig')).toMatchObject({ verdict: 'not measured', ratio: null });
  });
});
