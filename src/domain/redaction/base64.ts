/**
 * Secrets hidden in base64 or base64url: `btoa("password=…")`, an encoded `ghp_` token, the
 * `user:pw` of Basic auth without its scheme (#18 item 3). A run of base64 characters is decoded
 * and the decoding is looked at by the same rules; a run whose decoding holds a secret goes whole.
 *
 * The hot path pays one table lookup per character to find runs of at least MIN_RUN characters;
 * only those are decoded, and a decoding that is not printable ASCII (what random bytes, hashes,
 * ids and long words decode to) is dropped at its first unprintable byte.
 */

import { B64, TEXT_LEAD } from './base64-chars.js';
import { KIND_BASE64_RUN, type Candidates } from './prefilter-scan.js';

/** 16 characters decode to 12 bytes: `a:hunter2pass`, `pwd=12345678`. Shorter runs are everywhere. */
export const MIN_RUN = 16;
/** longer runs are images, fonts, wasm: not decoded (a bound on the work per string) */
export const MAX_RUN = 8192;
/**
 * runs decoded per string at most; past it, a run that could be base64 of text counts as a
 * secret without being decoded (fail closed: a secret must not hide behind 64 decoys)
 */
export const MAX_RUNS = 64;

/** a character beyond Latin-1: a text without one is one byte per character (and V8 answers this at once for it) */
export const BEYOND_LATIN1 = /[\u0100-\uffff]/;
/** the codes buffer a thread keeps (≤ SCRATCH_KEPT bytes); a longer text, or a scan inside a scan, gets its own */
const SCRATCH_KEPT = 1 << 20;
let scratch = Buffer.allocUnsafe(16 * 1024);
let scratchBusy = false;

/**
 * One byte per UTF-16 code unit of s: the character itself up to 255, 0x80 above (none of them is
 * base64, so runs and leads read the same). A byte read from a Uint8Array is ~15 % cheaper than a
 * charCodeAt (no string representation to dispatch on), and a one-byte string (V8 answers the
 * regex at once for those) is copied in one call; issue 17.
 */
function codesOf(s: string, buf: Buffer): void {
  if (!BEYOND_LATIN1.test(s)) {
    buf.write(s, 0, 'latin1');
    return;
  }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    buf[i] = c < 256 ? c : 0x80;
  }
}

function leadsLikeText(b: Uint8Array, start: number, end: number): boolean {
  for (let j = start; j < end - 1; j += 4) if (TEXT_LEAD[b[j]!] !== 1) return false;
  return true;
}

/**
 * Calls `fn(start, end, capped)` for each run (padding included) of MIN_RUN..MAX_RUN characters
 * in s that could be text; `capped` once MAX_RUNS were seen. Stops when `fn` returns true.
 *
 * Probes every MIN_RUN-th character instead of reading each one: any run of MIN_RUN or more
 * holds a probe, and a probe on a space or punctuation skips MIN_RUN characters at once. A probe
 * inside a word reads just that word. On ordinary telemetry this reads about a third of the text
 * (the load generator's batches: 1.4 ms → 0.5 ms for 480 KB).
 */
export function eachRun(s: string, fn: (start: number, end: number, capped: boolean) => boolean): void {
  const to = s.length;
  if (to < MIN_RUN) return;
  const own = scratchBusy || to > scratch.length;
  let b: Buffer;
  if (!own) b = scratch;
  else if (!scratchBusy && to <= SCRATCH_KEPT) b = scratch = Buffer.allocUnsafe(Math.min(SCRATCH_KEPT, Math.max(to, scratch.length * 2)));
  else b = Buffer.allocUnsafe(to);
  const kept = b === scratch;
  if (kept) scratchBusy = true;
  try {
    codesOf(s, b);
    runsIn(b, to, fn);
  } finally {
    if (kept) scratchBusy = false;
  }
}

function runsIn(b: Uint8Array, to: number, fn: (start: number, end: number, capped: boolean) => boolean): void {
  let runs = 0;
  let floor = 0;
  let p = MIN_RUN - 1;
  while (p < to) {
    if (B64[b[p]!] !== 1) {
      p += MIN_RUN;
      continue;
    }
    let start = p;
    while (start > floor && B64[b[start - 1]!] === 1) start--;
    // A run from `start` must reach start + MIN_RUN - 1: read back from there towards p. A gap
    // means no run holds p, and none can start before the gap, so the next probe goes MIN_RUN past
    // it: in prose this skips a word further than reading on to the end of p's word did.
    const reach = start + MIN_RUN - 1;
    if (reach > p) {
      if (reach >= to) return;
      let q = reach;
      while (q > p && B64[b[q]!] === 1) q--;
      if (q > p) {
        p = q + MIN_RUN;
        continue;
      }
    }
    let i = p + 1;
    while (i < to && B64[b[i]!] === 1) i++;
    floor = i;
    p = i + MIN_RUN;
    if (i - start < MIN_RUN || i - start > MAX_RUN || !leadsLikeText(b, start, i)) continue;
    let end = i;
    while (end < to && end - i < 2 && b[end] === 61) end++;
    if (fn(start, end, ++runs > MAX_RUNS)) return;
  }
}

/**
 * The runs eachRun would report for a Latin-1 `text` (same starts, same ends with their padding,
 * same order), from the candidate finder's list (prefilter-scan.ts), which holds each run of
 * MIN_RUN..MAX_RUN characters that leads like text, with its length. Pairs (start, end) in one
 * array; no MAX_RUNS cap here (the caller counts per record).
 */
export function candidateRuns(text: string, found: Candidates): number[] {
  const out: number[] = [];
  const to = text.length;
  for (let i = 0, o = found.at; i < found.count; i++, o += 2) {
    const w = found.words[o]!;
    if ((w & 15) !== KIND_BASE64_RUN) continue;
    const start = found.words[o + 1]!;
    const end = start + (w >>> 4);
    let padded = end;
    while (padded < to && padded - end < 2 && text.charCodeAt(padded) === 61) padded++;
    out.push(start, padded);
  }
  return out;
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
