/**
 * HDR histograms in microseconds, shipped between threads as compressed base64 and merged in
 * the main thread. Percentiles only come from here, never from means.
 */
import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

export function newHistogram(): Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3, autoResize: true });
}

export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

export function mergeHistograms(encoded: readonly string[]): Histogram {
  const out = newHistogram();
  for (const e of encoded) out.add(hdr.decodeFromCompressedBase64(e));
  return out;
}

export interface Percentiles {
  count: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
}

const ms = (us: number): number => Math.round(us) / 1000;

export function percentiles(h: Histogram): Percentiles {
  return {
    count: h.totalCount,
    p50_ms: ms(h.getValueAtPercentile(50)),
    p99_ms: ms(h.getValueAtPercentile(99)),
    p999_ms: ms(h.getValueAtPercentile(99.9)),
    max_ms: ms(h.maxValue),
  };
}
