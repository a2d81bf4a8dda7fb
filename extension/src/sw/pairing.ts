/**
 * The extension's side of pairing (docs/SECURITY.md), in WebCrypto over the layouts the server
 * shares with us (src/pairing/spec.ts): the per-connection proofs the transport exchanges in
 * hello/welcome/auth, and the one-time exchange that turns a `gasoline pair` code (or an accepted
 * trust-on-first-use offer) into the server's secret. Platform-free: Node tests run it against the
 * real server.
 */
import {
  CODE_KDF_ITERATIONS,
  hex,
  HEX64,
  isCodeShaped,
  LABEL_CONFIRM_PRODUCER,
  LABEL_CONFIRM_SERVER,
  LABEL_PRODUCER,
  LABEL_SERVER,
  LABEL_WRAP,
  masterMessage,
  NONCE_BYTES,
  normalizeCode,
  P256_PUB,
  type PairMode,
  proofMessage,
  transcript,
  unhex,
} from '../../../src/pairing/spec.js';
import { pack, unpack } from 'msgpackr';
import type { SocketLike } from './transport.js';

const enc = new TextEncoder();
const subtle = () => globalThis.crypto.subtle;
/** a WebCrypto key, named without the DOM lib (the server's tests type-check this file too) */
type Key = Parameters<ReturnType<typeof subtle>['exportKey']>[1];

export function newNonce(): string {
  return hex(globalThis.crypto.getRandomValues(new Uint8Array(NONCE_BYTES)));
}

async function hmac(key: Uint8Array<ArrayBuffer>, message: string): Promise<Uint8Array<ArrayBuffer>> {
  const k = await subtle().importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle().sign('HMAC', k, enc.encode(message)));
}

/** Hex strings compared without stopping at the first difference. */
export function sameHex(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Both proofs of one connection: the one the server must show, the one we answer with. */
export async function handshakeProofs(keyHex: string, producerNonce: string, serverNonce: string): Promise<{ server: string; producer: string }> {
  const key = unhex(keyHex);
  const [server, producer] = await Promise.all([hmac(key, proofMessage(LABEL_SERVER, producerNonce, serverNonce)), hmac(key, proofMessage(LABEL_PRODUCER, producerNonce, serverNonce))]);
  return { server: hex(server), producer: hex(producer) };
}

export type PairResult = { ok: true; key: string } | { ok: false; code: string; message: string };

export interface PairOptions {
  url: string;
  version: string;
  createSocket: (url: string) => SocketLike;
  /** the code `gasoline pair` printed; null: accept the server's trust-on-first-use offer */
  code: string | null;
  timeoutMs?: number;
  iterations?: number;
}

/**
 * One pairing exchange on its own socket: our ephemeral P-256 key and nonce in hello, the
 * server's in its `pair` challenge, our confirmation tag (the code stretched over the transcript),
 * then the server's tag and the secret sealed under the exchange. We check the server's tag before
 * taking the secret: a server that does not know the code gets nothing it can use.
 */
export async function pair(o: PairOptions): Promise<PairResult> {
  const mode: PairMode = o.code === null ? 'tofu' : 'code';
  const code = o.code === null ? '' : normalizeCode(o.code);
  if (mode === 'code' && !isCodeShaped(code)) return { ok: false, code: 'pairing_invalid', message: 'a code is 8 letters and digits, as `gasoline pair` prints it (e.g. 7KQ2-M9XD)' };
  const ecdh = (await subtle().generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits'])) as { publicKey: Key; privateKey: Key };
  const pub = hex(new Uint8Array(await subtle().exportKey('raw', ecdh.publicKey)));
  const nonce = newNonce();
  return new Promise<PairResult>((resolve) => {
    let done = false;
    const s = o.createSocket(o.url);
    const finish = (r: PairResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.onmessage = s.onclose = null;
      s.onerror = () => undefined;
      try {
        s.close(1000, 'pairing done');
      } catch {
        // already closed
      }
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, code: 'pairing_timeout', message: 'the server did not finish pairing in time' }), o.timeoutMs ?? 20_000);
    s.binaryType = 'arraybuffer';
    s.onerror = () => undefined;
    s.onopen = () => s.send(pack({ t: 'hello', v: 1, client: 'extension', version: o.version, session: `pairing-${nonce.slice(0, 16)}`, auth: { v: 1, nonce, pair: { mode, pub } } }));
    let step: 'challenge' | 'paired' = 'challenge';
    // the server closes right after `paired`; our check of it may still be running then
    let unsealing = false;
    s.onclose = (ev) => {
      if (!unsealing) finish({ ok: false, code: 'pairing_failed', message: ev.reason || `the server closed the connection (${ev.code})` });
    };
    let keys: { master: Uint8Array<ArrayBuffer>; th: string } | null = null;
    s.onmessage = (ev) => {
      let f: Record<string, unknown>;
      try {
        f = unpack(new Uint8Array(ev.data as ArrayBuffer)) as Record<string, unknown>;
      } catch {
        return finish({ ok: false, code: 'pairing_invalid', message: 'the server sent an undecodable frame' });
      }
      if (f.t === 'error') return finish({ ok: false, code: String(f.code), message: String(f.message ?? '') });
      if (f.t === 'welcome') return finish({ ok: false, code: 'pairing_unsupported', message: 'the server on this port does not know pairing: an older gasoline (update it) or not gasoline at all' });
      if (step === 'challenge' && f.t === 'pair' && f.step === 'challenge') {
        step = 'paired';
        void confirm(f).then(
          (tag) => s.send(pack({ t: 'pair', step: 'confirm', proof: tag })),
          (e: unknown) => finish({ ok: false, code: 'pairing_invalid', message: String(e) }),
        );
        return;
      }
      if (step === 'paired' && f.t === 'paired' && keys) {
        unsealing = true;
        void unseal(keys.master, f).then(finish, (e: unknown) => finish({ ok: false, code: 'pairing_failed', message: String(e) }));
        return;
      }
      finish({ ok: false, code: 'pairing_invalid', message: `unexpected frame ${String(f.t)}` });
    };
    const confirm = async (f: Record<string, unknown>): Promise<string> => {
      const serverPub = String(f.pub);
      const serverNonce = String(f.nonce);
      if (!P256_PUB.test(serverPub) || !HEX64.test(serverNonce)) throw new Error('malformed pair challenge');
      const peer = await subtle().importKey('raw', unhex(serverPub), { name: 'ECDH', namedCurve: 'P-256' }, false, []);
      const shared = hex(new Uint8Array(await subtle().deriveBits({ name: 'ECDH', public: peer }, ecdh.privateKey, 256)));
      const th = hex(new Uint8Array(await subtle().digest('SHA-256', enc.encode(transcript(mode, pub, serverPub, nonce, serverNonce)))));
      const base = await subtle().importKey('raw', enc.encode(code), 'PBKDF2', false, ['deriveBits']);
      const stretched = new Uint8Array(await subtle().deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: unhex(th), iterations: o.iterations ?? CODE_KDF_ITERATIONS }, base, 256));
      const master = await hmac(stretched, masterMessage(shared, th));
      keys = { master, th };
      return hex(await hmac(master, LABEL_CONFIRM_PRODUCER));
    };
  });
}

async function unseal(master: Uint8Array<ArrayBuffer>, f: Record<string, unknown>): Promise<PairResult> {
  const expected = hex(await hmac(master, LABEL_CONFIRM_SERVER));
  if (!sameHex(f.proof, expected)) return { ok: false, code: 'pairing_impostor', message: 'the server could not prove it knows the code: not the gasoline that printed it' };
  const wrapKey = await subtle().importKey('raw', await hmac(master, LABEL_WRAP), 'AES-GCM', false, ['decrypt']);
  const plain = new Uint8Array(await subtle().decrypt({ name: 'AES-GCM', iv: unhex(String(f.iv)) }, wrapKey, unhex(String(f.sealed))));
  const key = hex(plain);
  if (!HEX64.test(key)) return { ok: false, code: 'pairing_failed', message: 'the sealed secret has the wrong size' };
  return { ok: true, key };
}
