/**
 * Edge-to-stdout latency of streamed alerts: a fixed ring of the most recent samples, so the
 * percentiles describe what the agent sees now and the memory never grows (2048 × 8 bytes).
 */

export interface LatencySummary {
  /** null until the first sample: a 0 would read as "instant" */
  p50: number | null;
  p99: number | null;
  max: number | null;
  samples: number;
}

export const LATENCY_SAMPLES = 2048;

export class LatencyReservoir {
  private readonly ring: Float64Array;
  private next = 0;
  private filled = 0;

  constructor(capacity = LATENCY_SAMPLES) {
    this.ring = new Float64Array(capacity);
  }

  record(ms: number): void {
    if (!Number.isFinite(ms)) return;
    // Clocks of different threads can disagree by a hair; a negative latency is noise, not news.
    this.ring[this.next] = Math.max(0, ms);
    this.next = (this.next + 1) % this.ring.length;
    if (this.filled < this.ring.length) this.filled++;
  }

  clear(): void {
    this.next = 0;
    this.filled = 0;
  }

  get bytes(): number {
    return this.ring.byteLength;
  }

  /** Nearest-rank percentiles; sorting ≤ 2048 doubles on a status call costs well under a millisecond. */
  summary(): LatencySummary {
    const n = this.filled;
    if (n === 0) return { p50: null, p99: null, max: null, samples: 0 };
    const sorted = this.ring.slice(0, n).sort();
    const rank = (p: number): number => round2(sorted[Math.min(n - 1, Math.ceil(p * n) - 1)]!);
    return { p50: rank(0.5), p99: rank(0.99), max: round2(sorted[n - 1]!), samples: n };
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
