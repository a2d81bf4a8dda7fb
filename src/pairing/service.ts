/**
 * The daemon's pairing state: the secret (secret.ts), the short-code window `gasoline pair` opens,
 * trust on first use, and the counters /health shows. The WebSocket edge asks it for the welcome's
 * proof and to check the producer's; the one-time exchange runs through begin/finish.
 */
import type { ErrorCode } from '../errors.js';
import { confirmTags, type ExchangeKeys, masterKey, nonce, producerProof, sameProof, serverExchange, serverProof, wrapSecret } from './proof.js';
import { randomBytes, randomInt } from 'node:crypto';
import { log } from '../log.js';
import { loadOrCreateSecret, newSecret, type SecretFile, writeSecret } from './secret.js';
import { CODE_ALPHABET, CODE_KDF_ITERATIONS, CODE_LENGTH, formatCode, HEX64, isCodeShaped, normalizeCode, P256_PUB, type PairMode } from './spec.js';

export type UnpairedPolicy = 'mark' | 'refuse';

export interface PairingOptions {
  stateDir: string;
  /** what happens to records of a producer that did not prove pairing */
  unpaired: UnpairedPolicy;
  /** pair the first extension that asks, once it confirms in its popup */
  tofu: boolean;
  windowMs: number;
  maxAttempts: number;
  clock?: () => number;
  /** tests only: fewer PBKDF2 rounds */
  kdfIterations?: number;
}

export interface WindowInfo {
  code: string;
  expires_at: string;
  attempts: number;
}

/** What the welcome carries and what the producer's proof must equal. */
export interface Challenge {
  welcome: { v: 1; nonce: string; proof: string; tofu?: true };
  expected: string;
}

export type Refusal = { ok: false; code: ErrorCode; message: string };

export class Pairing {
  private file: SecretFile;
  private secret: Buffer;
  private window: { code: string; expiresAt: number; attemptsLeft: number } | null = null;
  private readonly clock: () => number;
  readonly stats = { proofs_ok: 0, proofs_failed: 0, paired: 0, wrong_codes: 0, windows_opened: 0, locked: 0 };

  constructor(private readonly o: PairingOptions) {
    this.clock = o.clock ?? Date.now;
    this.file = loadOrCreate(o.stateDir);
    this.secret = Buffer.from(this.file.key, 'hex');
  }

  get policy(): UnpairedPolicy {
    return this.o.unpaired;
  }

  /** Trust on first use is on offer while nothing ever paired with this secret. */
  get tofuOffered(): boolean {
    return this.o.tofu && !this.file.paired_at;
  }

  /** The welcome's auth block for a producer that sent `nonce`, and the proof to expect back. */
  challenge(producerNonce: string): Challenge {
    const n = nonce();
    const welcome: Challenge['welcome'] = { v: 1, nonce: n, proof: serverProof(this.secret, producerNonce, n) };
    if (this.tofuOffered) welcome.tofu = true;
    return { welcome, expected: producerProof(this.secret, producerNonce, n) };
  }

  check(given: unknown, c: Challenge): boolean {
    const ok = sameProof(given, c.expected);
    if (ok) this.stats.proofs_ok++;
    else this.stats.proofs_failed++;
    return ok;
  }

  /** `gasoline pair`: a new code, valid for windowMs and maxAttempts tries; any earlier code dies. */
  open(): WindowInfo {
    let code = '';
    for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
    const expiresAt = this.clock() + this.o.windowMs;
    this.window = { code, expiresAt, attemptsLeft: this.o.maxAttempts };
    this.stats.windows_opened++;
    return { code: formatCode(code), expires_at: new Date(expiresAt).toISOString(), attempts: this.o.maxAttempts };
  }

  /** `gasoline pair --reset`: a new secret; every producer has to pair again. */
  rotate(): void {
    // written first: a secret that did not reach the file must not replace the one that did
    this.file = newSecret(this.o.stateDir);
    this.secret = Buffer.from(this.file.key, 'hex');
    this.window = null;
  }

  windowState(): { open: boolean; expires_at?: string; attempts_left?: number } {
    const w = this.liveWindow();
    return w ? { open: true, expires_at: new Date(w.expiresAt).toISOString(), attempts_left: w.attemptsLeft } : { open: false };
  }

  private liveWindow(): { code: string; expiresAt: number; attemptsLeft: number } | null {
    if (this.window && this.clock() >= this.window.expiresAt) this.window = null;
    return this.window;
  }

  /**
   * The first half of a pairing exchange: refused unless a window is open (code) or trust on first
   * use is on offer (tofu). Nothing derived from the code leaves here: a peer without it learns
   * nothing it could test guesses against offline.
   */
  begin(mode: PairMode, producerPub: unknown, producerNonce: unknown): { ok: true; x: ExchangeKeys } | Refusal {
    if (typeof producerPub !== 'string' || !P256_PUB.test(producerPub) || typeof producerNonce !== 'string' || !HEX64.test(producerNonce)) return { ok: false, code: 'pairing_invalid', message: 'pair needs pub (an uncompressed P-256 point, hex) and nonce (64 hex digits)' };
    if (mode === 'tofu' && !this.tofuOffered) return { ok: false, code: 'pairing_closed', message: this.o.tofu ? 'trust on first use is over: a producer already paired with this server; run `gasoline pair` for a code' : 'trust on first use is off (pairing.tofu); run `gasoline pair` for a code' };
    if (mode === 'code' && !this.liveWindow()) return { ok: false, code: 'pairing_closed', message: 'no pairing window is open (or it expired): run `gasoline pair` and type its code' };
    try {
      return { ok: true, x: serverExchange(mode, producerPub, producerNonce) };
    } catch {
      return { ok: false, code: 'pairing_invalid', message: 'pub is not a point on P-256' };
    }
  }

  /**
   * The second half: the producer's confirmation tag. An attempt is counted before anything is
   * computed; the last wrong one closes the window. Right: the secret, sealed under the exchange.
   */
  async finish(x: ExchangeKeys, producerTag: unknown): Promise<{ ok: true; proof: string; iv: string; sealed: string } | Refusal> {
    let code = '';
    if (x.mode === 'code') {
      const w = this.liveWindow();
      if (!w) return { ok: false, code: 'pairing_closed', message: 'the pairing window expired or was closed; run `gasoline pair` again' };
      w.attemptsLeft--;
      code = w.code;
    } else if (!this.tofuOffered) return { ok: false, code: 'pairing_closed', message: 'another producer paired on first use meanwhile' };
    const master = await masterKey(code, x, this.o.kdfIterations ?? CODE_KDF_ITERATIONS);
    const tags = confirmTags(master);
    if (!sameProof(producerTag, tags.producer)) {
      this.stats.wrong_codes++;
      const w = this.window;
      if (x.mode === 'code' && w && w.attemptsLeft <= 0) {
        this.window = null;
        this.stats.locked++;
        return { ok: false, code: 'pairing_locked', message: `wrong code, and that was the last of ${this.o.maxAttempts} attempts: the window is closed; run \`gasoline pair\` again` };
      }
      return { ok: false, code: 'pairing_code_wrong', message: `wrong code${w ? `; ${w.attemptsLeft} attempt${w.attemptsLeft === 1 ? '' : 's'} left` : ''}` };
    }
    if (x.mode === 'code') this.window = null;
    this.file = { ...this.file, paired_at: new Date(this.clock()).toISOString() };
    try {
      writeSecret(this.o.stateDir, this.file);
    } catch (e) {
      log.warn('pairing: could not record the pairing in the state dir', { error: String(e) });
    }
    this.stats.paired++;
    return { ok: true, proof: tags.server, ...wrapSecret(master, this.secret) };
  }
}

export { normalizeCode, isCodeShaped };

/**
 * A state dir we cannot write (read-only, full) must not keep the server from starting: the secret
 * then lives in memory until the next start, and every extension pairs again after it.
 */
function loadOrCreate(stateDir: string): SecretFile {
  try {
    return loadOrCreateSecret(stateDir);
  } catch (e) {
    log.warn('pairing: the secret could not be written to the state dir; it lasts until this process ends', { error: String(e) });
    return { v: 1, key: randomBytes(32).toString('hex'), created_at: new Date().toISOString() };
  }
}
