/**
 * What a bridge and the daemon on one port agree on, in one place: where the daemon serves MCP,
 * how a bridge proves it may talk to it, and how it names the client it speaks for. Both sides
 * import it, so they cannot drift apart (docs/PROTOCOL.md, "Bridge ↔ daemon").
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../state-dir.js';

/** the daemon's MCP endpoint (streamable HTTP), on the ingest port */
export const MCP_PATH = '/mcp';
/** the client identity a bridge speaks for; sessions with one id share that client's state */
export const CLIENT_HEADER = 'x-gasoline-client';
export { CLIENT_ID_RE } from './client-id-pattern.js';

/** the per-daemon bearer token, readable by this user only */
export function tokenPath(stateDir: string, port: number): string {
  return join(stateDir, `daemon-${port}.token`);
}

/** the lock that makes bridges started at one moment start one daemon */
export function lockPath(stateDir: string, port: number): string {
  return join(stateDir, `daemon-${port}.lock`);
}

/** The daemon writes a fresh token at every start (0600, atomic): a bridge of an old daemon cannot reuse it. */
export function writeDaemonToken(stateDir: string, port: number): string {
  const token = randomBytes(32).toString('hex');
  writePrivateFile(tokenPath(stateDir, port), token);
  return token;
}

/** The token of the daemon on this port, or null when there is none (or it is not ours to read). */
export function readDaemonToken(stateDir: string, port: number): string | null {
  try {
    const t = readFileSync(tokenPath(stateDir, port), 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(t) ? t : null;
  } catch {
    return null;
  }
}

/**
 * `Authorization: Bearer <token>` checked in constant time: the comparison does not stop at the
 * first wrong byte, so a local process cannot learn the token a byte at a time from timings.
 */
export function bearerMatches(authorization: string, token: string): boolean {
  const m = /^Bearer ([0-9a-f]{64})$/.exec(authorization);
  if (!m) return false;
  return timingSafeEqual(Buffer.from(m[1]!, 'utf8'), Buffer.from(token, 'utf8'));
}
