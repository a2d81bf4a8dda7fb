/** The one door for user patterns (#18 item 1): what it accepts, what it refuses and why, and how matches come out. */
import { describe, expect, it } from 'vitest';
import { GasolineError } from '../../../src/errors.js';
import { compileUserPattern, MAX_PROGRAM, userPatternProblem } from '../../../src/domain/patterns/user-pattern.js';

function refusal(p: string, use: 'noise' | 'redaction' = 'redaction'): string {
  try {
    compileUserPattern(p, use);
  } catch (e) {
    expect(e).toBeInstanceOf(GasolineError);
    expect((e as GasolineError).code).toBe('pattern_refused');
    return (e as GasolineError).message;
  }
  throw new Error(`${p} was accepted`);
}

describe('compileUserPattern', () => {
  it('runs the patterns that hang V8 in one linear pass', () => {
    const text = `${'a'.repeat(20_000)}!`;
    for (const p of ['(?:a|a)+$', '(a|aa)+$', '(a+)+$', '(x+x+)+y', '(.|a)+$', '(\\w+\\s?)+\\b$']) {
      const re = compileUserPattern(p, 'noise');
      const t0 = performance.now();
      re.test(text);
      re.spans(text);
      expect(performance.now() - t0, p).toBeLessThan(500);
    }
  });

  it('refuses what RE2 cannot run, saying what to do instead', () => {
    expect(refusal('(a)\\1')).toMatch(/^backreferences/);
    expect(refusal('(?<n>a)\\k<n>')).toMatch(/^backreferences/);
    for (const p of ['(?=a)b', '(?!a)b', '(?<=a)b', '(?<!a)b']) expect(refusal(p, 'noise'), p).toMatch(/^lookahead and lookbehind/);
    expect(refusal('[unclosed')).toMatch(/^not a valid RE2 pattern: missing closing \]/);
    expect(refusal('x'.repeat(501))).toMatch(/longer than 500/);
  });

  it('caps the program size (the constant of the linear bound); the field it reads is pinned here', () => {
    expect(refusal('a{1000}')).toMatch(new RegExp(`compiles to \\d+ steps \\(at most ${MAX_PROGRAM}\\)`));
    expect(refusal('[a-z]{300}[0-9]{300}')).toMatch(/steps/);
    expect(userPatternProblem('acme_[A-Za-z0-9]{32}', 'redaction')).toBeNull();
    expect(userPatternProblem('[A-Za-z0-9+/]{40,100}={0,2}', 'redaction')).toBeNull();
  });

  it('refuses redaction patterns that can match the empty string, anywhere', () => {
    for (const p of ['(?:)', 'a*', 'x?', '(a|a?)+$', '$', '^', '\\b', '\\B', 'a|', '(?:foo)?', 'x{0,3}', '(?m)^$']) expect(refusal(p), p).toMatch(/matches the empty string/);
    // a noise rule may match "" (it then hides everything, which is the user's call)
    expect(userPatternProblem('x?', 'noise')).toBeNull();
  });

  it('noise patterns are case-insensitive; redaction ones as written; JS \\u escapes are understood', () => {
    expect(compileUserPattern('typeerror', 'noise').test('TypeError: x')).toBe(true);
    expect(compileUserPattern('typeerror', 'redaction').test('TypeError: x')).toBe(false);
    expect(compileUserPattern('\\u0041\\u{42}', 'redaction').test('xABy')).toBe(true);
    expect(compileUserPattern('\\\\u0041', 'redaction').test('\\u0041')).toBe(true);
  });

  it('spans: every match in UTF-16 offsets, the group named s when there is one', () => {
    const re = compileUserPattern('key=(?<s>[a-z]+)', 'redaction');
    const s = 'é😀 key=abc, key=de';
    expect(re.spans(s).map((sp) => s.slice(sp.start, sp.end))).toEqual(['abc', 'de']);
    const whole = compileUserPattern('ORD-\\d{3}', 'redaction');
    expect(whole.spans('ORD-123 ORD-456')).toEqual([{ start: 0, end: 7 }, { start: 8, end: 15 }]);
    expect(whole.searchFrom('ORD-123 ORD-456', 1)).toBe(8);
    expect(whole.searchFrom('ORD-123', 1)).toBe(-1);
  });

  it('the first search is never timed out, and failing closed starts at the match it found', () => {
    // budget 0: as if the thread stalled (GC, a busy neighbour) before every look at the clock
    const re = compileUserPattern('acme-[A-Z0-9]{4}', 'redaction');
    const one = 'TypeError: acme-AB12 at x';
    expect(re.spans(one, 0)).toEqual([{ start: 11, end: 20 }]);
    const two = 'a acme-AB12 b acme-CD34 c';
    expect(re.spans(two, 0)).toEqual([{ start: 2, end: 11 }, { start: 14, end: two.length }]);
  });

  it('finding every match has a wall-clock budget; past it the rest of the text is the secret (fail closed)', () => {
    // each search reads to the end before settling on one "a": n searches of n characters
    const re = compileUserPattern('a*b|a', 'redaction');
    const s = 'a'.repeat(20_000);
    const t0 = performance.now();
    const spans = re.spans(s, 5);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(spans.at(-1)!.end).toBe(s.length);
    // covered from start to end: nothing between the spans escapes
    let at = 0;
    for (const sp of spans) {
      expect(sp.start).toBe(at);
      at = sp.end;
    }
  });
});
