/**
 * Where each element of an HTTP body's array lies in the body's bytes (`{"entries":[…]}` of
 * POST /logs), so that a record validation, redaction and normalisation leave as it came is stored
 * as those bytes instead of being serialised again: JSON.stringify was a quarter of the worker's
 * time under POST /logs (issue 17 item 5). The JSON twin of the msgpack pre-scan (prescan.ts).
 *
 * The body has been parsed already (JSON.parse decides what is valid); this walk only finds
 * boundaries and says, per element, whether its bytes are exactly what JSON.stringify would write
 * for the parsed value, apart from the order of keys, which no reader depends on:
 *   - an object, compact (no whitespace between tokens), its strings' escapes only those
 *     JSON.stringify writes (`\n`, `\"`, …; a `\u0041` or `\/` would make the bytes differ from
 *     what byte pre-filters expect), integers only and written as JSON.stringify writes them (no
 *     fraction, exponent, leading zero or -0, at most 15 digits);
 *   - `entries`: its key-value pairs at every depth, compared with what validation took, as for
 *     msgpack: a repeated key (the last value wins in JSON.parse) or a key the check dropped
 *     refuses the element.
 * The walk reads the text JSON.parse read (String indexOf is memchr-fast with no wrapper, where a
 * Buffer's indexOf cost ~50 ns a call), so only an ASCII body is noted: its characters are its
 * bytes. Any other is refused whole and its records are serialised as before.
 */
import { CLOSE_ARR, CLOSE_OBJ, COLON, COMMA, OPEN_ARR, OPEN_OBJ, QUOTE } from './json-bytes.js';
import type { RecordSpans } from './record-spans.js';

const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** digits of an integer every double holds exactly and JSON.stringify writes as they are */
const MAX_DIGITS = 15;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** what one element's walk found */
interface Walk {
  pos: number;
  keys: number;
  /** the bytes are not what JSON.stringify would write */
  loose: boolean;
}

const w: Walk = { pos: 0, keys: 0, loose: false };

function skipSpace(b: string, i: number): number {
  while (i < b.length && isSpace(b.charCodeAt(i))) i++;
  return i;
}

/**
 * The escapes JSON.stringify itself writes (\" \\ \b \f \n \r \t): a string holding only these
 * is written back byte for byte. `\/` and `\u` (which stringify writes only for the other control
 * characters and lone surrogates) make the element loose.
 */
const SHORT_ESCAPE = new Uint8Array(256);
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;

/** the body's next backslash at or after the cursor's string (body.length: none) */
let nextBackslash = 0;

/**
 * From the opening quote at w.pos to after the closing one. The closing quote is found with
 * indexOf (memchr); an escape before it is looked at, and the search goes on after it.
 */
function string(b: string): void {
  let i = w.pos + 1;
  for (;;) {
    const q = b.indexOf('"', i);
    if (nextBackslash < i) {
      const at = b.indexOf('\\', i);
      nextBackslash = at < 0 ? b.length : at;
    }
    if (nextBackslash > q) {
      w.pos = q + 1;
      return;
    }
    if (SHORT_ESCAPE[b.charCodeAt(nextBackslash + 1)] !== 1) w.loose = true;
    // past the escaped character (an escaped quote does not end the string)
    i = nextBackslash + 2;
  }
}

function number(b: string): void {
  let i = w.pos;
  if (b.charCodeAt(i) === MINUS) i++;
  const first = i;
  while (i < b.length && b.charCodeAt(i) >= ZERO && b.charCodeAt(i) <= NINE) i++;
  const digits = i - first;
  // a fraction, an exponent, a leading zero, -0 or too many digits: JSON.stringify writes it otherwise
  if (digits === 0 || digits > MAX_DIGITS || (b.charCodeAt(first) === ZERO && (digits > 1 || first > w.pos))) w.loose = true;
  const c = b.charCodeAt(i);
  if (c === 0x2e || c === 0x65 || c === 0x45) {
    w.loose = true;
    i++;
    while (i < b.length && ((b.charCodeAt(i) >= ZERO && b.charCodeAt(i) <= NINE) || b.charCodeAt(i) === 0x2b || b.charCodeAt(i) === MINUS || b.charCodeAt(i) === 0x65 || b.charCodeAt(i) === 0x45 || b.charCodeAt(i) === 0x2e)) i++;
  }
  w.pos = i;
}

/** one value at w.pos (no whitespace before it), to just after it; whitespace inside makes it loose */
function value(b: string): void {
  const c = b.charCodeAt(w.pos);
  if (c === QUOTE) return string(b);
  if (c === OPEN_OBJ || c === OPEN_ARR) return container(b, c === OPEN_OBJ);
  if (c === MINUS || (c >= ZERO && c <= NINE)) return number(b);
  // true, false, null: letters up to the next delimiter
  let i = w.pos;
  while (i < b.length && b.charCodeAt(i) >= 0x61 && b.charCodeAt(i) <= 0x7a) i++;
  w.pos = i;
}

function container(b: string, isObject: boolean): void {
  const close = isObject ? CLOSE_OBJ : CLOSE_ARR;
  w.pos++;
  if (isSpace(b.charCodeAt(w.pos))) {
    w.loose = true;
    w.pos = skipSpace(b, w.pos);
  }
  if (b.charCodeAt(w.pos) === close) {
    w.pos++;
    return;
  }
  for (;;) {
    if (isObject) {
      string(b);
      if (b.charCodeAt(w.pos) !== COLON) {
        w.loose = true;
        w.pos = skipSpace(b, w.pos);
      }
      w.pos++;
      w.keys++;
    }
    if (isSpace(b.charCodeAt(w.pos))) {
      w.loose = true;
      w.pos = skipSpace(b, w.pos);
    }
    value(b);
    if (isSpace(b.charCodeAt(w.pos))) {
      w.loose = true;
      w.pos = skipSpace(b, w.pos);
    }
    const c = b.charCodeAt(w.pos++);
    if (c === close) return;
    // c is the comma (the body parsed); whitespace may follow it
    if (isSpace(b.charCodeAt(w.pos))) {
      w.loose = true;
      w.pos = skipSpace(b, w.pos);
    }
  }
}

/**
 * Notes the elements of the top-level object's `key` array in `spans` under kind `kind` (the only
 * kind of the body); refuses them all (count -1) when the body is not what it expects: the walk
 * never throws on a body JSON.parse accepted. `key` is ASCII without escapes (the routes' own).
 */
export function noteJsonBody(body: string, bytes: Uint8Array, key: string, kind: number, spans: RecordSpans): void {
  spans.reset();
  spans.bytes = bytes;
  spans.json = true;
  // ASCII only: a body whose UTF-8 was invalid decodes to U+FFFD (three bytes), so it fails this too
  if (body.length !== bytes.length || Buffer.byteLength(body, 'utf8') !== body.length) return;
  nextBackslash = 0;
  const i = skipSpace(body, 0);
  if (body.charCodeAt(i) !== OPEN_OBJ) return;
  w.pos = skipSpace(body, i + 1);
  let found = false;
  while (w.pos < body.length && body.charCodeAt(w.pos) === QUOTE) {
    const keyStart = w.pos + 1;
    w.loose = false;
    string(body);
    const keyEnd = w.pos - 1;
    w.pos = skipSpace(body, w.pos);
    if (body.charCodeAt(w.pos) !== COLON) return;
    w.pos = skipSpace(body, w.pos + 1);
    const named = !w.loose && keyEnd - keyStart === key.length && sameAscii(body, keyStart, key);
    if (named && body.charCodeAt(w.pos) === OPEN_ARR) {
      // the same key twice: JSON.parse kept the last; which array was parsed is not worth proving
      if (found) {
        spans.count[kind] = -1;
        return;
      }
      found = true;
      elements(body, kind, spans);
    } else {
      w.keys = 0;
      value(body);
    }
    w.pos = skipSpace(body, w.pos);
    if (body.charCodeAt(w.pos) !== COMMA) break;
    w.pos = skipSpace(body, w.pos + 1);
  }
  if (!found) spans.count[kind] = -1;
}

function sameAscii(b: string, at: number, s: string): boolean {
  for (let j = 0; j < s.length; j++) if (b.charCodeAt(at + j) !== s.charCodeAt(j)) return false;
  return true;
}

/** the array at w.pos: each element's span, keys and whether its bytes may be stored */
function elements(b: string, kind: number, spans: RecordSpans): void {
  spans.first[kind] = spans.used;
  let n = 0;
  w.pos = skipSpace(b, w.pos + 1);
  if (b.charCodeAt(w.pos) !== CLOSE_ARR) {
    for (;;) {
      const row = spans.next();
      const start = w.pos;
      w.keys = 0;
      w.loose = false;
      const isObject = b.charCodeAt(start) === OPEN_OBJ;
      value(b);
      spans.start[row] = start;
      spans.end[row] = w.pos;
      spans.entries[row] = w.keys;
      spans.plain[row] = isObject && !w.loose ? 1 : 0;
      n++;
      w.pos = skipSpace(b, w.pos);
      if (b.charCodeAt(w.pos) !== COMMA) break;
      w.pos = skipSpace(b, w.pos + 1);
    }
  }
  w.pos++;
  spans.count[kind] = n;
}
