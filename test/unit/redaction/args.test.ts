/**
 * isLabel's cheap word count (tooManyWords) runs before its regexes (issue 17). What must hold:
 * isLabel answers as it did without it on every input, so tooManyWords says "too many" only
 * where the regexes' own count would turn the text down: every separator (':', '=', '->', '=>',
 * ' is', ' was', ' are', any case), every kind of whitespace JavaScript's `\s` and `trim` know,
 * whitespace at either end.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../fixtures/shm-gen.js';
import { hasLabel, isLabel, tooManyWords } from '../../../src/domain/redaction/args.js';
import { isSensitiveKey } from '../../../src/domain/redaction/keyed.js';
import { isSpace } from '../../../src/domain/redaction/trigger.js';

/** isLabel as it was before the word count (base 40ca168), the specification */
const LABEL_WORDS = new Set(['pass', 'pw', 'psw', 'pword', 'pin', 'passcode', 'passcodes', 'key', 'keys']);
const LABEL_HINT = /pass|pw|pin|secret|token|key|auth|cred|sess|sid|jwt|cookie|otp/i;
function specIsLabel(s: string): boolean {
  if (s.length === 0 || s.length > 40 || !LABEL_HINT.test(s)) return false;
  let t = s.trim();
  const sep = /\s*(?:[:=]|->|=>)$/.exec(t) ?? /\s+(?:is|was|are)$/i.exec(t);
  if (sep) t = t.slice(0, sep.index);
  if (t.length === 0) return false;
  const words = t.split(/\s+/);
  if (words.length > (sep ? 4 : 2)) return false;
  const last = words[words.length - 1]!;
  const lower = last.toLowerCase();
  if ((lower === 'key' || lower === 'id') && words.length > 1) return isSensitiveKey(`${words[words.length - 2]} ${last}`);
  return LABEL_WORDS.has(lower) || isSensitiveKey(last);
}

/** every UTF-16 code unit JavaScript's `\s` takes, and some that look like spaces but are not */
const SPACES = Array.from({ length: 0x10000 }, (_, c) => String.fromCharCode(c)).filter((c) => /\s/.test(c));
const NOT_SPACES = ['\u180e', '\u200b', '\u2060', '\u00ad', '\u0085', '\u007f', '\u001a', '\u0000'];
const WORDS = ['pass', 'PW', 'password', 'token', 'Token', 'api', 'key', 'KEY', 'secret', 'session', 'id', 'auth', 'your', 'the', 'retry', 'is', 'was', 'are', 'IS', 'Was', 'x', 'e', 's', 'otp', 'jwt'];
const SEPS = [':', '=', '->', '=>', ' is', ' was', ' are', ' IS', ' Are', ' wAs', '::', '==', '>', '-', 's', 'e', 'S', 'E'];

describe('tooManyWords before isLabel', () => {
  it('isSpace is exactly `\\s` (and what trim removes) on every code unit', () => {
    const wrong: string[] = [];
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      if (isSpace(c) !== /\s/.test(ch) || isSpace(c) !== (`a${ch}`.trim() === 'a')) wrong.push(`U+${c.toString(16)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('the edges: separators, unicode spaces, whitespace at the ends', () => {
    const cases: Array<[string, boolean]> = [
      ['password:', true],
      ['api key =', true],
      ['pass', true],
      ['Your token is', true],
      ['your api token was', true],
      ['your api token are', true],
      ['the new api token is', true], // four words before the separator: the most it takes
      ['the brand new api token is', false], // five
      ['a b c d token:', false],
      ['a b c token:', true],
      ['a b c token->', true],
      ['a b c token =>', true],
      ['a b c d token =>', false],
      ['auth token', true],
      ['my auth token', false], // three words and no separator
      ['auth token   ', true], // trailing whitespace is no word
      ['   auth token', true],
      ['\u3000auth\u00a0token\u2028', true], // unicode spaces trim and split as ' ' does
      ['my\u200bauth token', true], // a zero-width space is no whitespace: two words, not three
      ['my\u2003auth\u2003token', false],
      ['my\u2003auth\u2003token\u2003is', true],
      ['a b c d token\u3000:', false],
      ['a b c token\u3000:\u3000', true],
      ['session id', true],
      ['token ISE', false],
      [' : ', false],
      ['', false],
      ['   ', false],
    ];
    for (const [s, want] of cases) {
      expect(specIsLabel(s), `spec ${JSON.stringify(s)}`).toBe(want);
      expect(isLabel(s), JSON.stringify(s)).toBe(want);
      if (tooManyWords(s)) expect(want, `tooManyWords ${JSON.stringify(s)}`).toBe(false);
    }
    // it does turn texts down before the regexes, or it would save nothing
    expect(tooManyWords('my auth token')).toBe(true);
    expect(tooManyWords('retry script failed')).toBe(true);
    expect(tooManyWords('a b c d token =>')).toBe(true);
    expect(tooManyWords('the new api token is')).toBe(false);
  });

  it('isLabel answers as before on 200 000 generated texts; tooManyWords only where it says no', () => {
    const rnd = mulberry32(17);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
    const space = (): string => (rnd() < 0.6 ? ' ' : rnd() < 0.85 ? pick(SPACES) : pick(NOT_SPACES)).repeat(1 + Math.floor(rnd() * 2));
    let cut = 0;
    let labels = 0;
    for (let n = 0; n < 200_000; n++) {
      let s = rnd() < 0.3 ? space() : '';
      const words = 1 + Math.floor(rnd() * 6);
      for (let w = 0; w < words; w++) s += (w > 0 ? space() : '') + pick(WORDS);
      if (rnd() < 0.6) s += (rnd() < 0.3 ? space() : '') + pick(SEPS);
      if (rnd() < 0.3) s += space();
      const want = specIsLabel(s);
      if (tooManyWords(s)) {
        cut++;
        if (want) expect.fail(`tooManyWords turned down a label: ${JSON.stringify(s)}`);
      }
      if (isLabel(s) !== want) expect.fail(`isLabel changed on ${JSON.stringify(s)}: ${!want}`);
      if (want) labels++;
    }
    // neither side vacuous
    expect(cut).toBeGreaterThan(50_000);
    expect(labels).toBeGreaterThan(5_000);
  });

  it('hasLabel: a sentence ending in "token" does not label the number after it; a label does', () => {
    expect(hasLabel(['retry with a fresh token', 12345])).toBe(false);
    expect(hasLabel(['password:', 'hunter2'])).toBe(true);
    expect(hasLabel(['Your token is', 'abc'])).toBe(true);
    expect(hasLabel(['Your token is'])).toBe(false); // the last argument labels nothing
  });
});
