/**
 * "Does this value look like a credential?" for values whose name says little: a query parameter
 * with an uncommon name (`?appid=…`), a connection-string pair, a value under a secret-ish key
 * (`appKey`, `signature`). Long, high-entropy, mixed character classes (#20 item 1), and none of
 * the things that share that shape but are not secrets: UUIDs, hex ids shorter than an MD5, base64
 * of text (pagination cursors) or of an image, slugs and dotted names.
 *
 * One pass over at most MAX_SHAPE characters, plus one base64 decode of the same: linear.
 */
import { decodeRun } from './base64.js';

/** shorter mixed-case values are ids and words more often than keys (a nanoid is 21: kept) */
export const MIN_MIXED = 22;
/** one letter case plus digits (hex, base32, ULIDs): an MD5-length hex key is the shortest taken */
export const MIN_ONE_CASE = 32;
export const MAX_SHAPE = 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** base64 of PNG, JPEG, GIF, WebP, SVG, PDF, WOFF: an inlined asset, not a credential */
/** keys that are public by design: Stripe's publishable keys */
const PUBLIC = /^pk_(?:live|test)_/;
const MEDIA = /^(?:iVBORw0KGgo|\/9j\/|R0lGOD|UklGR|PHN2Zy|PD94bWwg|JVBERi0|d09GR|d09GM)/;

/** The value as it would read decoded: `%2B` is a '+' of a base64 signature. */
function unpercent(v: string): string {
  if (v.indexOf('%') < 0) return v;
  return v.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

export function secretShaped(raw: string): boolean {
  if (raw.length < MIN_MIXED || raw.length > MAX_SHAPE * 3) return false;
  const v = unpercent(raw);
  const n = v.length;
  if (n < MIN_MIXED || n > MAX_SHAPE) return false;
  let upper = 0;
  let lower = 0;
  let digit = 0;
  let seps = 0;
  let hex = true;
  let run = 0;
  let longest = 0;
  const seen = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i);
    if (c >= 48 && c <= 57) digit++;
    else if (c >= 65 && c <= 90) {
      upper++;
      if (c > 70) hex = false;
    } else if (c >= 97 && c <= 122) {
      lower++;
      if (c > 102) hex = false;
    } else if (c === 43 || c === 47 || c === 61) hex = false; // + / = of base64
    else if (c === 45 || c === 95 || c === 46 || c === 126) {
      // - _ . ~: word separators of slugs and dotted names (and of base64url, rarely)
      seps++;
      hex &&= c === 45;
      longest = Math.max(longest, run);
      run = 0;
      continue;
    } else return false; // a space, ':', ',' …: prose, a URL, a list
    run++;
    seen.set(c, (seen.get(c) ?? 0) + 1);
  }
  longest = Math.max(longest, run);
  const letters = upper + lower;
  if (digit === 0 || letters === 0) return false; // words, WORDS, numbers, timestamps
  // a slug or a dotted name: many separators and no long unbroken stretch
  if (seps > 2 && longest < 16) return false;
  if (UUID.test(v)) return false;
  const mixedCase = upper > 0 && lower > 0;
  if (!mixedCase && n < MIN_ONE_CASE) return false;
  if (hex && n < MIN_ONE_CASE) return false;
  let h = 0;
  const m = n - seps;
  for (const k of seen.values()) {
    const p = k / m;
    h -= p * Math.log2(p);
  }
  // random hex of 32 has 3.4–3.9 bits a character (16 symbols), random base62 of 22 about 4:
  // what falls below is repetition (`aaaa1111…`), not a key
  if (h < (hex ? 3.0 : 3.5)) return false;
  // base64 that decodes to text (a cursor, a JSON blob) or to an image: what it holds is looked
  // at by the base64 pass; the shape alone says nothing
  if (MEDIA.test(v) || PUBLIC.test(v)) return false;
  if (!hex && decodeRun(v) !== null) return false;
  return true;
}
