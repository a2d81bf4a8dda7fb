/**
 * HTTP bodies' records stored as their bytes (json-spans.ts): whatever the body's formatting —
 * whitespace, every kind of escape, numbers written any way, keys repeated, other top-level keys,
 * non-ASCII or invalid UTF-8 — the records stored read back exactly as the records serialised
 * the old way, through the real redaction engine and detector; and bytes are kept only where
 * they are what JSON.stringify would write.
 */
import { isDeepStrictEqual } from 'node:util';
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { batchRecords, prng } from '../../../bench/load/frames.js';
import { Detector } from '../../../src/domain/alerts/detect.js';
import { processHttpBody, type IngestContext } from '../../../src/domain/ingest/process.js';
import { kindId } from '../../../src/domain/kinds.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { decodeFrame } from '../../../src/domain/wire/decode.js';
import { noteJsonBody } from '../../../src/domain/wire/json-spans.js';
import { RecordSpans } from '../../../src/domain/wire/record-spans.js';
import { readStoredRecord } from '../../../src/domain/wire/stored-record.js';
import { allocateDetectState, DetectState } from '../../../src/shm/index.js';

const LOGS = kindId('logs');
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function context(): IngestContext {
  const detector = new Detector(new DetectState(allocateDetectState()));
  return { recvTime: 1000, redactor: compileRedaction(), limits: { max_events_per_batch: 1000, max_errors_per_ack: 20 }, detect: (r, u) => detector.see(r, 0, u) };
}

function noted(text: string): RecordSpans {
  const spans = new RecordSpans();
  noteJsonBody(text, enc(text), 'entries', LOGS, spans);
  return spans;
}

/** the element's bytes as the table noted them */
const slice = (text: string, s: RecordSpans, i: number): string => text.slice(s.start[s.first[LOGS]! + i]!, s.end[s.first[LOGS]! + i]!);

describe('noteJsonBody', () => {
  it('finds each element of the named array, its keys at every depth, and whether its bytes may be kept', () => {
    const text = ' {"before":{"entries":[1,{"a":"]"}]},"entries" : [ {"ts":1,"o":{"a":[1,{"b":null}]}} ,{"ts":2, "m":"x"},{"ts":3,"m":"a\\"b\\\\c\\n"},{"ts":4,"m":"\\u0041"},{"ts":5,"m":"\\/"},{"ts":6.5},{"ts":1e3},{"ts":-0},{"ts":1234567890123456},[1],"s"] ,"after":"\\"entries\\":[]"}';
    const s = noted(text);
    expect(s.count[LOGS]).toBe(11);
    expect(slice(text, s, 0)).toBe('{"ts":1,"o":{"a":[1,{"b":null}]}}');
    expect(slice(text, s, 10)).toBe('"s"');
    const plain = Array.from({ length: 11 }, (_, i) => s.row(LOGS, i) >= 0);
    // compact with stringify's own escapes: kept; whitespace, \u, \/, a fraction, an exponent,
    // -0, 16 digits, not an object: not
    expect(plain).toEqual([true, false, true, false, false, false, false, false, false, false, false]);
    expect(s.entries[s.first[LOGS]!]).toBe(4);
    expect(s.entries[s.first[LOGS]! + 2]).toBe(2);
  });

  it('refuses the whole body when it cannot say which array JSON.parse kept, or when a character is not its byte', () => {
    expect(noted('{"entries":[{"ts":1}],"entries":[{"ts":2}]}').count[LOGS]).toBe(-1);
    expect(noted('{"logs":[{"ts":1}]}').count[LOGS]).toBe(-1);
    expect(noted('{"entries":[{"ts":1,"m":"é"}]}').count[LOGS]).toBe(-1);
    // an escaped key is not compared: refused rather than guessed
    expect(noted('{"entri\\u0065s":[{"ts":1}]}').count[LOGS]).toBe(-1);
    const invalid = new Uint8Array([...enc('{"entries":[{"ts":1,"m":"'), 0xff, ...enc('"}]}')]);
    const spans = new RecordSpans();
    noteJsonBody(Buffer.from(invalid).toString('utf8'), invalid, 'entries', LOGS, spans);
    expect(spans.count[LOGS]).toBe(-1);
    expect(noted('{"entries":[]}').count[LOGS]).toBe(0);
  });

  it('leaves nothing behind for the next frame: a worker\'s one table serves its HTTP bodies and its WebSocket frames', () => {
    const spans = noted('{"entries":[{"ts":1}]}');
    expect(spans.json).toBe(true);
    const d = decodeFrame(pack({ t: 'batch', seq: 1, sent_at: 1, logs: [{ ts: 1, level: 'log', type: 'console', message: 'm' }] }), { maxDepth: 32, maxElements: 1000 }, spans);
    expect(d.ok).toBe(true);
    expect(spans.json).toBe(false);
    expect(spans.row(LOGS, 0)).toBeGreaterThanOrEqual(0);
  });
});

/** A JSON writer that formats the same value in many ways JSON.parse reads alike. */
function writer(r: () => number): (v: unknown) => string {
  const ws = (): string => (r() < 0.002 ? [' ', '\n', '\t', '\r\n  '][Math.floor(r() * 4)]! : '');
  const str = (s: string): string => {
    const canonical = JSON.stringify(s);
    if (r() < 0.95) return canonical;
    // the same text with other escapes
    let out = '"';
    for (const ch of s) {
      const c = ch.codePointAt(0)!;
      const t = r();
      if (ch === '/' && t < 0.5) out += '\\/';
      else if (c < 128 && c >= 32 && t < 0.05) out += `\\u${c.toString(16).padStart(4, '0')}`;
      else out += JSON.stringify(ch).slice(1, -1);
    }
    return `${out}"`;
  };
  const num = (n: number): string => {
    const t = r();
    if (!Number.isInteger(n) || t < 0.9) return JSON.stringify(n);
    return t < 0.95 ? `${n}.0` : `${n}e0`;
  };
  const write = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (typeof v === 'number') return num(v);
    if (v === null || typeof v === 'boolean') return JSON.stringify(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((e) => write(e)).join(`${ws()},${ws()}`)}${ws()}]`;
    const entries = Object.entries(v as Record<string, unknown>);
    const parts = entries.map(([k, e]) => `${str(k)}${ws()}:${ws()}${write(e)}`);
    // now and then a key given twice: JSON.parse keeps the last
    if (entries.length && r() < 0.03) parts.unshift(`${str(entries[0]![0])}:"dropped password=hunter2hunter2hunter2x"`);
    return `{${ws()}${parts.join(`${ws()},${ws()}`)}${ws()}}`;
  };
  return write;
}

const SECRETISH = ['Bearer abcdefghijklmnopqrstuvwxyz012345', 'password=hunter2hunter2hunter2x', 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB', 'a\nb\tc "q" \\ /path'];
/** in one body of ten: the body is not ASCII, and no record of it keeps its bytes */
const WIDE = ['héllo wörld', '\u2028', '中文'];

describe('processHttpBody with the body\'s spans', () => {
  it('stores what it stored before, byte for byte where it keeps the bytes, over seeded bodies of every formatting', () => {
    const r = prng(2026_12_03);
    const write = writer(r);
    let kept = 0;
    let serialised = 0;
    for (let b = 0; b < 150; b++) {
      const wide = r() < 0.1;
      const logs = batchRecords(r, 40).logs.map((l) => {
        const rec = { ...l } as Record<string, unknown>;
        if (r() < 0.2) rec.message = `${String(rec.message)} ${SECRETISH[Math.floor(r() * SECRETISH.length)]}`;
        if (wide && r() < 0.2) rec.message = `${String(rec.message)} ${WIDE[Math.floor(r() * WIDE.length)]}`;
        if (r() < 0.05) rec.extra_unknown_key = 'not in the schema';
        if (r() < 0.05) rec.ts = new Date(Number(rec.ts)).toISOString();
        if (r() < 0.05) rec.line = 3.25;
        return rec;
      });
      const text = `{${r() < 0.2 ? '"v":1,' : ''}"entries":${write(logs)}}`;
      const body = enc(text);
      // payloads are views of the thread's staging buffer, which the next call reuses: copied
      const own = <T extends ReturnType<typeof processHttpBody>>(x: T): T => (x.ok ? { ...x, records: x.records.map((rec) => ({ ...rec, payload: Uint8Array.from(rec.payload) })) } : x);
      const withSpans = own(processHttpBody('/logs', body, context(), new RecordSpans()));
      const without = own(processHttpBody('/logs', body, context()));
      expect(withSpans.ok && without.ok).toBe(true);
      if (!withSpans.ok || !without.ok) return;
      expect(withSpans.errors).toEqual(without.errors);
      expect(withSpans.records.length).toBe(without.records.length);
      for (let i = 0; i < without.records.length; i++) {
        const a = withSpans.records[i]!;
        const o = without.records[i]!;
        expect([a.kind, a.clientTime, a.tab, a.flags]).toEqual([o.kind, o.clientTime, o.tab, o.flags]);
        const aText = Buffer.from(a.payload).toString('utf8');
        const oText = Buffer.from(o.payload).toString('utf8');
        expect(isDeepStrictEqual(readStoredRecord(a.payload), readStoredRecord(o.payload)), `${b}/${i}: ${aText} vs ${oText}`).toBe(true);
        if (text.includes(aText.replace(/,"_sig":-?\d+\}$/, ''))) {
          kept++;
          // kept bytes are what JSON.stringify wrote, keys in the order the body gave them
          expect(isDeepStrictEqual(Object.keys(JSON.parse(aText)).sort(), Object.keys(JSON.parse(oText)).sort())).toBe(true);
          expect(aText.length).toBe(oText.length);
        } else serialised++;
      }
    }
    // both ways were taken, many times
    expect(kept).toBeGreaterThan(1000);
    expect(serialised).toBeGreaterThan(300);
  });
});
