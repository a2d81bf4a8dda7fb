/**
 * The character classes of base64's runs, by code byte (base64.ts's codes: 128..255 stand for
 * characters that are not base64): read by the run probe and written into the candidate
 * finder's memory (prefilter-scan.ts), so that both find the same runs.
 */

/** [A-Za-z0-9+/_-]: both alphabets (base64url swaps +/ for -_) */
export const B64 = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_') B64[c.charCodeAt(0)] = 1;

/**
 * Base64 of ASCII text: each 3-byte group starts with a byte in 0x09..0x7e, whose top six bits
 * (its group's first character) are 2..31: C, D or I..Z, a..f. Checking that every 4th character
 * is one of these rejects hex, words, paths and random ids after a character or two, before any
 * decoding.
 */
export const TEXT_LEAD = new Uint8Array(256);
for (const c of 'CDIJKLMNOPQRSTUVWXYZabcdef') TEXT_LEAD[c.charCodeAt(0)] = 1;
