import { expect } from 'vitest';
import { sumDropped, type StoreReader } from '../../../src/shm/index.js';

/** The accounting invariant, for every kind, checked after every case. */
export function expectBalanced(reader: StoreReader): void {
  const counters = reader.counters();
  counters.forEach((c, k) => {
    expect(c.received, `kind ${k}: received = stored + rejected + dropped`).toBe(c.stored + c.rejected + sumDropped(c));
    const s = reader.ringStats(k);
    expect(s.records, `kind ${k}: readable = stored - evicted - cleared`).toBe(c.stored - c.evicted - c.cleared);
    expect(s.headOrd, `kind ${k}: every stored record took an ordinal`).toBe(c.stored);
    expect(s.usedBytes).toBeLessThanOrEqual(s.capacity);
  });
}
