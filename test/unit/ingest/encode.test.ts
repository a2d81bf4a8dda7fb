/**
 * encodeRecords stringifies a kind's records as one array and cuts it at the records' boundaries:
 * every payload must be exactly what JSON.stringify of its record alone gives, also when a record
 * holds something that looks like a boundary (a nested object with a "ts" key, the boundary text
 * inside a string), and with one record, non-ASCII text and escapes.
 */
import { describe, expect, it } from 'vitest';
import { encodeRecords, resetStaging } from '../../../src/domain/ingest/process.js';
import type { StagedRecord } from '../../../src/shm/index.js';
import { batchRecords, prng } from '../../../bench/load/frames.js';

const text = (r: StagedRecord): string => Buffer.from(r.payload).toString('utf8');

function check(recs: Array<{ ts: number } & Record<string, unknown>>): void {
  resetStaging();
  const out: StagedRecord[] = [];
  encodeRecords(3, recs, 9, out);
  expect(out).toHaveLength(recs.length);
  out.forEach((r, i) => {
    expect(text(r)).toBe(JSON.stringify(recs[i]));
    expect(r).toMatchObject({ kind: 3, tab: 9, clientTime: recs[i]!.ts });
  });
}

describe('encodeRecords', () => {
  it('gives each record its own JSON, on the bench mix', () => {
    const r = prng(11);
    for (let b = 0; b < 20; b++) for (const recs of Object.values(batchRecords(r))) check(recs as Array<{ ts: number }>);
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
});
