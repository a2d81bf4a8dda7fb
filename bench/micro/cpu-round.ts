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
