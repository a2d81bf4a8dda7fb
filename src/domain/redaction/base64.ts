/**
 * Secrets hidden in base64 or base64url: `btoa("password=…")`, an encoded `ghp_` token, the
 * `user:pw` of Basic auth without its scheme (#18 item 3). A run of base64 characters is decoded
 * and the decoding is looked at by the same rules; a run whose decoding holds a secret goes whole.
 *
 * The hot path pays one table lookup per character to find runs of at least MIN_RUN characters;
 * only those are decoded, and a decoding that is not printable ASCII (what random bytes, hashes,
 * ids and long words decode to) is dropped at its first unprintable byte.
 */

/** 16 characters decode to 12 bytes: `a:hunter2pass`, `pwd=12345678`. Shorter runs are everywhere. */
export const MIN_RUN = 16;
/** longer runs are images, fonts, wasm: not decoded (a bound on the work per string) */
export const MAX_RUN = 8192;
/** runs decoded per string at most: text made of nothing but runs stays linear */
export const MAX_RUNS = 64;

/** [A-Za-z0-9+/_-]: both alphabets (base64url swaps +/ for -_) */
const B64 = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_') B64[c.charCodeAt(0)] = 1;

/**
 * Calls `fn(start, end)` for each run (padding included) of MIN_RUN..MAX_RUN characters in
 * s[from, to), up to MAX_RUNS of them; stops early when `fn` returns true.
 */
export function eachRun(s: string, fn: (start: number, end: number) => boolean, from = 0, to = s.length): void {
  let runs = 0;
  let i = from;
  while (i < to) {
    // skip to the next run character, then to its end: each character is read once
    let c = s.charCodeAt(i);
    while (i < to && !(c < 128 && B64[c] === 1)) c = s.charCodeAt(++i);
    const start = i;
    while (i < to && c < 128 && B64[c] === 1) c = s.charCodeAt(++i);
    let end = i;
    if (end - start < MIN_RUN) continue;
    while (end < to && end - i < 2 && s.charCodeAt(end) === 61) end++;
    if (end - start > MAX_RUN) continue;
    if (fn(start, end)) return;
    if (++runs >= MAX_RUNS) return;
  }
}

/** Is there any run worth decoding at all? (the pre-check in front of decoding) */
export function hasRun(s: string): boolean {
  let found = false;
  eachRun(s, () => (found = true));
  return found;
}

/** The run decoded, or null when it is not printable ASCII text. */
export function decodeRun(run: string): string | null {
  const bytes = Buffer.from(run, 'base64');
  if (bytes.length < 6) return null;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 32 ? b !== 9 && b !== 10 && b !== 13 : b > 126) return null;
  }
  return bytes.toString('latin1');
}

/**
 * `user:password` as Basic auth encodes it: one colon, printable on both sides, no spaces, and
 * not a URL (`https://…` has a colon too).
 */
export function isUserPassword(d: string): boolean {
  const at = d.indexOf(':');
  if (at < 1 || at > 128 || d.length - at - 1 < 4 || d.length > 300) return false;
  if (d.indexOf(':', at + 1) >= 0 || d.charCodeAt(at + 1) === 47) return false;
  return /^[\x21-\x7e]+$/.test(d);
}
