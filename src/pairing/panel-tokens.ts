/**
 * Panel tokens (issue 19 item 2, docs/SECURITY.md "Panel tokens"): the side panel speaks MCP to
 * /mcp with a token its extension asked for over a /ws connection that proved the pairing secret.
 * The token is what a browser page can hold instead of the daemon's bearer token (a file the
 * extension cannot read, and which would outlive the panel).
 *
 * A token is 32 random bytes (base64url, 43 characters), lives `ttlMs` (15 min), and dies with the
 * connection that asked for it: a producer that lost its socket (or its pairing) holds none. At
 * most `perConnection` (4) are live per connection, the oldest revoked first, so a looping panel
 * cannot grow this table. Held in memory only, and only as a SHA-256 digest: the table never holds
 * what a request would present, the lookup is by digest, and the digest found is compared again in
 * constant time. Nothing here logs.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const PANEL_TOKEN_TTL_MS = 15 * 60_000;
export const PANEL_TOKENS_PER_CONNECTION = 4;
/** base64url of 32 bytes, unpadded */
const TOKEN_RE = /^Bearer ([A-Za-z0-9_-]{43})$/;

/** A live token's record: what a /mcp session keeps to ask, on every request, whether it still holds. */
export interface PanelGrant {
  /** the /ws connection that asked for it (its revocation revokes the grant) */
  readonly connId: number;
  readonly expiresAt: number;
  /** issue order: of two grants with the same expiry, the later one */
  readonly seq: number;
  /** false once revoked or expired; never true again */
  readonly live: boolean;
}

class Grant implements PanelGrant {
  revoked = false;
  constructor(
    readonly digest: Buffer,
    readonly connId: number,
    readonly expiresAt: number,
    readonly seq: number,
    private readonly now: () => number,
  ) {}
  get live(): boolean {
    return !this.revoked && this.now() < this.expiresAt;
  }
}

export type RevokeReason = 'connection_closed' | 'replaced' | 'expired' | 'reset';

export class PanelTokens {
  private readonly byDigest = new Map<string, Grant>();
  /** per connection, oldest first */
  private readonly byConn = new Map<number, Grant[]>();
  private readonly listeners: Array<(g: PanelGrant, why: RevokeReason) => void> = [];
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly perConnection: number;
  readonly stats = { issued: 0, revoked: 0, expired: 0, refused: 0 };
  /** at the next expiry: sessions on an expired token end then, not at the next issue, /health or reaper pass */
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(o: { ttlMs?: number; perConnection?: number; now?: () => number } = {}) {
    this.now = o.now ?? Date.now;
    this.ttlMs = o.ttlMs ?? PANEL_TOKEN_TTL_MS;
    this.perConnection = o.perConnection ?? PANEL_TOKENS_PER_CONNECTION;
  }

  /** A new token for connection `connId` (the caller checked it is verified). The token is returned once and kept nowhere. */
  issue(connId: number): { token: string; expiresAt: number } {
    this.sweep();
    const list = this.byConn.get(connId) ?? [];
    while (list.length >= this.perConnection) this.drop(list.shift()!, 'replaced');
    const raw = randomBytes(32);
    const token = raw.toString('base64url');
    const digest = createHash('sha256').update(token).digest();
    const g = new Grant(digest, connId, this.now() + this.ttlMs, this.stats.issued, this.now);
    list.push(g);
    this.byConn.set(connId, list);
    this.byDigest.set(digest.toString('hex'), g);
    this.stats.issued++;
    this.schedule();
    return { token, expiresAt: g.expiresAt };
  }

  /** The live grant an `Authorization` header value carries, or null (malformed, unknown, revoked, expired). */
  check(authorization: string): PanelGrant | null {
    const m = TOKEN_RE.exec(authorization);
    if (!m) return null;
    const digest = createHash('sha256').update(m[1]!).digest();
    const g = this.byDigest.get(digest.toString('hex'));
    // the map found it by digest; compare again without an early exit all the same
    if (!g || !timingSafeEqual(g.digest, digest)) {
      this.stats.refused++;
      return null;
    }
    if (!g.live) {
      this.drop(g, 'expired');
      this.stats.refused++;
      return null;
    }
    return g;
  }

  /** Every token of a connection: it closed, or it no longer proves pairing. */
  revokeConnection(connId: number): void {
    for (const g of this.byConn.get(connId) ?? []) this.drop(g, 'connection_closed');
    this.byConn.delete(connId);
  }

  /** Every token (the pairing secret was reset). */
  revokeAll(): void {
    for (const g of [...this.byDigest.values()]) this.drop(g, 'reset');
  }

  /** Told of every grant that dies (revoked, replaced, or found expired), once. */
  onRevoke(fn: (g: PanelGrant, why: RevokeReason) => void): void {
    this.listeners.push(fn);
  }

  get live(): number {
    this.sweep();
    return this.byDigest.size;
  }

  health(): Record<string, unknown> {
    return { live: this.live, ttl_s: Math.round(this.ttlMs / 1000), per_connection: this.perConnection, ...this.stats };
  }

  /** Stops the expiry timer (the app is closing). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** one unref'd timer at the earliest expiry; it sweeps and sets itself again */
  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed || this.byDigest.size === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const g of this.byDigest.values()) if (g.expiresAt < next) next = g.expiresAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.sweep();
        this.schedule();
      },
      Math.min(2 ** 31 - 1, Math.max(0, next - this.now()) + 1),
    );
    this.timer.unref();
  }

  private sweep(): void {
    const now = this.now();
    for (const g of [...this.byDigest.values()]) if (now >= g.expiresAt) this.drop(g, 'expired');
  }

  private drop(g: Grant, why: RevokeReason): void {
    if (!this.byDigest.delete(g.digest.toString('hex'))) return;
    g.revoked = true;
    const list = this.byConn.get(g.connId);
    if (list) {
      const i = list.indexOf(g);
      if (i >= 0) list.splice(i, 1);
      if (!list.length) this.byConn.delete(g.connId);
    }
    if (why === 'expired') this.stats.expired++;
    else this.stats.revoked++;
    for (const fn of this.listeners) fn(g, why);
  }
}
