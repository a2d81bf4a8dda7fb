/**
 * The daemon's pairing secret: 256 random bits in `<state_dir>/pairing.json` (0600, written
 * atomically), kept across restarts so a paired extension stays paired. One per state dir: the
 * daemon and a standalone of the same user share it. `paired_at` records that some producer paired
 * with this secret, which ends trust on first use; rotating writes a new secret without it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateDir, writePrivateFile } from '../state-dir.js';
import { HEX64, SECRET_BYTES } from './spec.js';

export interface SecretFile {
  v: 1;
  key: string;
  created_at: string;
  paired_at?: string;
}

export function secretPath(stateDir: string): string {
  return join(stateDir, 'pairing.json');
}

/** The file as written, or null when it is missing or not ours in shape (then a new one is made). */
export function readSecret(stateDir: string): SecretFile | null {
  try {
    const f = JSON.parse(readFileSync(secretPath(stateDir), 'utf8')) as Partial<SecretFile>;
    if (f.v !== 1 || typeof f.key !== 'string' || !HEX64.test(f.key)) return null;
    return { v: 1, key: f.key, created_at: String(f.created_at ?? ''), ...(typeof f.paired_at === 'string' ? { paired_at: f.paired_at } : {}) };
  } catch {
    return null;
  }
}

export function writeSecret(stateDir: string, f: SecretFile): void {
  makePrivateDir(stateDir);
  writePrivateFile(secretPath(stateDir), `${JSON.stringify(f)}\n`);
}

/** A fresh secret (the first start, or `gasoline pair --reset`), or the one given (tests preseed theirs). */
export function newSecret(stateDir: string, key = randomBytes(SECRET_BYTES).toString('hex')): SecretFile {
  const f: SecretFile = { v: 1, key, created_at: new Date().toISOString() };
  writeSecret(stateDir, f);
  return f;
}

export function loadOrCreateSecret(stateDir: string): SecretFile {
  return readSecret(stateDir) ?? newSecret(stateDir);
}
