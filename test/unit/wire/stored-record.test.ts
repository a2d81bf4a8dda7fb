/**
 * A ring payload read back in each of its forms: JSON, a verbatim msgpack map or record, and a
 * verbatim one preceded by its error signature (an int32 or uint32), also from shared memory as the
 * rings hand it out. The signature becomes the last key, as JSON has it.
 */
import { Packr, pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { withSig } from '../../fixtures/stored-record.js';
import { isVerbatim, readStoredRecord } from '../../../src/domain/wire/stored-record.js';

const rec = { ts: 1_764_000_000_000, level: 'error', type: 'console', message: 'TypeError: boom', url: 'http://app.test/' };

/** the bytes as a view into a SharedArrayBuffer at an odd offset, as a ring read may give them */
function shared(b: Uint8Array): Uint8Array {
  const sab = new SharedArrayBuffer(b.length + 3);
  const view = new Uint8Array(sab, 3, b.length);
  view.set(b);
  return view;
}

describe('readStoredRecord', () => {
  it('reads JSON and plain verbatim bytes as they are', () => {
    expect(readStoredRecord(Buffer.from(JSON.stringify({ ...rec, _sig: 7 })))).toEqual({ ...rec, _sig: 7 });
    expect(readStoredRecord(pack(rec))).toEqual(rec);
    expect(readStoredRecord(shared(pack(rec)))).toEqual(rec);
    expect(isVerbatim(pack(rec))).toBe(true);
  });

  it.each([0, 1, 0x7fffffff, 0x80000000, 0xffffffff, -1, -0x80000000])('reads a signature %d in front of a map or a msgpackr record, last among the keys', (sig) => {
    // the prefix is a msgpack int32 for a negative signature, a uint32 otherwise, big-endian
    const head = Buffer.alloc(5);
    head[0] = sig < 0 ? 0xd2 : 0xce;
    if (sig < 0) head.writeInt32BE(sig, 1);
    else head.writeUInt32BE(sig, 1);
    expect(Buffer.from(withSig(sig, pack(rec)).subarray(0, 5))).toEqual(head);
    for (const body of [pack(rec), new Packr({ useRecords: true }).pack(rec)]) {
      for (const bytes of [withSig(sig, body), shared(withSig(sig, body))]) {
        const got = readStoredRecord(bytes) as Record<string, unknown>;
        expect(got).toEqual({ ...rec, _sig: sig });
        expect(Object.keys(got).at(-1)).toBe('_sig');
        expect(isVerbatim(bytes)).toBe(true);
      }
    }
  });

  it('reads records from shared memory one after another through one reused copy, small and large, without one changing another', () => {
    const a = { ...rec, message: 'first', args: ['x', { deep: 'y' }] };
    const b = { ...rec, message: 'second '.repeat(5000) };
    const c = { ...rec, message: 'z'.repeat(300_000) };
    const got = [a, b, a, c, b].map((r) => readStoredRecord(shared(pack(r))));
    expect(got).toEqual([a, b, a, c, b]);
  });
});
