/** The base64 run finder probes every 16th character; it must find exactly what a full scan finds. */
import { describe, expect, it } from 'vitest';
import { decodeRun, eachRun, isUserPassword, MAX_RUNS, MIN_RUN } from '../../../src/domain/redaction/base64.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';

/** the same runs by reading every character (runs that could be base64 of text only) */
function naive(s: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of s.matchAll(/[A-Za-z0-9+/_-]+/g)) {
    const a = m.index;
    const b = a + m[0].length;
    if (b - a < MIN_RUN) continue;
    let lead = true;
    for (let j = a; j < b - 1; j += 4) if (!/[CDI-Za-f]/.test(s[j]!)) lead = false;
    if (!lead) continue;
    let end = b;
    while (end < s.length && end - b < 2 && s[end] === '=') end++;
    out.push([a, end]);
  }
  return out;
}

function seeded(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
}

describe('eachRun', () => {
  it('finds what a full scan finds, on random mixes of words, base64 of text and punctuation', () => {
    const rnd = seeded(18);
    const pieces = () => {
      const r = rnd();
      if (r < 0.3) return Buffer.from(`user${Math.floor(rnd() * 1e6)}:pw-${rnd().toString(36)}`).toString(rnd() < 0.5 ? 'base64' : 'base64url');
      if (r < 0.6) return 'abcdefghijklmnopqrstuvwxyz'.slice(0, 1 + Math.floor(rnd() * 25));
      return ' .:/="{}'[Math.floor(rnd() * 8)]!.repeat(1 + Math.floor(rnd() * 3));
    };
    for (let n = 0; n < 500; n++) {
      let s = '';
      while (s.length < 40 + n) s += pieces();
      const got: Array<[number, number]> = [];
      eachRun(s, (a, b) => (got.push([a, b]), false));
      expect(got, s).toEqual(naive(s));
    }
  });

  it('reads characters beyond Latin-1 as what they are, not as their low byte', () => {
    // U+0141 'Ł' ends in 0x41 ('A'), U+4E2D in 0x2D ('-'): neither may join or split a run
    const run = Buffer.from('alice:s3cret-pw!').toString('base64');
    for (const s of [`Ł${run}`, `${run}Ł`, `中${run}中`, `é${run}é`, `ŁŁŁŁŁŁŁŁŁŁŁŁŁŁŁŁŁŁ ${run}`, `${'中'.repeat(20)}${run.slice(0, 8)}Ł${run.slice(8)}`]) {
      const got: Array<[number, number]> = [];
      eachRun(s, (a, b) => (got.push([a, b]), false));
      expect(got, s).toEqual(naive(s));
    }
  });

  it('finds the same runs in a text longer than the buffer a thread keeps, and in a scan started inside a scan', () => {
    const run = Buffer.from('alice:s3cret-pw!').toString('base64');
    const long = `${'word '.repeat(300_000)}${run} end`;
    const got: Array<[number, number]> = [];
    eachRun(long, (a, b) => (got.push([a, b]), false));
    expect(got).toEqual([[long.indexOf(run), long.indexOf(run) + run.length]]);
    // the callback scans another text: the outer scan must still read its own
    const outer = `x ${run} y ${run} z`;
    const innerText = `.. ${run} ${'Q'.repeat(20)}`;
    const inner: Array<[number, number]> = [];
    const seen: Array<[number, number]> = [];
    eachRun(outer, (a, b) => {
      seen.push([a, b]);
      eachRun(innerText, (c, d) => (inner.push([c, d]), false));
      return false;
    });
    expect(seen).toEqual(naive(outer));
    expect(seen.length).toBe(2);
    expect(inner).toEqual([...naive(innerText), ...naive(innerText)]);
    expect(inner.length).toBe(4); // the run and the Q run, each time
  });

  it('decodes only printable text, and tells user:password from a URL', () => {
    expect(decodeRun(Buffer.from('alice:s3cret-pw').toString('base64'))).toBe('alice:s3cret-pw');
    expect(decodeRun(Buffer.from([0, 1, 2, 200, 201, 3, 4, 5, 6]).toString('base64'))).toBeNull();
    expect(isUserPassword('alice:s3cret-pw')).toBe(true);
    expect(isUserPassword('https://example.test/x')).toBe(false);
    expect(isUserPassword('a b:c d e f')).toBe(false);
  });

  it('redacts the run and keeps the text around it; a plain base64 payload stays', () => {
    const e = compileRedaction();
    const enc = Buffer.from('{"password":"hunter2-hunter2"}').toString('base64url');
    expect(e.redactText(`blob ${enc} end`)).toBe('blob [REDACTED:base64_secret] end');
    const plain = Buffer.from('nothing secret in this sentence at all').toString('base64');
    expect(e.redactText(`blob ${plain} end`)).toBe(`blob ${plain} end`);
  });

  it('is bounded: past MAX_RUNS runs are not decoded, and count as secrets (no hiding behind decoys)', () => {
    const decoy = Buffer.from('nothing secret in here').toString('base64');
    let decoded = 0;
    eachRun(Array.from({ length: 1000 }, () => decoy).join(' '), (_a, _b, capped) => (capped || decoded++, false));
    expect(decoded).toBe(MAX_RUNS);
    const secret = Buffer.from('alice:s3cret-pw!').toString('base64');
    const out = compileRedaction().redactText(`${Array.from({ length: MAX_RUNS }, () => decoy).join(' ')} ${secret}`);
    expect(out).not.toContain(secret);
    expect(out.startsWith(decoy)).toBe(true);
  });
});
