/**
 * The worker path of two builds side by side in one process, for `--compare` (issue 17's "shows the
 * worker path gains beyond the noise"). Each build's own task function (`workerTaskRig` in its
 * dist/bench/micro/pipeline.bench.js) runs the same frames — head's bench frames, so both see the
 * same bytes — in short CPU rounds, A then B, the order swapped every round; the figure is the
 * median of the per-round ratios. Two whole daemons run one after the other swung ±20 % on this
 * shared machine; rounds of 120 ms that alternate see the same neighbours and the same clock.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildFramePool } from '../load/frames.js';
import { pairedStats, type PairedRatios } from '../paired-stats.js';

export interface Rig {
  runNext(): number;
}

/** `ratio`: head ÷ base per round, then the median: below 1 is faster */
export interface PairedResult extends PairedRatios {
  /** CPU µs per record, median over rounds, per side */
  base_us: number;
  head_us: number;
  rounds: number;
}

export interface PairedOptions {
  rounds?: number;
  msPerRound?: number;
  /** task runs per side before the first round (the JIT settles) */
  warmRuns?: number;
}

/** CPU µs per record of one round: as many tasks as fit in `ms` of wall time */
function round(rig: Rig, ms: number): number {
  const c0 = process.cpuUsage();
  const end = performance.now() + ms;
  let records = 0;
  while (performance.now() < end) records += rig.runNext();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / Math.max(1, records);
}

/** Alternated rounds of two rigs; exported for its test, which runs it on rigs of known cost. */
export function pairedRounds(base: Rig, head: Rig, o: PairedOptions = {}): PairedResult {
  const rounds = o.rounds ?? 40;
  const ms = o.msPerRound ?? 120;
  for (let i = 0; i < (o.warmRuns ?? 2000); i++) {
    base.runNext();
    head.runNext();
  }
  const b: number[] = [];
  const h: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let x: number;
    let y: number;
    if (r % 2 === 0) {
      x = round(base, ms);
      y = round(head, ms);
    } else {
      y = round(head, ms);
      x = round(base, ms);
    }
    b.push(x);
    h.push(y);
  }
  const { base: base_us, head: head_us, ...ratios } = pairedStats(b, h);
  return { base_us, head_us, ...ratios, rounds };
}

/** A build's task rig over `frames`, or why there is none (a base from before the rig existed, or not built). */
export async function loadRig(root: string, frames: readonly Uint8Array[]): Promise<Rig | string> {
  const file = join(root, 'dist', 'bench', 'micro', 'pipeline.bench.js');
  if (!existsSync(file)) return `${file} is missing (not built)`;
  const mod = (await import(pathToFileURL(file).href)) as { workerTaskRig?: (f: readonly Uint8Array[]) => Rig };
  if (typeof mod.workerTaskRig !== 'function') return 'the build has no workerTaskRig (older than the pipeline bench’s task rig)';
  return mod.workerTaskRig(frames);
}

/** The worker paths of the builds in `baseRoot` and `headRoot`, on head's bench frames. */
export async function pairedWorkerPath(baseRoot: string, headRoot: string, o: PairedOptions = {}): Promise<PairedResult | string> {
  const frames = buildFramePool(42, 64).frames;
  const base = await loadRig(baseRoot, frames);
  if (typeof base === 'string') return `base: ${base}`;
  const head = await loadRig(headRoot, frames);
  if (typeof head === 'string') return `head: ${head}`;
  return pairedRounds(base, head, o);
}
