import { describe, expect, it } from 'vitest';
import { StoreReader, StoreWriter, allocateStore, framedSize, HEADER_BYTES, type StagedRecord } from '../../../src/shm/index.js';
import { mulberry32, ordPayload, randInt } from '../../fixtures/shm-gen.js';
import { RingModel } from '../../fixtures/shm-model.js';
import { expectBalanced } from './balance.js';

const KINDS = 7;

/** A store, a writer, a reader, and a model per ring that the test fills in step with the store. */
function harness(sizes: number[]) {
  const store = allocateStore(sizes);
  const writer = new StoreWriter(store, 1);
  const reader = new StoreReader(store);
  const models = store.rings.map((r) => new RingModel(r.byteLength));
  const sizeOf = models.map(() => [] as number[]); // payload size by ordinal
  const seqOf = models.map(() => [] as number[]); // expected seq by ordinal
  let nextSeq = 0;
  /** Commits records given as [kind, payloadSize]; checks the outcome against the model. */
  const commit = (recs: Array<[number, number]>, extra: { rejected?: number[] } = {}) => {
    const records: StagedRecord[] = [];
    const stored = new Array<number>(KINDS).fill(0);
    const received = new Array<number>(KINDS).fill(0);
    let tooLarge = 0;
    const first = nextSeq;
    for (const [kind, size] of recs) {
      received[kind]!++;
      const m = models[kind]!;
      let ord = -1;
      if (framedSize(size) > m.capacity) tooLarge++;
      else {
        ord = m.add(framedSize(size));
        sizeOf[kind]![ord] = size;
        seqOf[kind]![ord] = nextSeq++;
        stored[kind]!++;
      }
      records.push({ kind, clientTime: ord === -1 ? NaN : ord * 10, tab: ord % 5 === 0 ? -1 : kind, payload: ordPayload(kind, ord, size) });
    }
    const rejected = extra.rejected ?? new Array<number>(KINDS).fill(0);
    rejected.forEach((n, k) => { received[k]! += n; });
    const out = writer.commit({ recvTime: 1000 + first, records, received, rejected });
    expect(out.stored).toEqual(stored);
    expect(out.tooLarge).toBe(tooLarge);
    expect(out.firstSeq).toBe(nextSeq > first ? first : -1);
    expect(out.lastSeq).toBe(nextSeq > first ? nextSeq - 1 : -1);
    return out;
  };
  /** Reads `kind` from `from` to the end in pages of `page`; checks every byte and the missed count. */
  const readAll = (kind: number, from: number, page: number) => {
    const m = models[kind]!;
    const tail = m.tailOrd;
    let cursor = from;
    let missed = 0;
    const ords: number[] = [];
    for (let guard = 0; guard < 1_000_000; guard++) {
      const r = reader.read(kind, cursor, page);
      missed += r.missed;
      let expectOrd = Math.min(Math.max(cursor, tail), m.headOrd);
      for (const rec of r.records) {
        expect(rec.ord).toBe(expectOrd++);
        expect(rec.kind).toBe(kind);
        expect(rec.seq).toBe(seqOf[kind]![rec.ord]);
        expect(rec.clientTime).toBe(rec.ord * 10);
        expect(rec.tab).toBe(rec.ord % 5 === 0 ? -1 : kind);
        expect(Buffer.from(rec.payload).equals(Buffer.from(ordPayload(kind, rec.ord, sizeOf[kind]![rec.ord]!)))).toBe(true);
        ords.push(rec.ord);
      }
      expect(r.next).toBe(expectOrd);
      if (r.atEnd) break;
      cursor = r.next;
    }
    expect(missed).toBe(Math.max(0, tail - from));
    expect(ords.length).toBe(Math.max(0, m.headOrd - Math.max(from, tail)));
    return ords;
  };
  const expectModel = () => {
    models.forEach((m, k) => {
      const s = reader.ringStats(k);
      expect(s.headOrd, `ring ${k} head`).toBe(m.headOrd);
      expect(s.tailOrd, `ring ${k} tail`).toBe(m.tailOrd);
    });
    expectBalanced(reader);
  };
  return { store, writer, reader, models, commit, readAll, expectModel };
}

describe('shm ring framing', () => {
  it('tiny rings, seeded sizes: readers get exactly the surviving records, every write wraps', () => {
    const rng = mulberry32(0xc0ffee);
    const h = harness([256, 264, 320, 512, 1024, 64, 2048]);
    // Persistent readers that follow each ring a few records at a time, like an MCP client.
    const cursors = new Array<number>(KINDS).fill(0);
    const seen = new Array<number>(KINDS).fill(0);
    const missed = new Array<number>(KINDS).fill(0);
    for (let c = 0; c < 4000; c++) {
      const recs: Array<[number, number]> = [];
      const n = randInt(rng, 0, 6);
      for (let i = 0; i < n; i++) {
        const kind = randInt(rng, 0, KINDS - 1);
        // mostly small, sometimes exactly the ring, sometimes too large
        const cap = h.models[kind]!.capacity;
        const r = rng();
        const size = r < 0.05 ? cap - HEADER_BYTES : r < 0.08 ? cap - HEADER_BYTES + randInt(rng, 1, 16) : randInt(rng, 0, Math.min(200, cap));
        recs.push([kind, size]);
      }
      h.commit(recs, { rejected: Array.from({ length: KINDS }, () => (rng() < 0.1 ? 1 : 0)) });
      h.expectModel();
      for (let k = 0; k < KINDS; k++) {
        if (rng() < 0.5) continue;
        const r = h.reader.read(k, cursors[k]!, randInt(rng, 1, 4));
        missed[k]! += r.missed;
        seen[k]! += r.records.length;
        cursors[k] = r.next;
      }
      if (c % 97 === 0) {
        const k = randInt(rng, 0, KINDS - 1);
        const m = h.models[k]!;
        h.readAll(k, randInt(rng, 0, m.headOrd + 2), randInt(rng, 1, 8));
      }
    }
    for (let k = 0; k < KINDS; k++) {
      for (;;) {
        const r = h.reader.read(k, cursors[k]!, 1000);
        missed[k]! += r.missed;
        seen[k]! += r.records.length;
        cursors[k] = r.next;
        if (r.atEnd) break;
      }
      // nothing is lost silently: every ordinal was either read or reported missed
      expect(seen[k]! + missed[k]!).toBe(h.models[k]!.headOrd);
      expect(h.models[k]!.headOrd).toBeGreaterThan(100);
    }
  });

  it('writes a PAD when a record would straddle the end, and readers skip it', () => {
    const h = harness([256, 256, 256, 256, 256, 256, 256]);
    h.commit([[0, 152]]); // framed 200 at 0..200
    h.commit([[0, 48]]); // framed 96: PAD 200..256, record at 256
    expect(h.reader.ringStats(0)).toMatchObject({ capacity: 256, records: 1, headOrd: 2, tailOrd: 1, usedBytes: 152 });
    const r = h.reader.read(0, 0, 10);
    expect(r.missed).toBe(1);
    expect(r.records.map((x) => x.ord)).toEqual([1]);
    h.readAll(0, 0, 1);
    h.expectModel();
  });

  it('a record exactly filling the remainder needs no PAD', () => {
    const h = harness([256, 256, 256, 256, 256, 256, 256]);
    h.commit([[1, 160], [1, 0]]); // 208 + 48 = 256 exactly
    expect(h.reader.ringStats(1)).toMatchObject({ records: 2, usedBytes: 256 });
    h.commit([[1, 0]]); // at 256: evicts only ord 0
    expect(h.reader.ringStats(1)).toMatchObject({ records: 2, tailOrd: 1, usedBytes: 96 });
    h.readAll(1, 0, 3);
    h.expectModel();
  });

  it('a record as large as the ring evicts everything; one byte more is dropped as record_too_large', () => {
    const h = harness([256, 256, 256, 256, 256, 256, 256]);
    h.commit([[2, 10], [2, 20]]);
    h.commit([[2, 256 - HEADER_BYTES]]);
    expect(h.reader.ringStats(2)).toMatchObject({ records: 1, usedBytes: 256, tailOrd: 2 });
    const out = h.commit([[2, 256 - HEADER_BYTES + 1]]);
    expect(out).toMatchObject({ tooLarge: 1, firstSeq: -1, lastSeq: -1 });
    expect(h.reader.counters()[2]!.dropped.record_too_large).toBe(1);
    h.readAll(2, 0, 2);
    h.expectModel();
  });

  it('a batch larger than its ring keeps only its newest records (stored, then evicted)', () => {
    const h = harness([256, 256, 256, 256, 256, 256, 256]);
    h.commit([[3, 8]]);
    h.commit(Array.from({ length: 10 }, (): [number, number] => [3, 16])); // framed 64 each
    const c = h.reader.counters()[3]!;
    expect(c).toMatchObject({ stored: 11, evicted: 7 });
    const r = h.reader.read(3, 0, 100);
    expect(r.missed).toBe(7);
    expect(r.records.map((x) => x.ord)).toEqual([7, 8, 9, 10]);
    h.readAll(3, 5, 1);
    h.expectModel();
  });

  it('clamps a cursor past the head, and reads nothing from an empty ring', () => {
    const h = harness([256, 256, 256, 256, 256, 256, 256]);
    expect(h.reader.read(4, 0, 10)).toEqual({ records: [], next: 0, missed: 0, scanned: 0, atEnd: true });
    h.commit([[4, 1], [4, 2]]);
    expect(h.reader.read(4, 99, 10)).toMatchObject({ records: [], next: 2, missed: 0, atEnd: true });
    expect(h.reader.read(4, Infinity, 10).next).toBe(2);
    expect(() => h.reader.read(4, NaN, 10)).toThrow(RangeError);
    expect(h.reader.read(4, 0, 0)).toMatchObject({ records: [], next: 0, atEnd: false });
  });

  it('filters over the shared bytes before copying; next continues after filtered-out records; maxScan bounds a call', () => {
    const store = allocateStore([4096, 256, 256, 256, 256, 256, 256]);
    const w = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const enc = new TextEncoder();
    const records = Array.from({ length: 40 }, (_, i) => ({ kind: 0, clientTime: NaN, tab: -1, payload: enc.encode(i % 10 === 3 ? `needle-${i}` : `hay-${i}`) }));
    w.commit({ recvTime: 1, records, received: [40], rejected: [0] });
    const needle = Buffer.from('needle');
    const r = reader.read(0, 0, 100, { filter: (v) => v.has(needle) && Number.isNaN(v.clientTime) });
    expect(r.records.map((x) => Buffer.from(x.payload).toString())).toEqual(['needle-3', 'needle-13', 'needle-23', 'needle-33']);
    expect(r).toMatchObject({ scanned: 40, next: 40, atEnd: true });
    const p = reader.read(0, 0, 100, { filter: (v) => v.has(needle), maxScan: 15 });
    expect(p.records.map((x) => x.ord)).toEqual([3, 13]);
    expect(p).toMatchObject({ scanned: 15, next: 15, atEnd: false });
    // the payload is the caller's copy, not a view of shared memory
    expect(p.records[0]!.payload.buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  it("the filter's byte search answers for exactly the record, never for bytes of a neighbour", () => {
    const store = allocateStore([4096, 256, 256, 256, 256, 256, 256]);
    const w = new StoreWriter(store, 1);
    const reader = new StoreReader(store);
    const enc = new TextEncoder();
    const payloads = ['abc', 'cdef', 'xabc', 'ab', 'needle at the end', 'start needle', 'zzz', 'needle'];
    w.commit({ recvTime: 1, records: payloads.map((p) => ({ kind: 0, clientTime: 0, tab: -1, payload: enc.encode(p) })), received: [payloads.length], rejected: [0] });
    const hits = (...needles: string[]): number[] => {
      const bs = needles.map((n) => Buffer.from(n));
      return reader.read(0, 0, 100, { filter: (v) => bs.some((b) => v.has(b)) }).records.map((r) => r.ord);
    };
    expect(hits('abc')).toEqual([0, 2]);
    expect(hits('abcd')).toEqual([]);
    expect(hits('cd')).toEqual([1]);
    expect(hits('ab')).toEqual([0, 2, 3]);
    expect(hits('end')).toEqual([4]);
    expect(hits('start')).toEqual([5]);
    // one search's answer is reused for the records after it: found far ahead, found again, none left
    expect(hits('needle')).toEqual([4, 5, 7]);
    expect(hits('zzz', 'cdef')).toEqual([1, 6]);
    expect(hits('a needle longer than any record in this ring')).toEqual([]);
    expect(hits('')).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // a read that starts mid-ring learns nothing from an earlier read
    expect(reader.read(0, 5, 100, { filter: (v) => v.has(Buffer.from('needle')) }).records.map((r) => r.ord)).toEqual([5, 7]);
  });

  it('rejects a bad kind or drop reason before touching the lock', () => {
    const h = harness([256, 256, 256, 256, 256, 256, 256]);
    expect(() => h.writer.commit({ recvTime: 0, records: [{ kind: 7, clientTime: 0, tab: 0, payload: new Uint8Array(1) }], received: [], rejected: [] })).toThrow(RangeError);
    expect(() => h.writer.commit({ recvTime: 0, records: [], received: [], rejected: [], dropped: [[0, 'nope' as 'duplicate', 1]] })).toThrow(RangeError);
    expect(h.reader.lockHolder()).toBe(0);
    expect(() => new StoreWriter(h.store, 0)).toThrow(RangeError);
    expect(() => allocateStore([32])).toThrow(RangeError);
    expect(allocateStore([100]).rings[0]!.byteLength).toBe(104);
    h.expectModel();
  });
});
