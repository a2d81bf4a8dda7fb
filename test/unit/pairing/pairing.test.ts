/**
 * The pairing crypto and its window, in process: the extension's WebCrypto side and the server's
 * node:crypto side build the same proofs; a proof fits only its own nonces, direction and key; a
 * code's window expires, counts wrong codes and closes at its limit; the secret file is 0600.
 */
import { rmSync, statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { handshakeProofs, sameHex } from '../../../extension/src/sw/pairing.js';
import { Pairing, normalizeCode, isCodeShaped, nonce, producerProof, serverProof, readSecret, secretPath } from '../../../src/pairing/index.js';
import { confirmTags, masterKey } from '../../../src/pairing/proof.js';
import { tempStateDir } from '../../helpers/state-dir.js';

const KEY = '11'.repeat(32);
const dirs: string[] = [];
const dir = (): string => {
  const d = tempStateDir('gasoline-pairing-');
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('handshake proofs', () => {
  it('the extension (WebCrypto) and the server (node:crypto) compute the same two proofs', async () => {
    const nc = nonce();
    const ns = nonce();
    const ext = await handshakeProofs(KEY, nc, ns);
    const secret = Buffer.from(KEY, 'hex');
    expect(ext.server).toBe(serverProof(secret, nc, ns));
    expect(ext.producer).toBe(producerProof(secret, nc, ns));
  });

  it('a proof is bound to its direction (no reflection), its nonces (no replay) and its key', () => {
    const secret = Buffer.from(KEY, 'hex');
    const nc = nonce();
    const ns = nonce();
    const p = producerProof(secret, nc, ns);
    expect(serverProof(secret, nc, ns)).not.toBe(p);
    expect(producerProof(secret, nc, nonce())).not.toBe(p);
    expect(producerProof(secret, nonce(), ns)).not.toBe(p);
    expect(producerProof(Buffer.from('22'.repeat(32), 'hex'), nc, ns)).not.toBe(p);
  });

  it('the service checks a proof against its own challenge only, and counts', () => {
    const d = dir();
    const pairing = new Pairing({ stateDir: d, unpaired: 'mark', tofu: false, windowMs: 120_000, maxAttempts: 5 });
    const secret = Buffer.from(readSecret(d)!.key, 'hex');
    const nc = nonce();
    const c = pairing.challenge(nc);
    expect(c.welcome.proof).toBe(serverProof(secret, nc, c.welcome.nonce));
    expect(pairing.check(c.welcome.proof, c)).toBe(false); // reflected
    expect(pairing.check('not hex', c)).toBe(false);
    expect(pairing.check(undefined, c)).toBe(false);
    const other = pairing.challenge(nc);
    expect(pairing.check(producerProof(secret, nc, other.welcome.nonce), c)).toBe(false); // another connection's
    expect(pairing.check(producerProof(secret, nc, c.welcome.nonce), c)).toBe(true);
    expect(pairing.stats).toMatchObject({ proofs_ok: 1, proofs_failed: 4 });
  });

  it('sameHex: equal only for equal strings of equal length', () => {
    expect(sameHex('ab', 'ab')).toBe(true);
    expect(sameHex('ab', 'ac')).toBe(false);
    expect(sameHex('abc', 'ab')).toBe(false);
    expect(sameHex(1, '1')).toBe(false);
  });
});

describe('the secret file', () => {
  it('is created at first start, 0600, 256 bits; a restart keeps it; rotate replaces it', () => {
    const d = dir();
    const a = new Pairing({ stateDir: d, unpaired: 'mark', tofu: false, windowMs: 1000, maxAttempts: 1 });
    const first = readSecret(d)!.key;
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    if (process.getuid) expect(statSync(secretPath(d)).mode & 0o777).toBe(0o600);
    new Pairing({ stateDir: d, unpaired: 'mark', tofu: false, windowMs: 1000, maxAttempts: 1 });
    expect(readSecret(d)!.key).toBe(first);
    a.rotate();
    expect(readSecret(d)!.key).not.toBe(first);
  });
});

describe('codes and the window', () => {
  it('codes are 8 Crockford base32 characters; what a person types is normalized', () => {
    const p = new Pairing({ stateDir: dir(), unpaired: 'mark', tofu: false, windowMs: 1000, maxAttempts: 1 });
    for (let i = 0; i < 50; i++) {
      const { code } = p.open();
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
      expect(isCodeShaped(normalizeCode(code))).toBe(true);
    }
    expect(normalizeCode(' 7kq2-m9xo ')).toBe('7KQ2M9X0');
    expect(normalizeCode('il')).toBe('11');
  });

  /** the producer's confirmation tag for `code`, computed as the extension does */
  async function tag(p: Pairing, code: string): Promise<{ x: Parameters<Pairing['finish']>[0]; tag: string }> {
    const { createECDH } = await import('node:crypto');
    const e = createECDH('prime256v1');
    const pub = e.generateKeys('hex', 'uncompressed');
    const r = p.begin('code', pub, nonce());
    if (!r.ok) throw new Error(r.message);
    const master = await masterKey(normalizeCode(code), r.x, 10);
    return { x: r.x, tag: confirmTags(master).producer };
  }

  it('expires: a code typed after the window is refused pairing_closed', async () => {
    let now = 1_000_000;
    const p = new Pairing({ stateDir: dir(), unpaired: 'mark', tofu: false, windowMs: 120_000, maxAttempts: 5, clock: () => now, kdfIterations: 10 });
    const { code } = p.open();
    const t = await tag(p, code);
    now += 120_001;
    expect(await p.finish(t.x, t.tag)).toMatchObject({ ok: false, code: 'pairing_closed' });
    expect(p.begin('code', '04' + 'ab'.repeat(64), nonce())).toMatchObject({ ok: false, code: 'pairing_closed' });
    expect(p.windowState()).toEqual({ open: false });
  });

  it('counts attempts across connections and closes at the limit; a new window starts over; the right code pairs once', async () => {
    const p = new Pairing({ stateDir: dir(), unpaired: 'mark', tofu: false, windowMs: 120_000, maxAttempts: 2, kdfIterations: 10 });
    const { code } = p.open();
    const wrong = await tag(p, 'AAAA-AAAA');
    expect(await p.finish(wrong.x, wrong.tag)).toMatchObject({ ok: false, code: 'pairing_code_wrong' });
    const wrong2 = await tag(p, 'BBBB-BBBB');
    expect(await p.finish(wrong2.x, wrong2.tag)).toMatchObject({ ok: false, code: 'pairing_locked' });
    expect(p.stats).toMatchObject({ wrong_codes: 2, locked: 1 });
    const again = p.open();
    const right = await tag(p, again.code);
    const ok = await p.finish(right.x, right.tag);
    expect(ok.ok).toBe(true);
    expect(p.windowState().open).toBe(false);
    // the old code was dead as soon as a new window opened
    expect(code).not.toBe(again.code);
  });

  it('rejects a pub that is not a P-256 point, and a malformed nonce', () => {
    const p = new Pairing({ stateDir: dir(), unpaired: 'mark', tofu: true, windowMs: 1000, maxAttempts: 1 });
    expect(p.begin('tofu', '04' + '00'.repeat(64), nonce())).toMatchObject({ ok: false, code: 'pairing_invalid' });
    expect(p.begin('tofu', 'zz', nonce())).toMatchObject({ ok: false, code: 'pairing_invalid' });
    expect(p.begin('tofu', '04' + 'ab'.repeat(64), 'short')).toMatchObject({ ok: false, code: 'pairing_invalid' });
  });

});
