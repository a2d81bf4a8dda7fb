/**
 * The pre-scan's record spans (record-spans.ts): for every element it calls plain, its bytes as
 * stored (a record-extension element with the definitions of the structures it names spliced in)
 * decode on their own to exactly the element the whole frame decoded to, and its pair count is the
 * keys of every map and record in it. It calls nothing plain that could read back otherwise: bin,
 * float32, NaN, ±Infinity, -0, any other extension in the frame, two-byte structure ids, an id
 * defined twice, a kind's array given twice.
 */
import { isDeepStrictEqual } from 'node:util';
import { pack, Packr, Unpackr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { batchRecords, prng } from '../../../bench/load/frames.js';
import { kindId, KINDS } from '../../../src/domain/kinds.js';
import { decodeFrame } from '../../../src/domain/wire/decode.js';
import { prescanMsgpack } from '../../../src/domain/wire/prescan.js';
import { RecordSpans } from '../../../src/domain/wire/record-spans.js';
import { UNPACK_OPTIONS } from '../../../src/domain/wire/stored-record.js';

const limits = { maxDepth: 32, maxElements: 500_000 };
const unpackr = new Unpackr(UNPACK_OPTIONS);

/** keys of every object in a value, at every depth */
function keys(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, e) => n + keys(e), 0);
  if (v && typeof v === 'object') return Object.entries(v).reduce((n, [, e]) => n + 1 + keys(e), 0);
  return 0;
}

/** every element the spans call plain: its own bytes decode to the frame's element, its pairs are its keys */
function checkAgainstDecode(bytes: Uint8Array): { plain: number; refused: number } {
  const spans = new RecordSpans();
  const d = decodeFrame(bytes, limits, spans);
  expect(d.ok).toBe(true);
  if (!d.ok || d.frame.t !== 'batch') throw new Error('not a batch');
  let plain = 0;
  let refused = 0;
  for (const k of KINDS) {
    const arr = d.frame[k];
    const id = kindId(k);
    if (!arr) {
      expect(spans.row(id, 0)).toBe(-1);
      continue;
    }
    for (let i = 0; i < arr.length; i++) {
      const row = spans.row(id, i);
      if (row < 0) {
        refused++;
        continue;
      }
      plain++;
      const alone = unpackr.unpack(stored(spans, row));
      expect(isDeepStrictEqual(alone, arr[i])).toBe(true);
      expect(spans.entries[row]).toBe(keys(arr[i]));
    }
  }
  return { plain, refused };
}

/** an element as it would be stored */
function stored(spans: RecordSpans, row: number): Uint8Array {
  const out = new Uint8Array(spans.size(row) + 5);
  const n = spans.write(row, out, 5);
  expect(n).toBe(spans.size(row));
  return out.subarray(5, 5 + n);
}

const frame = (arrays: Record<string, unknown>): Record<string, unknown> => ({ t: 'batch', seq: 1, sent_at: 2, tab_id: 3, page_url: 'http://app.test/', ...arrays });

describe('record spans from the pre-scan', () => {
  it('finds every record of plain-map frames, their bytes and their pairs (the bench mix, 40 frames)', () => {
    const r = prng(3);
    let plain = 0;
    for (let b = 0; b < 40; b++) plain += checkAgainstDecode(pack(frame({ ...batchRecords(r) }))).plain;
    expect(plain).toBe(40 * 100);
  });

  it('finds every record of record-extension frames, stored with the definitions of the structures they name', () => {
    const packr = new Packr({ useRecords: true });
    const r = prng(4);
    let plain = 0;
    for (let b = 0; b < 40; b++) plain += checkAgainstDecode(packr.pack(frame({ ...batchRecords(r) }))).plain;
    expect(plain).toBe(40 * 100);
    // a later element names a structure an earlier one defined: a splice, and it reads back alone
    const spans = new RecordSpans();
    decodeFrame(packr.pack(frame({ logs: [{ ts: 1, level: 'log', type: 'console', message: 'a', args: [{ x: 1 }] }, { ts: 2, level: 'log', type: 'console', message: 'b', args: [{ x: 2 }] }] })), limits, spans);
    const second = spans.row(kindId('logs'), 1);
    expect(spans.spliceN[second]).toBe(2);
    expect(unpackr.unpack(stored(spans, second))).toEqual({ ts: 2, level: 'log', type: 'console', message: 'b', args: [{ x: 2 }] });
  });

  it('notes nothing in a frame whose structures it cannot follow: two-byte ids, an id defined twice, another extension', () => {
    // more shapes than one-byte ids: msgpackr goes on with two-byte ones
    const many = new Packr({ useRecords: true, maxOwnStructures: 1000 }).pack(frame({ logs: Array.from({ length: 80 }, (_, i) => ({ ts: i, level: 'log', type: 'console', message: 'm', [`k${i}`]: i })) }));
    expect(checkAgainstDecode(many)).toMatchObject({ plain: 0 });
    // the same id defined twice, by hand: [d4 72 40 [a] 1, d4 72 40 [b] 2] as two records
    const def = (key: string, v: number) => Buffer.concat([Buffer.from([0xd4, 0x72, 0x40, 0x91]), pack(key), pack(v)]);
    const twice = Buffer.concat([Buffer.from([0x83]), pack('t'), pack('batch'), pack('seq'), pack(1), pack('logs'), Buffer.from([0x92]), def('message', 1), def('level', 2)]);
    const spans = new RecordSpans();
    expect(prescanMsgpack(twice, limits, spans).ok).toBe(true);
    expect(spans.row(kindId('logs'), 0)).toBe(-1);
    // a timestamp extension outside the records refuses them all the same
    const withDate = pack({ ...frame({ logs: [{ ts: 1, level: 'log', type: 'console', message: 'm' }] }), when: new Date(5) });
    expect(prescanMsgpack(withDate, limits, spans).ok).toBe(true);
    expect(spans.row(kindId('logs'), 0)).toBe(-1);
  });

  it('calls an element not plain when its bytes could read back otherwise', () => {
    const base = { ts: 1, level: 'log', type: 'console', message: 'm' };
    const f32 = new Packr({ useFloat32: 1 });
    const cases: Array<[string, Uint8Array]> = [
      ['bin', pack(frame({ logs: [{ ...base, args: [Buffer.from('x')] }] }))],
      ['NaN', pack(frame({ logs: [{ ...base, args: [Number.NaN] }] }))],
      ['Infinity', pack(frame({ logs: [{ ...base, args: [Number.NEGATIVE_INFINITY] }] }))],
      ['float32', f32.pack(frame({ logs: [{ ...base, args: [1.5] }] }))],
      ['not a map', pack(frame({ logs: ['just text'] }))],
    ];
    // -0: msgpackr writes it as the integer 0, so the float64 is written by hand
    const negZero = Buffer.from(pack(frame({ logs: [{ ...base, args: [0.5] }] })));
    const at = negZero.indexOf(Buffer.from([0xcb, 0x3f, 0xe0]));
    negZero.set([0xcb, 0x80, 0, 0, 0, 0, 0, 0, 0], at);
    cases.push(['-0', negZero]);
    for (const [what, bytes] of cases) {
      const spans = new RecordSpans();
      expect(prescanMsgpack(bytes, limits, spans).ok, what).toBe(true);
      expect(spans.row(kindId('logs'), 0), what).toBe(-1);
    }
    // the same record with an ordinary float is plain
    const spans = new RecordSpans();
    prescanMsgpack(pack(frame({ logs: [{ ...base, args: [0.5, 1e300, -2] }] })), limits, spans);
    expect(spans.row(kindId('logs'), 0)).toBeGreaterThanOrEqual(0);
  });

  it('counts the pairs a map declares, so a repeated key shows as one pair more than the keys it decodes to', () => {
    // {ts:1, level:'log', type:'console', message:'secret', message:'m'}: written by hand, no encoder repeats keys
    const rec = Buffer.concat([Buffer.from([0x85]), pack('ts').subarray(0), pack(1), pack('level'), pack('log'), pack('type'), pack('console'), pack('message'), pack('secret'), pack('message'), pack('m')]);
    const bytes = Buffer.concat([Buffer.from([0x86]), pack('t'), pack('batch'), pack('seq'), pack(1), pack('sent_at'), pack(2), pack('tab_id'), pack(3), pack('page_url'), pack('http://app.test/'), pack('logs'), Buffer.from([0x91]), rec]);
    const spans = new RecordSpans();
    const d = decodeFrame(bytes, limits, spans);
    expect(d.ok).toBe(true);
    const row = spans.row(kindId('logs'), 0);
    expect(row).toBeGreaterThanOrEqual(0);
    expect(spans.entries[row]).toBe(5);
    expect(d.ok && d.frame.t === 'batch' && keys(d.frame.logs![0])).toBe(4);
  });

  it('uses neither array when a kind is given twice (the frame decodes to the last one)', () => {
    const one = pack({ ts: 1, level: 'log', type: 'console', message: 'first' });
    const two = pack({ ts: 2, level: 'log', type: 'console', message: 'second' });
    const bytes = Buffer.concat([Buffer.from([0x85]), pack('t'), pack('batch'), pack('seq'), pack(1), pack('sent_at'), pack(2), pack('logs'), Buffer.from([0x91]), one, pack('logs'), Buffer.from([0x91]), two]);
    const spans = new RecordSpans();
    expect(decodeFrame(bytes, limits, spans)).toMatchObject({ ok: true, frame: { logs: [{ message: 'second' }] } });
    expect(spans.row(kindId('logs'), 0)).toBe(-1);
  });

  it('handles empty arrays, map16 records, non-kind keys and frames that are not batches', () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
    const r = checkAgainstDecode(pack(frame({ logs: [], network: [{ ts: 1, method: 'GET', url: 'http://a.test/', status: 200, duration: 1 }], extra: [{ a: 1 }], perf: [{ ts: 1, url: 'http://a.test/', timing: many }] })));
    expect(r).toEqual({ plain: 2, refused: 0 });
    const spans = new RecordSpans();
    expect(prescanMsgpack(pack({ t: 'ping', ts: 1 }), limits, spans).ok).toBe(true);
    expect(KINDS.every((k) => spans.row(kindId(k), 0) === -1)).toBe(true);
    expect(prescanMsgpack(pack([{ logs: [{ ts: 1 }] }]), limits, spans).ok).toBe(true);
    expect(spans.row(kindId('logs'), 0)).toBe(-1);
  });

  it('holds on random records, nested and non-ASCII, with a table grown past its first size', () => {
    const r = prng(9);
    const value = (depth: number): unknown => {
      const k = Math.floor(r() * (depth > 2 ? 5 : 7));
      if (k === 0) return Math.floor(r() * 2 ** 40) - 2 ** 39;
      if (k === 1) return r() * 1000;
      if (k === 2) return 'é✓ '.repeat(Math.floor(r() * 4));
      if (k === 3) return r() < 0.5 ? null : true;
      if (k === 4) return 'x'.repeat(Math.floor(r() * 300));
      if (k === 5) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, (_, i) => [`f${i}${'ü'.repeat(i)}`, value(depth + 1)]));
    };
    for (let b = 0; b < 10; b++) {
      const logs = Array.from({ length: 300 }, (_, i) => ({ ts: i, level: 'log', type: 'console', message: String(value(0)), args: [value(0), value(0)] }));
      expect(checkAgainstDecode(pack(frame({ logs }))).plain).toBe(300);
    }
  });

  it('leaves the pre-scan verdict unchanged on every prefix and single-byte corruption', () => {
    const bytes = Buffer.from(pack(frame({ ...batchRecords(prng(6)) })));
    const spans = new RecordSpans();
    for (let n = 0; n < bytes.length; n += 7) {
      expect(prescanMsgpack(bytes.subarray(0, n), limits, spans)).toEqual(prescanMsgpack(bytes.subarray(0, n), limits));
    }
    const r = prng(7);
    for (let i = 0; i < 300; i++) {
      const bad = Buffer.from(bytes);
      bad[Math.floor(r() * bad.length)] = Math.floor(r() * 256);
      const withSpans = prescanMsgpack(bad, limits, spans);
      expect(withSpans).toEqual(prescanMsgpack(bad, limits));
      if (withSpans.ok) checkAgainstDecodeIfBatch(bad);
    }
  });
});

/** a corrupted frame that still pre-scans: where it still decodes to a batch, the spans still hold */
function checkAgainstDecodeIfBatch(bytes: Uint8Array): void {
  const d = decodeFrame(bytes, limits);
  if (d.ok && d.frame.t === 'batch') checkAgainstDecode(bytes);
}
