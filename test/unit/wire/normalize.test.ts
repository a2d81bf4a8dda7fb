/**
 * normalizeRecord cuts an object argument by its JSON length, and skips the stringify when a cheap
 * bound shows it is short: the cut must be exactly the one a stringify of every argument gives,
 * at the limit and either side of it, whatever the escaping makes of the length.
 */
import { describe, expect, it } from 'vitest';
import { cut, LIMITS, normalizeRecord, URL_FIELDS } from '../../../src/domain/wire/normalize.js';
import { KINDS } from '../../../src/domain/kinds.js';
import { mulberry32 } from '../../fixtures/shm-gen.js';

/** The rule as it reads: every object argument stringified and measured. */
function expected(args: unknown[]): { args: unknown[]; truncated: boolean } {
  let truncated = args.length > LIMITS.args;
  const out = args.slice(0, LIMITS.args).map((a) => {
    if (typeof a === 'string' && a.length > LIMITS.arg) return (truncated = true), cut(a, LIMITS.arg);
    if (a !== null && typeof a === 'object') {
      const json = JSON.stringify(a);
      if (json.length > LIMITS.arg) return (truncated = true), `${cut(json, LIMITS.arg)}…`;
    }
    return a;
  });
  return { args: out, truncated };
}

describe('normalizeRecord, object arguments', () => {
  it('cuts exactly where a stringify of each argument would, around the limit', () => {
    const r = mulberry32(3);
    const pieces = ['a', '"', '\\', '\n', '\u0001', '\ud800', 'é', '😀'];
    for (let i = 0; i < 400; i++) {
      // JSON lengths from well under to just over the limit, with escapes that multiply the length
      const piece = pieces[Math.floor(r() * pieces.length)]!;
      const len = Math.floor((LIMITS.arg / (1 + Math.floor(r() * 6))) * (0.9 + r() * 0.2));
      const s = piece.repeat(Math.max(1, Math.floor(len / piece.length)));
      const shapes: unknown[] = [{ s }, [s], { a: { b: [s, 1, null, true] } }, { [s.slice(0, 2000)]: 1.5 }, [[[s]]], { d: new Date(0), s }, { n: 2 ** 53, x: -1e-7 }];
      const arg = shapes[i % shapes.length];
      const args = ['x', arg, 3];
      const want = expected(structuredClone(args));
      const rec: Record<string, unknown> = { ts: 1, level: 'log', type: 'console', message: 'm', args };
      normalizeRecord('logs', rec);
      expect(rec.args).toEqual(want.args);
      expect(rec.args_truncated === true).toBe(want.truncated);
    }
  });

  it('leaves short objects as they are, and cuts a long one to the limit plus an ellipsis', () => {
    const rec: Record<string, unknown> = { ts: 1, level: 'log', type: 'console', message: 'm', args: [{ id: 1, ok: true }, { big: '"'.repeat(LIMITS.arg) }] };
    normalizeRecord('logs', rec);
    const args = rec.args as unknown[];
    expect(args[0]).toEqual({ id: 1, ok: true });
    expect(args[1]).toHaveLength(LIMITS.arg + 1);
    expect(rec.args_truncated).toBe(true);
  });
});

describe('normalizeRecord, address fields', () => {
  it('cuts every URL field of every kind at the limit, without splitting a surrogate pair, and leaves the rest', () => {
    for (const kind of KINDS) {
      for (const f of URL_FIELDS[kind]) {
        const long = `https://x.test/${'a'.repeat(LIMITS.url - 16)}😀tail`; // the pair straddles the limit
        const exact = 'b'.repeat(LIMITS.url);
        const r: Record<string, unknown> = { ts: 1, [f]: long, other: long };
        normalizeRecord(kind, r);
        expect(r[f], `${kind}.${f}`).toBe(long.slice(0, LIMITS.url - 1));
        expect(r.other).toBe(long);
        const e: Record<string, unknown> = { ts: 1, [f]: exact };
        normalizeRecord(kind, e);
        expect(e[f]).toBe(exact);
        // a field that is not a string is left as it is
        const n: Record<string, unknown> = { ts: 1, [f]: 42 };
        normalizeRecord(kind, n);
        expect(n[f]).toBe(42);
      }
    }
  });
});
