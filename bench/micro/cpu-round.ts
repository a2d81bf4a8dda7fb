/**
 * One timed round of a micro benchmark in CPU time, not wall time: on a shared machine a round's
 * wall time includes the other processes' turns. `fn` runs until `ms` of wall time have passed and
 * returns how many records each run handled.
 */
export function cpuRound(fn: () => number, ms: number): { ms: number; cpuMs: number; records: number } {
  const end = performance.now() + ms;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let records = 0;
  while (performance.now() < end) records += fn();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000, records };
}

/** The median of per-round figures, rounded to `digits` decimals (an even count takes the upper middle). */
export function medianOf(xs: readonly number[], digits = 3): number {
  const v = [...xs].sort((a, b) => a - b);
  const f = 10 ** digits;
  return Math.round(v[v.length >> 1]! * f) / f;
}

/** What `stagedRounds` gives: CPU µs per record, each the median over rounds (3 decimals). */
export interface StagedCosts<S extends string> {
  stages: Record<S, number>;
  /** the stages' sum */
  sum: number;
  /** the same path with no timer inside */
  whole: number;
  /** the reference path */
  bare: number;
  /** whole ÷ bare per round, then the median: neighbours that slow one round slow both sides of it */
  ratio: number;
}

/**
 * A path split into stages, timed on a shared machine. `timed` runs the path once, adding each
 * stage's wall ms into `acc`; each round's CPU time is split between the stages in the proportions
 * of their wall times, so a neighbour's turn on the core is not billed to whichever stage it
 * interrupted. Rounds of it alternate with rounds of the same path untimed (`whole`) and of a
 * reference (`bare`), after 300 runs of each so every path is warm. Each returns records handled.
 */
export function stagedRounds<S extends string>(
  stages: readonly S[],
  acc: Record<S, number>,
  paths: { timed: () => number; whole: () => number; bare: () => number },
  rounds: number,
  msPerRound: number,
): StagedCosts<S> {
  for (let i = 0; i < 300; i++) (paths.timed(), paths.whole(), paths.bare());
  const per = new Map<string, number[]>([...stages, 'sum', 'whole', 'bare', 'ratio'].map((k) => [k, []]));
  const push = (k: string, v: number): void => void per.get(k)!.push(v);
  for (let r = 0; r < rounds; r++) {
    for (const s of stages) acc[s] = 0;
    const a = cpuRound(paths.timed, msPerRound);
    let wall = 0;
    for (const s of stages) wall += acc[s];
    let sum = 0;
    for (const s of stages) {
      const us = ((acc[s] / wall) * a.cpuMs * 1000) / a.records;
      push(s, us);
      sum += us;
    }
    push('sum', sum);
    const w = cpuRound(paths.whole, msPerRound);
    const b = cpuRound(paths.bare, msPerRound);
    const wholeUs = (w.cpuMs * 1000) / w.records;
    const bareUs = (b.cpuMs * 1000) / b.records;
    push('whole', wholeUs);
    push('bare', bareUs);
    push('ratio', wholeUs / bareUs);
  }
  const med = (k: string): number => medianOf(per.get(k)!);
  return { stages: Object.fromEntries(stages.map((s) => [s, med(s)])) as Record<S, number>, sum: med('sum'), whole: med('whole'), bare: med('bare'), ratio: med('ratio') };
}
