/**
 * Who a client is, derived without loading any engine code: a bridge computes it at start.
 */
import { createHash } from 'node:crypto';

/** Explicit id, else derived from the working directory, so one project keeps its cursors. */
export function deriveClientId(explicit: string | undefined, cwd = process.cwd()): string {
  if (explicit) return explicit;
  return `cwd-${createHash('sha256').update(cwd).digest('hex').slice(0, 12)}`;
}
