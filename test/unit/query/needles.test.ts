/**
 * A byte pre-filter over a ring that holds both forms of record (JSON, and a producer's msgpack
 * kept verbatim, REC_MSGPACK): each needle finds its record in either form, a twin may admit more
 * (the decoded check has the last word), and a needle with no twin never rules a msgpack record out.
 */
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { lastMatching } from '../../../src/query/last-matching.js';
import { needle, payloadHas, stringNeedle, textNeedle, twinOf } from '../../../src/query/needles.js';
import { scan } from '../../../src/query/scan.js';
import { allocateStore, REC_CLASSIFIED, REC_MSGPACK, StoreReader, StoreWriter } from '../../../src/shm/index.js';

const URLS = ['http://a.test/x?q="quoted"', 'http://a.test/back\\slash', 'http://a.test/é✓', 'http://b.test/plain'];

/** stored as msgpack: ords 4–7, 12–15, …, so every URL below comes in both forms */
const isMp = (i: number): boolean => Math.floor(i / 4) % 2 === 1;

/** log-like records in both forms (isMp): ord i has url URLS[i % 4], id `c${i % 3}`, level warn on every 5th */
function store(n: number): StoreReader {
  const buffers = allocateStore([1 << 20, 4096, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  const records = Array.from({ length: n }, (_, i) => {
    const rec = { ts: i, level: i % 5 === 0 ? 'warn' : 'info', message: i % 7 === 0 ? 'a warning about nothing' : `m${i}`, url: URLS[i % URLS.length], id: `c${i % 3}` };
    const msgpack = isMp(i);
    return { kind: 0, clientTime: i, tab: 1, payload: msgpack ? pack(rec) : Buffer.from(JSON.stringify(rec)), flags: REC_CLASSIFIED | (msgpack ? REC_MSGPACK : 0) };
  });
  writer.commit({ recvTime: 1, records, received: [n], rejected: [] });
  return new StoreReader(buffers);
}

const ords = (hits: Array<{ ord: number }>): number[] => hits.map((h) => h.ord);

describe('needles over both record forms', () => {
  it('finds a URL part in either form, quotes, backslashes and non-ASCII included', () => {
    const reader = store(40);
    for (const [u, url] of URLS.entries()) {
      const part = url.slice(url.indexOf('/', 8));
      const r = scan(reader, { kind: 0, from: 0, limit: 100, maxScan: 100, allOf: [textNeedle(part)], match: (rec) => String(rec.url).includes(part) });
      const want = Array.from({ length: 40 }, (_, i) => i).filter((i) => i % URLS.length === u);
      expect(ords(r.hits), url).toEqual(want);
      // both forms among them
      expect(want.some(isMp) && !want.every(isMp)).toBe(true);
    }
  });

  it('finds a whole string value (a connection id) in either form', () => {
    const reader = store(30);
    const r = scan(reader, { kind: 0, from: 0, limit: 100, maxScan: 100, allOf: [stringNeedle('c2')], match: (rec) => (rec as { id?: string }).id === 'c2' });
    expect(ords(r.hits)).toEqual(Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 === 2));
  });

  it('lets a twin admit more records than its JSON needle, and the decoded check decide', () => {
    const reader = store(60);
    const warn = needle('"level":"warn"', 'warn');
    const hits = lastMatching(reader, { kind: 0, from: 0, n: 100, maxScan: 100, where: () => true, anyOf: [warn], verify: (rec) => rec.level === 'warn' });
    expect(ords(hits)).toEqual(Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 5 === 0));
  });

  it('rules no msgpack record out with a needle that has no twin (or was never given one)', () => {
    const reader = store(20);
    for (const n of [needle('"status":4', null), Buffer.from('"level":"info"')]) {
      expect(twinOf(n)).toBeNull();
      const r = scan(reader, { kind: 0, from: 0, limit: 100, maxScan: 100, anyOf: [n] });
      const got = ords(r.hits);
      // every msgpack record, and the JSON ones holding the bytes
      expect(got.filter(isMp)).toEqual(Array.from({ length: 20 }, (_, i) => i).filter(isMp));
      expect(got.filter((i) => !isMp(i)).every((i) => n.toString() === '"level":"info"' && i % 5 !== 0)).toBe(true);
    }
  });

  it('answers for a payload in hand by its form', () => {
    const rec = { level: 'warn', url: 'http://a.test/"q"' };
    const u = textNeedle('/"q"');
    expect(payloadHas(Buffer.from(JSON.stringify(rec)), u)).toBe(true);
    expect(payloadHas(pack(rec), u)).toBe(true);
    expect(payloadHas(pack({ level: 'warn', url: 'http://a.test/other' }), u)).toBe(false);
    expect(payloadHas(Buffer.from(JSON.stringify({ url: 'http://a.test/other' })), u)).toBe(false);
  });
});
