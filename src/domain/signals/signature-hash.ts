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

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

const mix = (h: number, c: number): number => Math.imul(h ^ c, 0x01000193);

export function signatureHash(msg: string, seed = 0x811c9dc5): number {
  let h = seed;
  const n = Math.min(msg.length, MAX);
  let i = 0;
  let lastSpace = true;
  while (i < n) {
    const c = msg.charCodeAt(i);
    if (c === 34 || c === 39) {
      // a quoted value: up to the same quote on this line, within 200 characters
      const end = msg.indexOf(c === 34 ? '"' : "'", i + 1);
      if (end > i && end - i <= 201 && msg.lastIndexOf('\n', end) < i) {
        h = mix(mix(h, c), 0x51);
        i = end + 1;
        lastSpace = false;
        continue;
      }
    }
    if (isAlnum(c)) {
      let j = i;
      let digits = false;
      let hex = true;
      while (j < n && isAlnum(msg.charCodeAt(j))) {
        const d = msg.charCodeAt(j);
        if (isDigit(d)) digits = true;
        if (!isHex(d)) hex = false;
        j++;
      }
      if (!digits) for (let k = i; k < j; k++) h = mix(h, msg.charCodeAt(k));
      else if (hex) h = mix(h, 0x48);
      else {
        let inRun = false;
        for (let k = i; k < j; k++) {
          const d = msg.charCodeAt(k);
          if (isDigit(d)) {
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
    if (isSpace(c)) {
      if (!lastSpace) h = mix(h, 32);
      lastSpace = true;
      i++;
      continue;
    }
    h = mix(h, c);
    lastSpace = false;
    i++;
  }
  return h === 0 ? 1 : h | 0;
}
