/**
 * encodeRecords stringifies a kind's records as one array and cuts it at the records' boundaries:
 * every payload must be exactly what JSON.stringify of its record alone gives, also when a record
 * holds something that looks like a boundary (a nested object with a "ts" key, the boundary text
 * inside a string), and with one record, non-ASCII text and escapes. An ASCII array is staged in
 * one write and its records are views of it: earlier views must survive the staging buffer
 * filling up, a non-ASCII array after them, and an array too large to stage whole. Each record's
 * header flags are what a read of its stored bytes would find (errors, failing requests).
 */
import { describe, expect, it } from 'vitest';
import { encodeRecords, resetStaging } from '../../../src/domain/ingest/process.js';
import { recordFlags, type Classifiable } from '../../../src/domain/record-flags.js';
import { REC_CLASSIFIED, REC_ERROR, REC_FAILING, type StagedRecord } from '../../../src/shm/index.js';
import { batchRecords, prng } from '../../../bench/load/frames.js';

const text = (r: StagedRecord): string => Buffer.from(r.payload).toString('utf8');

function check(recs: Array<{ ts: number } & Record<string, unknown>>): void {
  resetStaging();
  const out: StagedRecord[] = [];
  encodeRecords(3, recs, 9, out);
  expect(out).toHaveLength(recs.length);
  out.forEach((r, i) => {
    expect(text(r)).toBe(JSON.stringify(recs[i]));
    // on an 8-byte boundary, as in a ring: the copy into shared memory goes word by word
    expect(r.payload.byteOffset % 8).toBe(0);
    expect(r).toMatchObject({ kind: 3, tab: 9, clientTime: recs[i]!.ts });
    // the header flags say of the record what a read of its stored bytes would find
    expect(r.flags).toBe(recordFlags(JSON.parse(text(r)) as Classifiable));
    seenFlags.add(r.flags!);
  });
}

const seenFlags = new Set<number>();

describe('encodeRecords', () => {
  it('gives each record its own JSON, on the bench mix', () => {
    const r = prng(11);
    for (let b = 0; b < 20; b++) for (const recs of Object.values(batchRecords(r))) check(recs as Array<{ ts: number }>);
    // errors, failing requests and plain records, all classified
    expect([...seenFlags].sort()).toEqual(expect.arrayContaining([REC_CLASSIFIED, REC_CLASSIFIED | REC_ERROR, REC_CLASSIFIED | REC_FAILING]));
  });

  it('is not fooled by look-alike boundaries, nested or in strings', () => {
    const look = '},{"ts":';
    check([
      { ts: 1, message: look, args: [{}, { ts: 2 }] },
      { ts: 2, message: 'x', args: [{ a: 1 }, { ts: 3, b: [{}, { ts: 4 }] }] },
      { ts: 3, message: `${look}${look}` },
    ]);
    check([{ ts: 1, args: [{}, { ts: 2 }] }, { ts: 2 }]);
    check([{ ts: 1, m: '\u2028"\\\n😀\ud800é' }, { ts: 2, m: 'ok' }]);
    check([{ ts: 1, only: true }]);
    check([]);
  });

  it('keeps every payload of a batch intact across many arrays, a full staging buffer and non-ASCII ones', () => {
    resetStaging();
    const r = prng(5);
    const all: Array<[StagedRecord, string]> = [];
    // ~300 KB of JSON in one batch: more than the staging buffer, so it is replaced mid-batch
    for (let b = 0; b < 12; b++) {
      for (const recs of Object.values(batchRecords(r)) as Array<Array<{ ts: number } & Record<string, unknown>>>) {
        // every third array carries a non-ASCII character in a different record each time
        if (b % 3 === 1) recs[b % recs.length]!.note = b % 2 ? 'é' : '😀';
        const out: StagedRecord[] = [];
        encodeRecords(1, recs, -1, out);
        out.forEach((o, i) => {
          all.push([o, JSON.stringify(recs[i])]);
        });
      }
    }
    expect(all.length).toBe(1200);
    for (const [o, json] of all) {
      expect(text(o)).toBe(json);
      expect(o.payload.byteOffset % 8).toBe(0);
    }
  });

  it('encodes an array too large to stage whole, ASCII or not', () => {
    const big = (m: string) => Array.from({ length: 40 }, (_, i) => ({ ts: i, message: `${m}${'x'.repeat(3000)}` }));
    check(big('a'));
    check(big('ü'));
  });
});
