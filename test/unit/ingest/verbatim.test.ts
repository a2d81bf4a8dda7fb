/**
 * A record stored as its producer's msgpack bytes ("verbatim", process.ts) must read back as what
 * the JSON path would have stored for it, and only a record nothing changed may be stored so:
 * stripped keys, a repeated key (its first value never seen by redaction), an ISO time, a filled-in
 * page URL, a redaction or a truncation each send the record down the JSON path, and their bytes
 * never reach the ring; a detection signature travels in front of the bytes. Held on the bench mix, on hand-made cases, and on
 * random records (with secrets, repeats and long values) against the same frame processed without
 * spans (the JSON path for every record).
 */
import { isDeepStrictEqual } from 'node:util';
import { Packr, pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { batchRecords, prng } from '../../../bench/load/frames.js';
import { Detector } from '../../../src/domain/alerts/detect.js';
import { processBatchFrame, type IngestContext } from '../../../src/domain/ingest/process.js';
import { headerStripRedactor } from '../../../src/domain/ingest/redactor.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { decodeFrame } from '../../../src/domain/wire/decode.js';
import { LIMITS } from '../../../src/domain/wire/normalize.js';
import { RecordSpans } from '../../../src/domain/wire/record-spans.js';
import { readStoredRecord } from '../../../src/domain/wire/stored-record.js';
import { allocateDetectState, DetectState, REC_MSGPACK, type StagedRecord } from '../../../src/shm/index.js';

const limits = { maxDepth: 32, maxElements: 500_000 };
const events = { max_events_per_batch: 1000, max_errors_per_ack: 20 };

function context(withDetect = false): IngestContext {
  const ctx: IngestContext = { recvTime: 1000, redactor: compileRedaction(), limits: events };
  if (withDetect) {
    const d = new Detector(new DetectState(allocateDetectState()));
    ctx.detect = (r, u) => d.see(r, 0, u);
  }
  return ctx;
}

/** the frame through both paths: with spans (verbatim where allowed) and without (all JSON) */
function both(bytes: Uint8Array, withDetect = false): { verbatim: StagedRecord[]; json: StagedRecord[] } {
  const spans = new RecordSpans();
  const a = decodeFrame(bytes, limits, spans);
  if (!a.ok || a.frame.t !== 'batch') throw new Error(JSON.stringify(a));
  const verbatim = processBatchFrame(a.frame, context(withDetect), spans).records.map(copy);
  const b = decodeFrame(bytes, limits);
  if (!b.ok || b.frame.t !== 'batch') throw new Error(JSON.stringify(b));
  const json = processBatchFrame(b.frame, context(withDetect)).records.map(copy);
  return { verbatim, json };
}

/** out of the staging buffer, which the next batch reuses */
const copy = (r: StagedRecord): StagedRecord => ({ ...r, payload: Uint8Array.prototype.slice.call(r.payload) });

/** an object with its keys sorted, at every depth: verbatim records keep the producer's key order */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
  return v;
}

function expectSameRecords(r: { verbatim: StagedRecord[]; json: StagedRecord[] }): number {
  expect(r.verbatim).toHaveLength(r.json.length);
  let kept = 0;
  r.verbatim.forEach((v, i) => {
    const j = r.json[i]!;
    expect({ kind: v.kind, tab: v.tab, clientTime: v.clientTime, flags: (v.flags ?? 0) & ~REC_MSGPACK }).toEqual({ kind: j.kind, tab: j.tab, clientTime: j.clientTime, flags: j.flags });
    const got = readStoredRecord(v.payload);
    expect(isDeepStrictEqual(sorted(got), sorted(readStoredRecord(j.payload))), `${JSON.stringify(got)}`).toBe(true);
    if (((v.flags ?? 0) & REC_MSGPACK) !== 0) {
      kept++;
      expect(v.payload[0]).not.toBe(0x7b);
      expect(v.payload.byteOffset % 8).toBe(0);
    } else expect(v.payload[0]).toBe(0x7b);
  });
  return kept;
}

const batch = (arrays: Record<string, unknown>): Record<string, unknown> => ({ t: 'batch', seq: 1, sent_at: 2, tab_id: 3, page_url: 'http://app.test/page', ...arrays });
const records = new Packr({ useRecords: true });
const FORMS: Array<[string, (v: unknown) => Uint8Array]> = [
  ['plain maps', (v) => pack(v)],
  ['the record extension', (v) => records.pack(v)],
];
const log = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ts: 1_764_000_000_000, level: 'log', type: 'console', message: 'hello', url: 'http://app.test/page', ...extra });
const isVerbatim = (r: StagedRecord): boolean => ((r.flags ?? 0) & REC_MSGPACK) !== 0;

describe.each(FORMS)('records stored as their producer’s bytes, frames in %s', (_form, encode) => {
  const frame = (arrays: Record<string, unknown>): Uint8Array => encode(batch(arrays));

  it('keeps every record of the bench mix as its bytes, reading back as the JSON path stores it', () => {
    const r = prng(21);
    for (let b = 0; b < 20; b++) expect(expectSameRecords(both(frame({ ...batchRecords(r) })))).toBe(100);
  });

  it('stores as JSON what validation changed: an unknown key, an ISO time, a page URL filled in', () => {
    const { url: _, ...noUrl } = log();
    const { verbatim } = both(frame({ logs: [log({ extra_field: 'dropped' }), log({ ts: '2026-12-02T10:00:00.000Z' }), noUrl, log()] }));
    expect(verbatim.map(isVerbatim)).toEqual([false, false, false, true]);
    expect(Buffer.from(verbatim[0]!.payload).toString()).not.toContain('dropped');
    expect(readStoredRecord(verbatim[1]!.payload)).toMatchObject({ ts: Date.parse('2026-12-02T10:00:00.000Z') });
    expect(readStoredRecord(verbatim[2]!.payload)).toMatchObject({ url: 'http://app.test/page' });
  });

  it('never stores the bytes of a record with a repeated key, at the top or nested in an argument', () => {
    const key = (k: string) => pack(k);
    // {ts, level, type, message: 'sk_live_…', message: 'fine'} and {…, args: [{a: 'AKIA…', a: 1}]}, by hand: no encoder repeats keys
    const top = Buffer.concat([Buffer.from([0x86]), key('ts'), pack(1_764_000_000_000), key('level'), pack('log'), key('type'), pack('console'), key('message'), pack('sk_live_51HIDDENSECRETVALUE000'), key('message'), pack('fine'), key('url'), pack('http://app.test/')]);
    const inner = Buffer.concat([Buffer.from([0x82]), key('a'), pack('AKIAIOSFODNN7EXAMPLE'), key('a'), pack(1)]);
    const nested = Buffer.concat([Buffer.from([0x86]), key('ts'), pack(1_764_000_000_000), key('level'), pack('log'), key('type'), pack('console'), key('message'), pack('m'), key('args'), Buffer.from([0x91]), inner, key('url'), pack('http://app.test/')]);
    const clean = Buffer.concat([Buffer.from([0x85]), key('ts'), pack(1_764_000_000_000), key('level'), pack('log'), key('type'), pack('console'), key('message'), pack('m'), key('url'), pack('http://app.test/')]);
    const bytes = Buffer.concat([Buffer.from([0x85]), key('t'), pack('batch'), key('seq'), pack(1), key('sent_at'), pack(2), key('page_url'), pack('http://app.test/'), key('logs'), Buffer.from([0x93]), top, nested, clean]);
    const { verbatim } = both(bytes);
    // the same record without the repeat is kept as its bytes
    expect(verbatim.map(isVerbatim)).toEqual([false, false, true]);
    const stored = verbatim.map((r) => Buffer.from(r.payload).toString()).join('\n');
    expect(stored).not.toContain('sk_live_51HIDDEN');
    expect(stored).not.toContain('AKIAIOSFODNN7EXAMPLE');
  });

  it('stores as JSON what redaction or truncation changed', () => {
    const long = 'x'.repeat(LIMITS.message + 10);
    const { verbatim } = both(frame({ logs: [log({ message: 'key sk_live_51Habcdefghijklmnopqrstuv in a log' }), log({ message: long }), log()] }), true);
    expect(verbatim.map(isVerbatim)).toEqual([false, false, true]);
    expect(Buffer.from(verbatim[0]!.payload).toString()).not.toContain('sk_live_51Habcdefghijklmnopqrstuv');
    expect(readStoredRecord(verbatim[1]!.payload)).toMatchObject({ message_truncated: true });
  });

  it('keeps an error as its bytes, its signature in front of them, read back as the last key as JSON has it', () => {
    const r = both(encode(batch({ logs: [log({ level: 'error', message: 'TypeError: boom' }), log({ type: 'exception', level: 'error', message: 'ReferenceError: x is not defined', stack: 'at f (http://app.test/a.js:1:2)' }), log()] })), true);
    expect(r.verbatim.map(isVerbatim)).toEqual([true, true, true]);
    expectSameRecords(r);
    r.verbatim.forEach((v, i) => {
      const rec = readStoredRecord(v.payload) as Record<string, unknown>;
      if (i === 2) {
        expect(rec).not.toHaveProperty('_sig');
        return;
      }
      expect([0xd2, 0xce]).toContain(v.payload[0]);
      expect(Object.keys(rec).at(-1)).toBe('_sig');
      expect(Number.isInteger(rec._sig)).toBe(true);
    });
    // by hand: a full fixmap (15 pairs, no room in its header) is kept too, and both signs of a signature read back
    const key = (k: string) => pack(k);
    const fifteen = (message: string) => Buffer.concat([Buffer.from([0x8f]), key('ts'), pack(1_764_000_000_000), key('level'), pack('error'), key('type'), pack('console'), key('message'), pack(message), key('url'), pack('http://app.test/'), key('source'), pack('a.js'), key('filename'), pack('a.js'), key('lineno'), pack(1), key('colno'), pack(2), key('method'), pack('GET'), key('request_url'), pack('http://app.test/r'), key('status'), pack(500), key('status_text'), pack('err'), key('duration'), pack(3), key('error'), pack('e')]);
    const messages = Array.from({ length: 40 }, (_, i) => `Error number ${'x'.repeat(i)} boom`);
    const arr = Buffer.concat([Buffer.from([0xdc, 0, messages.length]), ...messages.map(fifteen)]);
    const hand = both(Buffer.concat([Buffer.from([0x85]), key('t'), pack('batch'), key('seq'), pack(1), key('sent_at'), pack(2), key('page_url'), pack('http://app.test/'), key('logs'), arr]), true);
    expect(hand.verbatim.every(isVerbatim)).toBe(true);
    expectSameRecords(hand);
    const firsts = new Set(hand.verbatim.map((v) => v.payload[0]));
    expect(firsts).toEqual(new Set([0xd2, 0xce]));
  });

  it('stores nothing as bytes when the redactor cannot say which records are clean, or with no spans', () => {
    const spans = new RecordSpans();
    const d = decodeFrame(frame({ logs: [log(), log()] }), limits, spans);
    if (!d.ok || d.frame.t !== 'batch') throw new Error('decode');
    const ctx: IngestContext = { recvTime: 1, redactor: { redactRecord: headerStripRedactor.redactRecord }, limits: events };
    expect(processBatchFrame(d.frame, ctx, spans).records.some(isVerbatim)).toBe(false);
  });

  it('reads back as the JSON path stores it on random records: secrets, long values, nested arguments, non-ASCII', () => {
    const r = prng(33);
    const secrets = ['sk_live_51Habcdefghijklmnopqrstuv', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'AKIAIOSFODNN7EXAMPLE', 'password=hunter2', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc'];
    const text = (): string => {
      const k = Math.floor(r() * 6);
      if (k === 0) return secrets[Math.floor(r() * secrets.length)]!;
      if (k === 1) return 'é✓😀 '.repeat(Math.floor(r() * 5));
      if (k === 2) return 'y'.repeat(Math.floor(r() * 2 * LIMITS.arg));
      return `plain text ${Math.floor(r() * 1000)}`;
    };
    const value = (depth: number): unknown => {
      const k = Math.floor(r() * (depth > 2 ? 4 : 6));
      if (k === 0) return text();
      if (k === 1) return Math.floor(r() * 1e6) / 8;
      if (k === 2) return r() < 0.5 ? null : false;
      if (k === 3) return Math.floor(r() * 2 ** 45);
      if (k === 4) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, (_, i) => [r() < 0.1 ? 'password' : `k${i}`, value(depth + 1)]));
    };
    let kept = 0;
    let total = 0;
    for (let b = 0; b < 30; b++) {
      const logs = Array.from({ length: 30 }, () => log({ message: text(), args: Array.from({ length: Math.floor(r() * 3) }, () => value(0)), level: r() < 0.1 ? 'warn' : 'log' }));
      const network_bodies = Array.from({ length: 5 }, () => ({ ts: 1_764_000_000_000, method: 'POST', url: `http://api.test/${text()}`, status: 200, request_headers: { 'content-type': 'application/json', ...(r() < 0.3 ? { authorization: 'Bearer x' } : {}) }, request_body: text(), response_body: text() }));
      const res = both(frame({ logs, network_bodies }), true);
      kept += expectSameRecords(res);
      total += res.verbatim.length;
      for (const s of secrets) expect(res.verbatim.some((v) => Buffer.from(v.payload).toString().includes(s)), s).toBe(false);
    }
    // most are kept as bytes, and many are not
    expect(kept).toBeGreaterThan(total / 4);
    expect(kept).toBeLessThan(total);
  });
});

describe('records of the record extension', () => {
  it('keeps an error as its bytes though its structure cannot take one more key: the signature goes in front', () => {
    const r = both(records.pack(batch({ logs: [log({ level: 'error', message: 'TypeError: boom' }), log(), log({ level: 'error', message: 'TypeError: again' })] })), true);
    expect(r.verbatim.map(isVerbatim)).toEqual([true, true, true]);
    expectSameRecords(r);
    expect(readStoredRecord(r.verbatim[0]!.payload)).toHaveProperty('_sig');
    expect(readStoredRecord(r.verbatim[2]!.payload)).toHaveProperty('_sig');
  });

  it('never stores the bytes of a record whose structure repeats a key', () => {
    const key = (k: string) => pack(k);
    // d4 72 40 [ts, level, type, message, message, url] values: the first message is in the bytes only
    const def = Buffer.concat([Buffer.from([0xd4, 0x72, 0x40, 0x96]), key('ts'), key('level'), key('type'), key('message'), key('message'), key('url')]);
    const rec = Buffer.concat([def, pack(1_764_000_000_000), pack('log'), pack('console'), pack('sk_live_51HIDDENSECRETVALUE000'), pack('fine'), pack('http://app.test/')]);
    // the same structure named again by its byte: the repeat travels with it
    const again = Buffer.concat([Buffer.from([0x40]), pack(1_764_000_000_001), pack('log'), pack('console'), pack('sk_live_51HIDDENSECRETVALUE001'), pack('fine'), pack('http://app.test/')]);
    const clean = Buffer.concat([Buffer.from([0x85]), key('ts'), pack(1_764_000_000_000), key('level'), pack('log'), key('type'), pack('console'), key('message'), pack('m'), key('url'), pack('http://app.test/')]);
    const bytes = Buffer.concat([Buffer.from([0x85]), key('t'), pack('batch'), key('seq'), pack(1), key('sent_at'), pack(2), key('page_url'), pack('http://app.test/'), key('logs'), Buffer.from([0x93]), rec, again, clean]);
    const { verbatim } = both(bytes);
    expect(verbatim.map(isVerbatim)).toEqual([false, false, true]);
    expect(verbatim.map((r) => Buffer.from(r.payload).toString()).join('\n')).not.toContain('HIDDENSECRET');
  });
});
