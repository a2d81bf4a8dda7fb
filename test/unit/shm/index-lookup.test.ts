import { describe, expect, it } from 'vitest';
import { StoreReader, StoreWriter, allocateStore, framedSize, type StagedRecord } from '../../../src/shm/index.js';
import { mulberry32, ordPayload, randInt } from '../../fixtures/shm-gen.js';
import { RingModel } from '../../fixtures/shm-model.js';
import { expectBalanced } from './balance.js';

/** One ring of `cap` bytes filled through many wraps with seeded small records. */
function filled(cap: number, commits: number, seed: number) {
  const store = allocateStore([cap]);
  const w = new StoreWriter(store, 1);
  const rng = mulberry32(seed);
  const model = new RingModel(store.rings[0]!.byteLength);
  const sizes: number[] = [];
  for (let c = 0; c < commits; c++) {
    const records: StagedRecord[] = [];
    for (let i = randInt(rng, 1, 8); i > 0; i--) {
      const size = randInt(rng, 0, 40);
      const ord = model.add(framedSize(size));
      sizes[ord] = size;
      records.push({ kind: 0, clientTime: ord, tab: 0, payload: ordPayload(0, ord, size) });
    }
    w.commit({ recvTime: c, records, received: [records.length], rejected: [0] });
  }
  return { store, model, sizes };
}

describe('shm position lookup', () => {
  it('finds arbitrary ordinals after many wraps through the sparse index (<= 63 hops)', () => {
    const { store, model, sizes } = filled(16 * 1024, 6000, 7);
    expect(model.headOrd - model.tailOrd).toBeGreaterThan(200);
    expect(model.tailOrd).toBeGreaterThan(10 * (model.headOrd - model.tailOrd));
    const rng = mulberry32(99);
    for (let i = 0; i < 500; i++) {
      const reader = new StoreReader(store); // no hints: index or tail only
      const ord = randInt(rng, model.tailOrd, model.headOrd - 1);
      const r = reader.read(0, ord, 1);
      expect(r.missed).toBe(0);
      expect(r.records[0]!.ord).toBe(ord);
      expect(Buffer.from(r.records[0]!.payload).equals(Buffer.from(ordPayload(0, ord, sizes[ord]!)))).toBe(true);
      expect(reader.walkStats.hops).toBeLessThanOrEqual(63);
      expect(reader.walkStats.staleStarts).toBe(0);
    }
    const reader = new StoreReader(store);
    expectBalanced(reader);
  });

  it('a sequential reader resumes from its hint without hopping', () => {
    const { store, model } = filled(16 * 1024, 3000, 11);
    const reader = new StoreReader(store);
    let cursor = model.tailOrd + 37; // not on an index stride
    reader.read(0, cursor, 1); // the first call may hop from an index entry
    cursor++;
    const hopsBefore = reader.walkStats.hops;
    for (let i = 0; i < 50; i++) {
      const r = reader.read(0, cursor, 3);
      expect(r.records.map((x) => x.ord)).toEqual([cursor, cursor + 1, cursor + 2]);
      cursor = r.next;
    }
    expect(reader.walkStats.hops).toBe(hopsBefore);
  });

  it('stale or garbage index entries and hints are detected and fall back to the tail', () => {
    const { store, model, sizes } = filled(8 * 1024, 2000, 23);
    const idx = new Float64Array(store.index[0]!);
    const rng = mulberry32(5);
    const reader = new StoreReader(store);
    const seed = reader.read(0, model.tailOrd, 0);
    expect(seed.records).toEqual([]);
    for (let i = 0; i < 300; i++) {
      // positions inside the live range but not on a record boundary (or on the wrong one)
      const stats = reader.ringStats(0);
      const headPos = Number(new BigInt64Array(store.control)[3]!);
      for (let s = 0; s < idx.length; s++) idx[s] = headPos - 8 * randInt(rng, 1, Math.floor(stats.usedBytes / 8));
      const ord = randInt(rng, model.tailOrd, model.headOrd - 1);
      const r = reader.read(0, ord, 2);
      expect(r.records[0]!.ord).toBe(ord);
      expect(Buffer.from(r.records[0]!.payload).equals(Buffer.from(ordPayload(0, ord, sizes[ord]!)))).toBe(true);
    }
    expect(reader.walkStats.staleStarts).toBeGreaterThan(0);
    expectBalanced(reader);
  });

  it('a record read again at the position it was read from takes no hop', () => {
    const { store, model, sizes } = filled(16 * 1024, 6000, 31);
    const first = new StoreReader(store);
    const rng = mulberry32(17);
    const seen: Array<{ ord: number; pos: number }> = [];
    for (let i = 0; i < 200; i++) {
      const ord = randInt(rng, model.tailOrd, model.headOrd - 1);
      const rec = first.read(0, ord, 1).records[0]!;
      expect(rec.ord).toBe(ord);
      expect(rec.pos % 8).toBe(0);
      seen.push({ ord, pos: rec.pos });
    }
    // a fresh reader (no hints): from the sparse index these ordinals take hops; at their position none
    const again = new StoreReader(store);
    for (const { ord, pos } of seen) {
      const r = again.read(0, ord, 1, { at: pos });
      expect(r.records[0]!.ord).toBe(ord);
      expect(r.records[0]!.pos).toBe(pos);
      expect(Buffer.from(r.records[0]!.payload).equals(Buffer.from(ordPayload(0, ord, sizes[ord]!)))).toBe(true);
    }
    expect(again.walkStats.hops).toBe(0);
    expect(again.walkStats.staleStarts).toBe(0);
    const control = new StoreReader(store);
    for (const { ord } of seen) control.read(0, ord, 1);
    expect(control.walkStats.hops).toBeGreaterThan(1000);
  });

  it('a position that is not the ordinal\'s (another record, mid-record, reused by a wrap, out of range) is dropped: the read still answers right', () => {
    const { store, model, sizes } = filled(8 * 1024, 3000, 41);
    const reader = new StoreReader(store);
    const rng = mulberry32(3);
    const live = (): { tailOrd: number; headOrd: number } => ({ tailOrd: model.tailOrd, headOrd: model.headOrd });
    const { tailOrd, headOrd } = live();
    const positions: number[] = [];
    for (let o = tailOrd; o < headOrd; o++) positions.push(reader.read(0, o, 1).records[0]!.pos);
    for (let i = 0; i < 300; i++) {
      const k = randInt(rng, 0, positions.length - 1);
      const ord = tailOrd + k;
      const wrong = [
        positions[(k + randInt(rng, 1, positions.length - 1)) % positions.length]!, // another record's
        positions[k]! + 8, // inside the record
        positions[k]! + 3, // not on an 8-byte boundary
        positions[k]! - 16 * 1024, // before the ring's tail (a wrap ago)
        positions[positions.length - 1]! + 1024 * 1024, // past the head
      ][i % 5]!;
      const r = reader.read(0, ord, 1, { at: wrong });
      expect(r.missed).toBe(0);
      expect(r.records[0]!.ord).toBe(ord);
      expect(Buffer.from(r.records[0]!.payload).equals(Buffer.from(ordPayload(0, ord, sizes[ord]!)))).toBe(true);
    }
    expect(reader.walkStats.staleStarts).toBeGreaterThan(0);
    expectBalanced(reader);
  });
});
