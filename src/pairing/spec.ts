/**
 * The pairing protocol's constants and message layouts, shared by the server (node:crypto) and the
 * extension (WebCrypto): both build the same bytes from here, and a unit test runs the extension's
 * side against the server's. No imports, no platform: the extension bundles this file.
 *
 * Per connection (docs/PROTOCOL.md "Pairing"): hello carries the producer's nonce, welcome the
 * server's nonce and its proof, then the producer sends its own proof in an `auth` frame. A proof
 * is HMAC-SHA256(secret, label ‖ producer nonce ‖ server nonce): the label says which side made it,
 * so a proof cannot be reflected to its maker, and both fresh nonces are in it, so it cannot be
 * replayed on another connection.
 */

export const PAIRING_VERSION = 1;
/** the secret both sides keep: 256 bits */
export const SECRET_BYTES = 32;
export const NONCE_BYTES = 32;

export const LABEL_SERVER = 'gasoline-pair-v1 server proof';
export const LABEL_PRODUCER = 'gasoline-pair-v1 producer proof';

/** What a handshake proof is computed over (UTF-8 bytes of this string). */
export function proofMessage(label: string, producerNonce: string, serverNonce: string): string {
  return `${label}\n${producerNonce}\n${serverNonce}`;
}

// ---- the pairing exchange (one-time, with the short code or on first use) ----

/**
 * The short code `gasoline pair` prints: 8 characters of Crockford's base32 (no I, L, O, U: nothing
 * to misread), 40 bits. Guessing is online only (the server never shows anything derived from the
 * code before the producer proved it), limited to a few attempts per window.
 */
export const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const CODE_LENGTH = 8;

/** What the user typed, as the code is compared: case, dashes and spaces ignored, O→0, I/L→1. */
export function normalizeCode(typed: string): string {
  return typed
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
}

export function isCodeShaped(code: string): boolean {
  if (code.length !== CODE_LENGTH) return false;
  for (const ch of code) if (!CODE_ALPHABET.includes(ch)) return false;
  return true;
}

/** "ABCD-EFGH": how the code is shown */
export function formatCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * The code is stretched (PBKDF2-SHA256) with the exchange's transcript as salt: whoever receives a
 * producer's confirmation tag (an impostor on the port) pays this per guess, offline, for a code
 * that is single-use and expires in minutes anyway.
 */
export const CODE_KDF_ITERATIONS = 100_000;

export type PairMode = 'code' | 'tofu';

/** The transcript both sides hash: mode, both public keys (P-256 raw, hex) and both nonces. */
export function transcript(mode: PairMode, producerPub: string, serverPub: string, producerNonce: string, serverNonce: string): string {
  return `gasoline-pair-v1 exchange\n${mode}\n${producerPub}\n${serverPub}\n${producerNonce}\n${serverNonce}`;
}

/** The master key's HMAC message: the ECDH shared secret (hex) under the stretched code. */
export function masterMessage(sharedHex: string, transcriptHashHex: string): string {
  return `gasoline-pair-v1 master\n${sharedHex}\n${transcriptHashHex}`;
}

export const LABEL_CONFIRM_PRODUCER = 'gasoline-pair-v1 confirm producer';
export const LABEL_CONFIRM_SERVER = 'gasoline-pair-v1 confirm server';
export const LABEL_WRAP = 'gasoline-pair-v1 wrap';

export const HEX64 = /^[0-9a-f]{64}$/;
/** an uncompressed P-256 point: 04 ‖ x ‖ y */
export const P256_PUB = /^04[0-9a-f]{128}$/;

export function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

export function unhex(s: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(s.length >> 1));
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(i * 2, i * 2 + 2), 16);
  return out;
}
