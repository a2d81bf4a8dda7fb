/**
 * The signature of a message as a 32-bit hash, in one pass and without building a string: the
 * same idea as normalizeMessage (numbers, ids, hashes, UUIDs, timestamps and quoted values do not
 * make a message different) at a tenth of its cost, because the workers compute it for every
 * error and every repeated console line they ingest. normalizeMessage stays for text shown to
 * agents; this one only decides "same or not".
 *
 * Rules, per word (maximal run of letters and digits):
 * - a word with a digit in it is a value: made of hex characters only (a number, a hash, a UUID
 *   part) it becomes one mark; otherwise it keeps its letters with each digit run folded to one
 *   mark ("v2" and "v17" are the same, "id42x" and "id7x" too);
 * - a quoted run ("…" or '…', ≤ 200 characters, one line) is one mark;
 * - runs of whitespace are one space; the first 500 characters count.
 */

const MAX = 500;

// character classes, by UTF-16 unit: a table over all of them, so a lookup needs no range test
const ALNUM = 1;
const DIGIT = 2;
const HEX = 4;
const SPACE = 8;
const CLASS = new Uint8Array(65536);
for (let c = 0; c < 128; c++) {
  const digit = c >= 48 && c <= 57;
  const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const hex = digit || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
  CLASS[c] = (digit || alpha ? ALNUM : 0) | (digit ? DIGIT : 0) | (hex ? HEX : 0) | (c === 32 || (c >= 9 && c <= 13) ? SPACE : 0);
}

const mix = (h: number, c: number): number => Math.imul(h ^ c, 0x01000193);

/**
 * `seed` chains a second text onto a first one's hash. The basis is written as the int32 it is
 * (0x811c9dc5 is a double to V8, which kept the hash a double through the loop).
 */
export function signatureHash(msg: string, seed = -2128831035): number {
  let h = seed | 0;
  const n = Math.min(msg.length, MAX);
  let i = 0;
  let lastSpace = true;
  while (i < n) {
    const c = msg.charCodeAt(i);
    const cls = CLASS[c]!;
    if (cls & ALNUM) {
      // a word, mixed as it is while it is read (most words hold no digit, and then that is its
      // hash); its classes or-ed (any digit?) and and-ed (all hex?) on the way
      let word = mix(h, c);
      let any = cls;
      let all = cls;
      let j = i + 1;
      while (j < n) {
        const d = msg.charCodeAt(j);
        const dc = CLASS[d]!;
        if ((dc & ALNUM) === 0) break;
        any |= dc;
        all &= dc;
        word = mix(word, d);
        j++;
      }
      if ((any & DIGIT) === 0) h = word;
      else if (all & HEX) h = mix(h, 0x48);
      else {
        let inRun = false;
        for (let k = i; k < j; k++) {
          const d = msg.charCodeAt(k);
          if (d >= 48 && d <= 57) {
            if (!inRun) h = mix(h, 0x23);
            inRun = true;
          } else {
            h = mix(h, d);
            inRun = false;
          }
        }
      }
      i = j;
      lastSpace = false;
      continue;
    }
    if (cls & SPACE) {
      if (!lastSpace) h = mix(h, 32);
      lastSpace = true;
      i++;
      continue;
    }
    if (c === 34 || c === 39) {
      // a quoted value: the same quote within 200 characters (also past MAX), no line break before it
      const end = closingQuote(msg, i, c);
      if (end > 0) {
        h = mix(mix(h, c), 0x51);
        i = end + 1;
        lastSpace = false;
        continue;
      }
    }
    h = mix(h, c);
    lastSpace = false;
    i++;
  }
  return h === 0 ? 1 : h;
}

/**
 * Where the quote opened at `at` closes: the next same quote, at most 200 characters after it
 * and with no line break between; -1 when there is none. Reads at most those 201 characters (an
 * unclosed quote in a long message was a search to its end, and a search back for the line break).
 */
function closingQuote(msg: string, at: number, quote: number): number {
  const last = Math.min(msg.length - 1, at + 201);
  for (let k = at + 1; k <= last; k++) {
    const d = msg.charCodeAt(k);
    if (d === quote) return k;
    if (d === 10) return -1;
  }
  return -1;
}
