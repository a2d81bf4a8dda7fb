/**
 * The read index's few fields read from a stored record's bytes (issue 17 item 3): exactly what
 * decoding the record gives for each wanted key, or "decode it" — never a different value. Seeded
 * records of every shape a verbatim record may have (maps, msgpackr records defined inline and
 * named again, nested ones, long strings, every int width, floats), with and without the signature
 * in front, from plain and shared memory; then cut short and corrupted bytes, which must not throw.
 */
import { Packr, pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { withSig } from '../../fixtures/stored-record.js';
import { RecordSkim, SKIM_KEYS } from '../../../src/domain/wire/skim-record.js';
import { readStoredRecord } from '../../../src/domain/wire/stored-record.js';
import { mulberry32 } from '../../fixtures/shm-gen.js';

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function shared(b: Uint8Array): Uint8Array {
  const view = new Uint8Array(new SharedArrayBuffer(b.length + 5), 5, b.length);
  view.set(b);
  return view;
}

/** a scalar of any width msgpack gives it, the values a decoder may confuse included (64–127 are record ids too) */
function scalar(r: () => number): unknown {
  switch (Math.floor(r() * 12)) {
    case 0:
      return pick(r, [0, 1, 63, 64, 100, 127, 128, 255, 256, 65_535, 65_536, 2 ** 31 - 1, 2 ** 32 - 1]);
    case 1:
      return pick(r, [-1, -32, -33, -128, -129, -32_768, -32_769, -(2 ** 31)]);
    case 2:
      return pick(r, [0.5, -1.25, 1e300, 404.5, Number.MIN_VALUE]);
    case 3:
      return pick(r, [true, false, null]);
    case 4:
      return 'é✓ ünïcode '.repeat(1 + Math.floor(r() * 4));
    case 5:
      return 'x'.repeat(pick(r, [0, 31, 32, 255, 256, 70_000]));
    default:
      return pick(r, ['error', 'warn', 'exception', 'network', 'console', 'GET', 'https://app.test/favicon.ico', '[vite] connected']);
  }
}

/** a value that is not a scalar: the skim must say "decode it" when a wanted key holds one */
function nested(r: () => number, depth: number): unknown {
  const t = r();
  if (depth > 3 || t < 0.3) return scalar(r);
  if (t < 0.55) return Array.from({ length: Math.floor(r() * 4) }, () => nested(r, depth + 1));
  // the same shape again and again, so a Packr with records names a structure it defined before
  const o: Record<string, unknown> = r() < 0.5 ? { id: nested(r, depth + 1), ok: nested(r, depth + 1) } : {};
  for (let i = Math.floor(r() * 3); i > 0; i--) o[pick(r, ['a', 'b', 'level', 'message', 'zz'])] = nested(r, depth + 1);
  return o;
}

function record(r: () => number): Record<string, unknown> {
  const rec: Record<string, unknown> = { ts: 1_764_000_000_000 + Math.floor(r() * 1e6) };
  const keys = [...SKIM_KEYS, 'args', 'stack', 'source', 'page_url', 'meta'];
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  for (const k of keys) {
    if (r() < 0.35) continue;
    // a wanted key mostly holds a scalar, as real records do; sometimes not
    rec[k] = (SKIM_KEYS as readonly string[]).includes(k) && r() < 0.9 ? scalar(r) : nested(r, 0);
  }
  return rec;
}

/** the payload forms a ring holds (stored-record.ts), each as msgpackr would have written it */
function forms(r: () => number, rec: Record<string, unknown>): Uint8Array[] {
  const body = [pack(rec), new Packr({ useRecords: true }).pack(rec)];
  const sig = pick(r, [0, 7, 0x7fffffff, 0x80000000, 0xffffffff, -1, -0x80000000]);
  return [body[0]!, body[1]!, withSig(sig, body[0]!), withSig(sig, body[1]!), shared(withSig(sig, body[1]!))];
}

const wanted = (v: unknown) => Object.fromEntries(SKIM_KEYS.map((k) => [k, (v as Record<string, unknown>)[k]]));

describe('RecordSkim', () => {
  it('gives exactly what decoding gives for every wanted key, or declines', () => {
    const skim = new RecordSkim();
    let read = 0;
    let declined = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = mulberry32(seed);
      const rec = record(r);
      for (const bytes of forms(r, rec)) {
        const full = readStoredRecord(bytes);
        if (skim.read(bytes)) {
          read++;
          expect(wanted(skim.rec), `seed ${seed}`).toStrictEqual(wanted(full));
        } else {
          declined++;
          // it declines only where a wanted key holds what is not a scalar
          expect(
            SKIM_KEYS.some((k) => {
              const v = (full as Record<string, unknown>)[k];
              return typeof v === 'object' && v !== null;
            }),
            `seed ${seed} declined ${JSON.stringify(wanted(full)).slice(0, 200)}`,
          ).toBe(true);
        }
      }
    }
    expect(read).toBeGreaterThan(1000);
    expect(declined).toBeGreaterThan(50);
  });

  it('reads the records the index meets: a console error with its signature, a failed request', () => {
    const skim = new RecordSkim();
    const err = { ts: 1, level: 'error', type: 'console', message: '[Store] boom 42', args: ['x', 4521, { id: 1, ok: true }], url: 'https://app.test/', source: 'a.js:1', stack: 'Error: boom\n    at f (a.js:1:2)' };
    expect(skim.read(withSig(-5, new Packr({ useRecords: true }).pack(err)))).toBe(true);
    expect(wanted(skim.rec)).toStrictEqual(wanted({ ...err, _sig: -5 }));
    const req = { ts: 1, method: 'POST', url: 'https://api.test/orders/7', status: 502, error: 'net::ERR_FAILED', duration: 12.5, page_url: 'https://app.test/' };
    expect(skim.read(new Packr({ useRecords: true }).pack(req))).toBe(true);
    expect(wanted(skim.rec)).toStrictEqual(wanted(req));
    // the signature in front wins over a key of the same name, as readStoredRecord has it
    expect(skim.read(withSig(9, pack({ _sig: 3, level: 'error' })))).toBe(true);
    expect(skim.rec._sig).toBe(9);
  });

  it('declines JSON, a top level that is not a map or record, and values it does not read', () => {
    const skim = new RecordSkim();
    expect(skim.read(Buffer.from('{"level":"error"}'))).toBe(false);
    expect(skim.read(pack(['level', 'error']))).toBe(false);
    expect(skim.read(new Uint8Array(0))).toBe(false);
    expect(skim.read(pack({ level: { nested: true } }))).toBe(false);
    // a 64-bit int and a float32: decoders differ on them, so they are left to the decoder
    expect(skim.read(Buffer.from([0x81, 0xa6, ...Buffer.from('status'), 0xcf, 0, 0, 0, 1, 0, 0, 0, 0]))).toBe(false);
    expect(skim.read(Buffer.from([0x81, 0xa6, ...Buffer.from('status'), 0xca, 0x3f, 0x80, 0, 0]))).toBe(false);
    // a key that is not a string: the decoder's own rules make it one
    expect(skim.read(Buffer.from([0x81, 0x91, 0xa5, ...Buffer.from('level'), 0xa1, 0x78]))).toBe(false);
    // and forgets the previous record's fields
    expect(skim.rec.level).toBeUndefined();
  });

  it('never throws, hangs or reads past the payload on bytes cut short or corrupted', () => {
    const skim = new RecordSkim();
    const r = mulberry32(99);
    for (let seed = 1; seed <= 60; seed++) {
      const bytes = withSig(seed, new Packr({ useRecords: true }).pack(record(mulberry32(seed))));
      for (let n = 0; n < bytes.length; n += 1 + Math.floor(bytes.length / 200)) {
        const cut = bytes.slice(0, n);
        // a cut short record read as whole would be a wrong answer: the skim must decline it
        let decodes = true;
        try {
          readStoredRecord(cut);
        } catch {
          decodes = false;
        }
        if (!decodes) expect(skim.read(cut), `seed ${seed} cut at ${n}`).toBe(false);
      }
      for (let k = 0; k < 40; k++) {
        const bad = Uint8Array.from(bytes);
        for (let f = 0; f < 3; f++) bad[Math.floor(r() * bad.length)] = Math.floor(r() * 256);
        // huge declared counts and lengths end at the payload's end, not in a long loop
        expect(() => skim.read(bad)).not.toThrow();
      }
    }
    // a declared count far beyond what is left
    expect(skim.read(Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 0x61]))).toBe(false);
    expect(skim.read(Buffer.from([0x81, 0xa1, 0x61, 0xdd, 0xff, 0xff, 0xff, 0xff]))).toBe(false);
  });
});
