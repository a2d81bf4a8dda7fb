/**
 * Who may talk to us. Loopback Host names with our port only (DNS rebinding), and an Origin,
 * when present, from the allowlist (cross-site WebSocket hijacking, CSRF). Checked before any
 * body is read or any upgrade happens.
 */
import type { ErrorCode } from '../errors.js';
import type { Trust } from './admission.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export interface Guard {
  check(host: string, origin: string): ErrorCode | null;
  /**
   * What an accepted Origin claims: an allowlisted `chrome-extension://` origin (by default only
   * ours; an unpacked build with another id is added to `allowed_origins`) is the extension's.
   * A web page cannot send such an Origin; a local process can, until pairing proves more.
   */
  trust(origin: string): Trust;
}

export function createGuard(port: () => number, allowedOrigins: readonly string[]): Guard {
  const origins = new Set(allowedOrigins.map((o) => o.toLowerCase()));
  return {
    check(host: string, origin: string): ErrorCode | null {
      if (!isLoopbackHost(host.toLowerCase(), port())) return 'host_refused';
      const o = origin.toLowerCase();
      if (o !== '' && !origins.has(o) && !isOwnOrigin(o, port())) return 'origin_refused';
      return null;
    },
    trust(origin: string): Trust {
      const o = origin.toLowerCase();
      return o.startsWith('chrome-extension://') && origins.has(o) ? 'extension_origin' : 'none';
    },
  };
}

/**
 * Our own loopback origin (`http://127.0.0.1:<port>`, localhost, [::1]): only this server answers
 * there and it serves no page, so no script can run under it. MCP clients that send an Origin
 * name it (the conformance suite's "valid" request does); a rebinding page's origin carries its
 * own name, not a loopback one, and is still refused.
 */
function isOwnOrigin(origin: string, port: number): boolean {
  return origin.startsWith('http://') && isLoopbackHost(origin.slice('http://'.length), port);
}

export function isLoopbackHost(host: string, port: number): boolean {
  for (const name of LOOPBACK_NAMES) {
    if (host === `${name}:${port}`) return true;
    // Port 80 may be elided by clients; we never listen there by default but stay exact.
    if (port === 80 && host === name) return true;
  }
  return false;
}
