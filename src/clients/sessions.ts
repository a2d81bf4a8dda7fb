/**
 * The MCP session table (issue 19 item 3): every agent session the app serves, whatever carries
 * it — stdio (a standalone), a bridge's /mcp session, the side panel's (a panel token) — with its
 * client, the name the client gave in initialize, when it began and was last seen, and its state:
 *
 *   ready     — answering, its pushes delivered
 *   degraded  — answering, but its transport drops what it pushes (a stream nobody reads, stdout
 *               under pressure); back to ready on the next push that goes out
 *   closed    — ended; listed for `closed_ttl_s` so /health and `gasoline --status` still show
 *               what went, then forgotten (swept on every open and list: no timer)
 *
 * Per-client state (cursors, pending command results) is the client's (./registry.ts,
 * ./commands.ts), not the session's: a session that comes back is a new session of the same
 * client and finds it all there. Bounded: at most `max` rows; the oldest closed ones go first.
 */
import { randomUUID } from 'node:crypto';

export const SESSION_TRANSPORTS = ['stdio', 'bridge', 'panel'] as const;
export type SessionTransport = (typeof SESSION_TRANSPORTS)[number];
export type SessionState = 'ready' | 'degraded' | 'closed';

export interface SessionView {
  /** the session id's first 8 characters: enough to tell sessions apart, not enough to use one
   * (`tag`, not `session`: egress redaction takes any session-named key for a secret) */
  tag: string;
  transport: SessionTransport;
  client_id: string;
  client_name: string | null;
  created: string;
  last_seen: string;
  state: SessionState;
  degraded_reason?: string;
  closed_at?: string;
}

export class SessionRecord {
  clientName: string | null = null;
  readonly created: number;
  lastSeen: number;
  state: SessionState = 'ready';
  reason: string | undefined;
  closedAt = 0;

  constructor(
    public id: string,
    readonly transport: SessionTransport,
    readonly clientId: string,
    private readonly now: () => number,
  ) {
    this.created = this.lastSeen = now();
  }

  /** from initialize's clientInfo: what the user sees in an approval prompt ("claude-code 2.1") */
  setClientName(name: string | undefined, version?: string): void {
    if (name) this.clientName = `${name}${version ? ` ${version}` : ''}`.slice(0, 120);
  }

  touch(): void {
    this.lastSeen = this.now();
  }

  degrade(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'degraded';
    this.reason = reason.slice(0, 200);
  }

  recover(): void {
    if (this.state !== 'degraded') return;
    this.state = 'ready';
    this.reason = undefined;
  }

  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.reason = undefined;
    this.closedAt = this.now();
  }

  view(): SessionView {
    return {
      tag: this.id.slice(0, 8),
      transport: this.transport,
      client_id: this.clientId,
      client_name: this.clientName,
      created: new Date(this.created).toISOString(),
      last_seen: new Date(this.lastSeen).toISOString(),
      state: this.state,
      ...(this.reason ? { degraded_reason: this.reason } : {}),
      ...(this.state === 'closed' ? { closed_at: new Date(this.closedAt).toISOString() } : {}),
    };
  }
}

export class SessionTable {
  private readonly rows = new Map<SessionRecord, true>();
  private readonly now: () => number;

  constructor(private readonly o: { closedTtlMs: number; max?: number; now?: () => number }) {
    this.now = o.now ?? Date.now;
  }

  open(clientId: string, transport: SessionTransport): SessionRecord {
    this.sweep();
    const max = this.o.max ?? 256;
    if (this.rows.size >= max) {
      // closed rows make room first (oldest first); open ones are bounded by their transports
      for (const r of this.rows.keys()) {
        if (this.rows.size < max) break;
        if (r.state === 'closed') this.rows.delete(r);
      }
    }
    const r = new SessionRecord(randomUUID(), transport, clientId, this.now);
    this.rows.set(r, true);
    return r;
  }

  list(): SessionView[] {
    this.sweep();
    return [...this.rows.keys()].map((r) => r.view());
  }

  /** sessions not closed */
  get openCount(): number {
    let n = 0;
    for (const r of this.rows.keys()) if (r.state !== 'closed') n++;
    return n;
  }

  private sweep(): void {
    const cut = this.now() - this.o.closedTtlMs;
    for (const r of this.rows.keys()) if (r.state === 'closed' && r.closedAt <= cut) this.rows.delete(r);
  }
}
