/**
 * The server's side of the pairing crypto (node:crypto), over the layouts in spec.ts: handshake
 * proofs, the one-time exchange's keys and tags, and the wrapping of the secret. Comparisons are
 * constant time: a wrong proof tells nothing about where it went wrong.
 */
import { createCipheriv, createECDH, createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { CODE_KDF_ITERATIONS, HEX64, LABEL_CONFIRM_PRODUCER, LABEL_CONFIRM_SERVER, LABEL_PRODUCER, LABEL_SERVER, LABEL_WRAP, masterMessage, NONCE_BYTES, proofMessage, transcript, type PairMode } from './spec.js';

export function nonce(): string {
  return randomBytes(NONCE_BYTES).toString('hex');
}

function hmac(key: Buffer, message: string): Buffer {
  return createHmac('sha256', key).update(message, 'utf8').digest();
}

/** The hex proofs compared in constant time; anything not 64 hex digits is simply wrong. */
export function sameProof(given: unknown, expected: string): boolean {
  if (typeof given !== 'string' || !HEX64.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(expected, 'hex'));
}

export function serverProof(secret: Buffer, producerNonce: string, serverNonce: string): string {
  return hmac(secret, proofMessage(LABEL_SERVER, producerNonce, serverNonce)).toString('hex');
}

export function producerProof(secret: Buffer, producerNonce: string, serverNonce: string): string {
  return hmac(secret, proofMessage(LABEL_PRODUCER, producerNonce, serverNonce)).toString('hex');
}

/** The server's half of one exchange: its ephemeral P-256 key, its nonce, and what follows from the producer's. */
export interface ExchangeKeys {
  mode: PairMode;
  serverPub: string;
  serverNonce: string;
  transcriptHash: string;
  shared: string;
}

/** Throws when `producerPub` is not a point on the curve (computeSecret refuses it). */
export function serverExchange(mode: PairMode, producerPub: string, producerNonce: string): ExchangeKeys {
  const ecdh = createECDH('prime256v1');
  const serverPub = ecdh.generateKeys('hex', 'uncompressed');
  const shared = ecdh.computeSecret(Buffer.from(producerPub, 'hex')).toString('hex');
  const serverNonce = nonce();
  const transcriptHash = createHash('sha256').update(transcript(mode, producerPub, serverPub, producerNonce, serverNonce), 'utf8').digest('hex');
  return { mode, serverPub, serverNonce, transcriptHash, shared };
}

/** The master key of an exchange: the shared secret under the stretched code (off the main thread). */
export function masterKey(code: string, x: Pick<ExchangeKeys, 'shared' | 'transcriptHash'>, iterations = CODE_KDF_ITERATIONS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    pbkdf2(code, Buffer.from(x.transcriptHash, 'hex'), iterations, 32, 'sha256', (err, stretched) => {
      if (err) reject(err);
      else resolve(hmac(stretched, masterMessage(x.shared, x.transcriptHash)));
    });
  });
}

export function confirmTags(master: Buffer): { producer: string; server: string } {
  return { producer: hmac(master, LABEL_CONFIRM_PRODUCER).toString('hex'), server: hmac(master, LABEL_CONFIRM_SERVER).toString('hex') };
}

/** The secret sealed for the producer (AES-256-GCM; WebCrypto expects the tag after the ciphertext). */
export function wrapSecret(master: Buffer, secret: Buffer): { iv: string; sealed: string } {
  const key = hmac(master, LABEL_WRAP);
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([c.update(secret), c.final(), c.getAuthTag()]);
  return { iv: iv.toString('hex'), sealed: sealed.toString('hex') };
}
