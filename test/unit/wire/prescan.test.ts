import { pack, Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { prescanMsgpack } from '../../../src/domain/wire/prescan.js';

const limits = { maxDepth: 32, maxElements: 500_000 };

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomValue(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 6 : 9));
  switch (k) {
    case 0: return Math.floor(r() * 200) - 100;
    case 1: return r() * 1e6;
    case 2: return 'é✓ text '.repeat(Math.floor(r() * 5));
    case 3: return r() < 0.5;
    case 4: return null;
    case 5: return Math.floor(r() * 2 ** 40);
    case 6: return Array.from({ length: Math.floor(r() * 5) }, () => randomValue(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      const keys = ['a', 'b', 'ts', 'level', 'message', 'url', 'x' + Math.floor(r() * 100)];
      for (let i = 0; i < Math.floor(r() * 5); i++) o[keys[Math.floor(r() * keys.length)]!] = randomValue(r, depth + 1);
      return o;
    }
  }
}

describe('prescanMsgpack', () => {
  it('accepts every valid frame, plain maps and msgpackr records alike (seeded)', () => {
    const r = rng(7);
    const records = new Packr({ useRecords: true });
    for (let i = 0; i < 2000; i++) {
      const v = randomValue(r, 0);
      expect(prescanMsgpack(pack(v), limits), JSON.stringify(v)).toEqual({ ok: true });
      expect(prescanMsgpack(records.pack(v), limits), JSON.stringify(v)).toEqual({ ok: true });
    }
  });

  it('walks more than 64 record structures: recycled one-byte ids and two-byte ids', () => {
    const objs = Array.from({ length: 300 }, (_, i) => ({ [`k${i}`]: i, common: 'x', nested: { [`n${i % 70}`]: [i] } }));
    const recycled = new Packr({ useRecords: true }).pack({ t: 'batch', logs: objs });
    const twoByte = new Packr({ useRecords: true, maxOwnStructures: 1000 }).pack({ t: 'batch', logs: objs });
    expect(Buffer.from(twoByte).indexOf(Buffer.from([0xd5, 0x72]))).toBeGreaterThan(0);
    for (const bytes of [recycled, twoByte]) {
      expect(prescanMsgpack(bytes, limits)).toEqual({ ok: true });
      // every prefix is refused: the walk really follows the structures
      for (let cut = 0; cut < bytes.length; cut += 97) expect(prescanMsgpack(bytes.subarray(0, cut), limits).ok).toBe(false);
    }
  });

  it('refuses every truncation of a valid frame, and never throws', () => {
    const bytes = new Packr({ useRecords: true }).pack({ t: 'batch', seq: 3, logs: [{ ts: 1, level: 'log', message: 'héllo', args: [1, { a: [2, 3] }] }] });
    for (let cut = 0; cut < bytes.length; cut++) {
      const res = prescanMsgpack(bytes.subarray(0, cut), limits);
      expect(res.ok, `prefix of ${cut} bytes`).toBe(false);
    }
  });

  it('refuses 0xc1, trailing bytes and unknown extensions with specific codes', () => {
    expect(prescanMsgpack(Uint8Array.of(0xc1), limits)).toMatchObject({ ok: false, code: 'msgpack_invalid' });
    expect(prescanMsgpack(Uint8Array.of(0x01, 0x02), limits)).toMatchObject({ ok: false, code: 'msgpack_invalid' });
    expect(prescanMsgpack(Uint8Array.of(0xd4, 0x05, 0x00), limits)).toMatchObject({ ok: false, code: 'msgpack_invalid' });
  });

  it('refuses nested array16 bombs after a couple of headers, and deep nesting without recursion', () => {
    const bomb = new Uint8Array(72 * 1024);
    for (let i = 0; i + 3 <= bomb.length; i += 3) bomb.set([0xdc, 0xff, 0xff], i);
    const res = prescanMsgpack(bomb, limits);
    expect(res).toMatchObject({ ok: false, code: 'msgpack_bad_length' });
    expect((res as { offset: number }).offset).toBeLessThan(16);
    const deep = new Uint8Array(100_001).fill(0x91);
    deep[100_000] = 0xc0;
    expect(prescanMsgpack(deep, limits)).toMatchObject({ ok: false, code: 'msgpack_too_deep' });
  });

  it('counts declared elements against the limit', () => {
    const wide = pack(Array.from({ length: 1000 }, (_, i) => i));
    expect(prescanMsgpack(wide, { maxDepth: 32, maxElements: 999 })).toMatchObject({ ok: false, code: 'msgpack_too_many_elements' });
    expect(prescanMsgpack(wide, { maxDepth: 32, maxElements: 1000 })).toEqual({ ok: true });
  });

  it('refuses invalid UTF-8 in strings and in record keys', () => {
    const s = new Uint8Array(pack({ message: 'AAAA' }));
    s[s.length - 4] = 0xff;
    expect(prescanMsgpack(s, limits)).toMatchObject({ ok: false, code: 'invalid_utf8' });
    const rec = new Uint8Array(new Packr({ useRecords: true }).pack({ kkkk: 1 }));
    rec.set([0xc0, 0xc1], Buffer.from(rec).indexOf('kk'));
    expect(prescanMsgpack(rec, limits)).toMatchObject({ ok: false, code: 'invalid_utf8' });
  });

  it('refuses a bad byte anywhere in strings of every length around the JS and native checks, and passes good multibyte text', () => {
    const bad = [[0xff], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]];
    for (const len of [1, 3, 4, 5, 63, 64, 65, 100, 511, 512, 513, 600]) {
      for (const seq of bad) {
        for (const at of [0, Math.floor(len / 2), len - 1]) {
          const bytes = Buffer.alloc(len + seq.length, 'a');
          bytes.set(seq, Math.min(at, len));
          const frame = new Uint8Array(pack({ message: 'x' }));
          // the string's bytes replaced by `bytes`, its header rewritten for their length (str8/str16)
          const head = bytes.length < 256 ? [0xd9, bytes.length] : [0xda, bytes.length >> 8, bytes.length & 0xff];
          const out = Buffer.concat([Buffer.from(frame.subarray(0, frame.length - 2)), Buffer.from(head), bytes]);
          expect(prescanMsgpack(out, limits), `len ${len} seq ${seq.join(',')} at ${at}`).toMatchObject({ ok: false, code: 'invalid_utf8' });
        }
      }
      const good = 'é😀a'.repeat(len).slice(0, len);
      expect(prescanMsgpack(pack({ message: good }), limits)).toEqual({ ok: true });
    }
  });
});
