/** An error's context: the newest few records of a range that pass a header test, parsing only those. */
import { describe, expect, it } from 'vitest';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';
import { lastMatching } from '../../../src/query/last-matching.js';

/** n log records, clientTime = i; every 5th a warning, the rest info */
function store(n: number, ringBytes = 16 * 1024 * 1024) {
  const buffers = allocateStore([ringBytes, 4096, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  for (let i = 0; i < n; i += 500) {
    const records = Array.from({ length: Math.min(500, n - i) }, (_, j) => {
      const k = i + j;
      return { kind: 0, clientTime: k, tab: 1, payload: Buffer.from(JSON.stringify({ level: k % 5 === 0 ? 'warn' : 'info', message: `m${k}` })) };
    });
    writer.commit({ recvTime: 1, records, received: [records.length], rejected: [] });
  }
  return new StoreReader(buffers);
}

const messages = (hits: Array<{ rec: Record<string, unknown> }>) => hits.map((h) => h.rec.message);

describe('lastMatching', () => {
  it('returns the newest n inside the header window, oldest first', () => {
    const reader = store(3000);
    const hits = lastMatching(reader, { kind: 0, from: 0, n: 4, maxScan: 3000, where: (h) => h.clientTime >= 1000 && h.clientTime <= 1500 });
    expect(messages(hits)).toEqual(['m1497', 'm1498', 'm1499', 'm1500']);
    expect(hits.map((h) => h.ord)).toEqual([1497, 1498, 1499, 1500]);
  });

  it('stops before `to`, and looks no further than maxScan', () => {
    const reader = store(3000);
    expect(messages(lastMatching(reader, { kind: 0, from: 0, to: 700, n: 2, maxScan: 3000, where: () => true }))).toEqual(['m698', 'm699']);
    expect(messages(lastMatching(reader, { kind: 0, from: 100, n: 2, maxScan: 50, where: () => true }))).toEqual(['m148', 'm149']);
  });

  it('a byte pre-filter and a parsed check keep only what truly qualifies', () => {
    const reader = store(3000);
    // the bytes admit every warning; the parsed check has the final word (here: those ending in 0)
    const hits = lastMatching(reader, {
      kind: 0,
      from: 0,
      to: 2600,
      n: 3,
      maxScan: 3000,
      where: () => true,
      anyOf: [Buffer.from('"level":"warn"')],
      verify: (rec) => rec.level === 'warn' && String(rec.message).endsWith('0'),
    });
    expect(messages(hits)).toEqual(['m2570', 'm2580', 'm2590']);
  });

  it('finds fewer than n, or nothing, without complaint', () => {
    const reader = store(100);
    expect(messages(lastMatching(reader, { kind: 0, from: 0, n: 8, maxScan: 100, where: (h) => h.clientTime < 3 }))).toEqual(['m0', 'm1', 'm2']);
    expect(lastMatching(reader, { kind: 0, from: 0, n: 8, maxScan: 100, where: () => false })).toEqual([]);
    expect(lastMatching(reader, { kind: 0, from: 100, n: 8, maxScan: 100, where: () => true })).toEqual([]);
  });

  it('on a ring that wrapped, starts at what is still there', () => {
    const reader = store(20_000, 256 * 1024);
    const tail = reader.tailOrd(0);
    expect(tail).toBeGreaterThan(0);
    const hits = lastMatching(reader, { kind: 0, from: tail, n: 2, maxScan: 20_000, where: () => true });
    expect(messages(hits)).toEqual(['m19998', 'm19999']);
  });
});
