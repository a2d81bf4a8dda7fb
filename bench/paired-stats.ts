/**
 * The arithmetic of `--compare`'s paired figures (paired-worker-path.ts, load/paired-ingest.ts,
 * load/paired-observe.ts): samples taken base and head together, one pair at a time, so the ratio
 * is taken pair by pair before any median; each pair saw the same neighbours.
 */

/** head ÷ base per pair, then the median, and the middle half of those ratios (this run's noise) */
export interface PairedRatios {
  ratio: number;
  ratio_p25: number;
  ratio_p75: number;
}

export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))]!;
}

export const r3 = (v: number): number => Math.round(v * 1000) / 1000;

/** The medians per side and the ratios of samples taken in pairs (`base[i]` with `head[i]`). */
export function pairedStats(base: readonly number[], head: readonly number[]): PairedRatios & { base: number; head: number } {
  if (base.length === 0 || base.length !== head.length) throw new Error(`paired samples must be non-empty and of one length (${base.length} / ${head.length})`);
  const ratios = base.map((b, i) => head[i]! / b);
  return { base: r3(quantile(base, 0.5)), head: r3(quantile(head, 0.5)), ratio: r3(quantile(ratios, 0.5)), ratio_p25: r3(quantile(ratios, 0.25)), ratio_p75: r3(quantile(ratios, 0.75)) };
}
