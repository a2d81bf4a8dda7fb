import { Packr, pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { buildFramePool } from '../../../bench/load/frames.js';
import { decodeFrame } from '../../../src/domain/wire/decode.js';
import { peekBatchSeq } from '../../../src/domain/wire/peek-seq.js';

const limits = { maxDepth: 32, maxElements: 500_000 };
const records = new Packr({ useRecords: true });
const log = { ts: 1_700_000_000_000, level: 'error', type: 'console', message: 'boom' };

/** the seq decodeFrame finds, or undefined when the frame is not a valid batch */
function decodedSeq(b: Uint8Array): number | undefined {
  const d = decodeFrame(b, limits);
  return d.ok && d.frame.t === 'batch' ? d.frame.seq : undefined;
}

const SEQS = [0, 1, 5, 63, 64, 100, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER];

describe('peekBatchSeq', () => {
  it("reads the seq of the extension's frames (plain maps, t and seq first) for every width of integer", () => {
    for (const seq of SEQS) {
      const f = pack({ t: 'batch', seq, sent_at: Date.now(), logs: [log], tab_id: 3, page_url: 'https://app.test/' });
      expect(peekBatchSeq(f)).toBe(seq);
      expect(decodedSeq(f)).toBe(seq);
    }
  });

  it('reads the seq of record-extension frames, and never disagrees with the decoder', () => {
    for (const seq of SEQS) {
      const f = records.pack({ t: 'batch', seq, sent_at: 1.5, logs: [log, log] });
      const peeked = peekBatchSeq(f);
      expect(decodedSeq(f)).toBe(seq);
      // a byte 0x40-0x7f could name a structure in such a frame: those are left to the decoder
      if (seq < 64 || seq > 127) expect(peeked).toBe(seq);
      else expect([undefined, seq]).toContain(peeked);
    }
  });

  it("reads the load generator's frames (records, seq patched in place)", () => {
    const pool = buildFramePool(7, 4);
    for (const f of pool.frames) expect(peekBatchSeq(f)).toBe(decodedSeq(f));
    expect(peekBatchSeq(pool.frames[0]!)).toBeTypeOf('number');
  });

  it('leaves to the decoder anything that is not plainly a batch with its seq up front', () => {
    const cases: Array<[string, Uint8Array]> = [
      ['a ping', pack({ t: 'ping', ts: 1 })],
      ['a hello', pack({ t: 'hello', v: 1, client: 'x', version: '1', session: 's' })],
      ['t is not "batch"', pack({ t: 'batcH', seq: 1 })],
      ['t is longer', pack({ t: 'batches', seq: 1 })],
      ['seq negative', pack({ t: 'batch', seq: -1 })],
      ['seq fractional', pack({ t: 'batch', seq: 1.5 })],
      ['seq a string', pack({ t: 'batch', seq: '1' })],
      ['seq past 2^53', pack({ t: 'batch', seq: 2 ** 60 })],
      ['seq after the records', pack({ t: 'batch', logs: [log], seq: 1 })],
      ['seq missing', pack({ t: 'batch', logs: [log] })],
      ['no t', pack({ seq: 1, logs: [log] })],
      ['an array at the top', pack([{ t: 'batch', seq: 1 }])],
      ['a string at the top', pack('batch')],
      ['empty', new Uint8Array(0)],
    ];
    for (const [what, f] of cases) expect(peekBatchSeq(f), what).toBeUndefined();
  });

  it('reads past leading scalars of any kind, as the decoder would', () => {
    const f = pack({ v: 1, big: 70_000, f: 0.25, nil: null, yes: true, name: 'x'.repeat(40), t: 'batch', seq: 9, sent_at: -3 });
    expect(peekBatchSeq(f)).toBe(9);
    expect(decodedSeq(f)).toBe(9);
  });

  it('never throws and never reads a seq the frame does not hold: every prefix, and single-byte corruptions', () => {
    const frames = [pack({ t: 'batch', seq: 77_777, sent_at: 3, logs: [log] }), records.pack({ t: 'batch', seq: 4242, sent_at: 2, logs: [log] })];
    for (const f of frames) {
      const seq = decodedSeq(f)!;
      for (let n = 0; n <= f.length; n++) {
        const v = peekBatchSeq(f.subarray(0, n));
        if (v !== undefined) expect(v).toBe(seq);
      }
      // flip every byte to a few values: the answer is undefined, the decoder's seq, or a seq
      // the corrupted frame itself holds (decoded), never an exception
      for (let i = 0; i < f.length; i++) {
        for (const x of [0x00, 0x7f, 0x80, 0xc1, 0xd9, 0xde, 0xff]) {
          const g = Uint8Array.from(f);
          g[i] = x;
          const v = peekBatchSeq(g);
          if (v === undefined) continue;
          const d = decodedSeq(g);
          if (d !== undefined) expect(v).toBe(d);
          else expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
        }
      }
    }
  });

  it('agrees with the decoder on random frames: keys in any order, extra scalars, any seq encoding', () => {
    let seed = 12345;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    let peeked = 0;
    for (let i = 0; i < 2000; i++) {
      const seq = [Math.floor(rnd() * 64), Math.floor(rnd() * 70_000), Math.floor(rnd() * 2 ** 45)][Math.floor(rnd() * 3)]!;
      const entries: Array<[string, unknown]> = [
        ['t', 'batch'],
        ['seq', seq],
        ['sent_at', rnd() * 1e12],
        ['tab_id', Math.floor(rnd() * 100)],
        ['page_url', 'https://x.test/' + 'p'.repeat(Math.floor(rnd() * 300))],
        ['logs', [log]],
      ];
      for (let j = entries.length - 1; j > 0; j--) {
        const k = Math.floor(rnd() * (j + 1));
        [entries[j], entries[k]] = [entries[k]!, entries[j]!];
      }
      const obj = Object.fromEntries(entries);
      const f = rnd() < 0.5 ? pack(obj) : records.pack(obj);
      const v = peekBatchSeq(f);
      if (v !== undefined) {
        peeked++;
        expect(v).toBe(decodedSeq(f));
      }
    }
    // t and seq come before the records in about a third of the orders
    expect(peeked).toBeGreaterThan(300);
  });
});
