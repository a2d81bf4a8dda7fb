/**
 * Per-kind record counters in shared memory, so /health reads them without asking workers.
 * 64-bit because a busy ring passes 2^31 records in days; Number is exact up to 2^53.
 *
 * Accounting invariant, per kind:
 *   received = stored + rejected + sum(dropped)
 *   readable records (headOrd - tailOrd) = stored - evicted - cleared
 * Writers only change counters under the commit lock, inside a gen window (store.ts), so a
 * snapshot taken with the seqlock sees them agree.
 */
import { BASE_COUNTERS, COUNTER_STRIDE, DROP_REASONS, GEN, droppedSlot, type BaseCounter, type DropReason } from './layout.js';

export type KindCounters = { [K in BaseCounter]: number } & { dropped: Record<DropReason, number> };

const SNAPSHOT_TRIES = 64;

export class CounterView {
  readonly words: BigInt64Array;
  readonly kinds: number;

  constructor(buf: SharedArrayBuffer) {
    this.words = new BigInt64Array(buf);
    this.kinds = this.words.length / COUNTER_STRIDE;
  }

  add(kind: number, slot: number, n: number): void {
    if (n !== 0) Atomics.add(this.words, kind * COUNTER_STRIDE + slot, BigInt(n));
  }

  addDropped(kind: number, reason: DropReason, n: number): void {
    this.add(kind, droppedSlot(reason), n);
  }

  get(kind: number, slot: number): number {
    return Number(Atomics.load(this.words, kind * COUNTER_STRIDE + slot));
  }

  /** Reads every kind once; consistent only if no writer is in a gen window meanwhile. */
  read(): KindCounters[] {
    const out: KindCounters[] = [];
    for (let k = 0; k < this.kinds; k++) {
      const dropped = {} as Record<DropReason, number>;
      for (const r of DROP_REASONS) dropped[r] = this.get(k, droppedSlot(r));
      const c = { dropped } as KindCounters;
      BASE_COUNTERS.forEach((name, slot) => {
        c[name] = this.get(k, slot);
      });
      out.push(c);
    }
    return out;
  }

  /**
   * A consistent snapshot via the gen seqlock. Bounded retries, never waits: a writer preempted
   * inside its window (common on 2 cores) would make spinning futile, so the previous
   * consistent snapshot is returned instead (stale by that window), or the torn read if none.
   */
  snapshot(control: Int32Array): KindCounters[] {
    let last: KindCounters[] = [];
    for (let i = 0; i < SNAPSHOT_TRIES; i++) {
      const g = Atomics.load(control, GEN);
      last = this.read();
      if ((g & 1) === 0 && Atomics.load(control, GEN) === g) {
        this.lastGood = last;
        return last;
      }
    }
    return this.lastGood ?? last;
  }

  private lastGood: KindCounters[] | undefined;
}

export function sumDropped(c: KindCounters): number {
  let s = 0;
  for (const r of DROP_REASONS) s += c.dropped[r];
  return s;
}
