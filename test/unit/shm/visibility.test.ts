import { describe, expect, it } from 'vitest';
import { StoreReader, StoreWriter, allocateStore, type StagedRecord } from '../../../src/shm/index.js';
import { ordPayload } from '../../fixtures/shm-gen.js';
import { expectBalanced } from './balance.js';

const rec = (kind: number, size: number, tag: number): StagedRecord => ({ kind, clientTime: NaN, tab: -1, payload: ordPayload(kind, tag, size) });
const counts = (recs: StagedRecord[]) => {
  const a = new Array<number>(7).fill(0);
  for (const r of recs) a[r.kind]!++;
  return a;
};

describe('shm commit visibility (all or nothing)', () => {
  it('a multi-kind commit is invisible until committedSeq moves, even once its heads are stored', () => {
    const store = allocateStore([512, 512, 512, 512, 512, 512, 512]);
    const w = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const first = [rec(0, 10, 0), rec(1, 10, 0)];
    w.commit({ recvTime: 1, records: first, received: counts(first), rejected: [] });
    const batch = [rec(0, 20, 1), rec(2, 30, 0), rec(1, 40, 1), rec(0, 50, 2)];
    const during: number[] = [];
    w.commit({ recvTime: 2, records: batch, received: counts(batch), rejected: [] }, () => {
      // inside the publishing window: heads are already stored, committedSeq is not
      for (let k = 0; k < 3; k++) {
        const r = reader.read(k, 0, 100);
        during.push(r.records.length);
        expect(r.records.every((x) => x.seq < 2)).toBe(true);
      }
      // never blocks on main, whatever the generation says
      expect(reader.counters()).toHaveLength(7);
      expect(reader.tryClear([0])).toBe(false);
    });
    expect(during).toEqual([1, 1, 0]);
    // one contiguous seq range for the batch, in record order across rings
    expect([0, 1, 2].map((k) => reader.read(k, 0, 100).records.map((x) => x.seq))).toEqual([[0, 2, 5], [1, 4], [3]]);
    expectBalanced(reader);
  });

  it('a commit abandoned after its bytes are copied (a worker dying there) publishes nothing', () => {
    const store = allocateStore([256, 256, 256, 256, 256, 256, 256]);
    const ok = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const before = [rec(0, 60, 0), rec(0, 60, 1), rec(3, 8, 0)];
    ok.commit({ recvTime: 1, records: before, received: counts(before), rejected: [] });
    const seqBefore = reader.read(0, 0, 10).records.map((x) => x.seq);
    expect(seqBefore).toEqual([0, 1]);

    const dying = new StoreWriter(store, 2, {
      afterCopy: () => {
        throw new Error('worker died');
      },
    });
    const lost = [rec(0, 100, 2), rec(3, 100, 1), rec(5, 4, 0)];
    expect(() => dying.commit({ recvTime: 2, records: lost, received: counts(lost), rejected: [1, 0, 0, 0, 0, 0, 0] })).toThrow('worker died');
    // The lock is free (this one in-thread death ran its finally); nothing new is readable,
    // records the dead batch evicted to make room are gone and counted.
    expect(reader.lockHolder()).toBe(0);
    const after = reader.read(0, 0, 10);
    expect(after.records).toEqual([]);
    expect(after.missed).toBe(2);
    expect(reader.read(3, 0, 10).records.map((x) => x.seq)).toEqual([2]);
    expect(reader.read(5, 0, 10).records).toEqual([]);
    expect(reader.counters()[0]).toMatchObject({ received: 2, stored: 2, evicted: 2 });
    expectBalanced(reader);

    // The next writer overwrites the dead batch's bytes and reuses its seqs.
    const next = [rec(0, 16, 9), rec(5, 4, 9)];
    const out = ok.commit({ recvTime: 3, records: next, received: counts(next), rejected: [] });
    expect(out).toMatchObject({ firstSeq: 3, lastSeq: 4 });
    const r0 = reader.read(0, 0, 10);
    expect(r0.records.map((x) => [x.ord, x.seq])).toEqual([[2, 3]]);
    expect(Buffer.from(r0.records[0]!.payload).equals(Buffer.from(ordPayload(0, 9, 16)))).toBe(true);
    expect(reader.read(5, 0, 10).records.map((x) => x.ord)).toEqual([0]);
    expectBalanced(reader);
  });

  it('a throwing beforePublish hook still publishes the batch, then rethrows with the lock free', () => {
    const store = allocateStore([256, 256, 256, 256, 256, 256, 256]);
    const w = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const recs = [rec(6, 5, 0)];
    expect(() =>
      w.commit({ recvTime: 1, records: recs, received: counts(recs), rejected: [] }, () => {
        throw new Error('slot write failed');
      }),
    ).toThrow('slot write failed');
    expect(reader.lockHolder()).toBe(0);
    expect(reader.read(6, 0, 10).records).toHaveLength(1);
    expectBalanced(reader);
  });
});
