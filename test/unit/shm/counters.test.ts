import { describe, expect, it } from 'vitest';
import { DROP_REASONS, StoreReader, StoreWriter, allocateStore, storeSizes, type StagedRecord } from '../../../src/shm/index.js';
import { ordPayload } from '../../fixtures/shm-gen.js';
import { expectBalanced } from './balance.js';

const rec = (kind: number, size: number): StagedRecord => ({ kind, clientTime: 0, tab: 1, payload: ordPayload(kind, 0, size) });

describe('shm counters', () => {
  it('sizes the store in one place; DROP_REASONS is the append-only list the layout depends on', () => {
    expect(DROP_REASONS).toEqual(['duplicate', 'record_too_large']);
    const s = storeSizes([64 * 1024, 4096 * 1024 * 1024]);
    expect(s.ringCapacities).toEqual([64 * 1024, 4096 * 1024 * 1024]);
    expect(s.indexSlots[0]).toBe(Math.ceil((64 * 1024) / (64 * 48)) + 2);
    expect(s.countersBytes).toBe(2 * (5 + DROP_REASONS.length) * 8);
  });

  it('counts rejected, dropped per reason and counts-only commits, past 2^31', () => {
    const store = allocateStore([1024, 1024]);
    const w = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const big = 3_000_000_000;
    const out = w.commit({ recvTime: 0, records: [], received: [big + 5, 2], rejected: [big, 0], dropped: [[0, 'duplicate', 3], [0, 'record_too_large', 2], [1, 'record_too_large', 2]] });
    expect(out).toEqual({ firstSeq: -1, lastSeq: -1, stored: [0, 0], tooLarge: 0 });
    const c = reader.counters();
    expect(c[0]).toEqual({
      received: big + 5,
      stored: 0,
      rejected: big,
      evicted: 0,
      cleared: 0,
      dropped: { duplicate: 3, record_too_large: 2 },
    });
    expect(c[1]!.dropped.record_too_large).toBe(2);
    expectBalanced(reader);
  });

  it('tryClear empties rings (counted cleared), readers learn exactly what they missed, writing goes on', () => {
    const store = allocateStore([512, 512, 512]);
    const w = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const recs = [rec(0, 10), rec(0, 10), rec(0, 10), rec(1, 10), rec(2, 10)];
    w.commit({ recvTime: 0, records: recs, received: [3, 1, 1], rejected: [] });
    const cur = reader.read(0, 0, 1).next;
    expect(reader.tryClear([0, 1])).toBe(true);
    expect(reader.ringStats(0)).toMatchObject({ records: 0, usedBytes: 0, headOrd: 3, tailOrd: 3 });
    expect(reader.read(0, cur, 10)).toMatchObject({ records: [], missed: 2, next: 3, atEnd: true });
    expect(reader.read(2, 0, 10).records).toHaveLength(1);
    w.commit({ recvTime: 1, records: [rec(0, 20)], received: [1], rejected: [] });
    expect(reader.read(0, 3, 10).records.map((r) => r.ord)).toEqual([3]);
    expect(reader.counters()[0]).toMatchObject({ stored: 4, cleared: 3 });
    expect(reader.counters()[1]).toMatchObject({ stored: 1, cleared: 1 });
    expect(reader.tryClear([])).toBe(true);
    expect(() => reader.tryClear([9])).toThrow(RangeError);
    expectBalanced(reader);
  });

  it('tryClear gives up at once while a writer holds the lock', () => {
    const store = allocateStore([512]);
    const reader = new StoreReader(store);
    let inside: boolean | undefined;
    const w = new StoreWriter(store, 3, { afterCopy: () => (inside = reader.tryClear([0])) });
    w.commit({ recvTime: 0, records: [rec(0, 1)], received: [1], rejected: [] });
    expect(inside).toBe(false);
    expect(reader.ringStats(0).records).toBe(1);
    expectBalanced(reader);
  });
});
