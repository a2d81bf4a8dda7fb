/** The one-pass signature hash: values do not make messages different, words do. */
import { describe, expect, it } from 'vitest';
import { signatureHash } from '../../../src/domain/signals/signature-hash.js';

const same = (a: string, b: string) => expect(signatureHash(a), `${a} ~ ${b}`).toBe(signatureHash(b));
const differ = (a: string, b: string) => expect(signatureHash(a), `${a} ≠ ${b}`).not.toBe(signatureHash(b));

describe('signatureHash', () => {
  it('folds numbers, hashes, UUIDs, timestamps and quoted values', () => {
    same('user 42 not found', 'user 7 not found');
    same('took 12.5 ms', 'took 3.25 ms');
    same('user 3fa85f64-5717-4562-b3fc-2c963f66afa6 gone', 'user 9b2e1c00-0000-4111-8abc-deadbeef0001 gone');
    same('deploy abcdef0123456789 failed', 'deploy 0123456789abcdef failed');
    same('at 2026-11-23T12:00:01.123Z retry', 'at 2025-01-02T03:04:05.000Z retry');
    same(`Cannot read properties of undefined (reading 'x')`, `Cannot read properties of undefined (reading 'longer name')`);
    same('GET "https://a.test/x?y=1" failed', 'GET "https://b.test/z" failed');
    same('chunk v2 loaded', 'chunk v17 loaded');
    same('  spaced \t out  ', ' spaced out ');
  });

  it('keeps different words different', () => {
    differ('user not found', 'order not found');
    differ('TypeError: x is undefined', 'RangeError: x is undefined');
    differ('failed to fetch', 'failed to parse');
    differ("quote 'unclosed here", "quote 'unclosed there");
  });

  it('looks at the first 500 characters only, and never returns 0', () => {
    same(`${'a '.repeat(250)}tail one`, `${'a '.repeat(250)}tail two`);
    expect(signatureHash('')).not.toBe(0);
  });
});
