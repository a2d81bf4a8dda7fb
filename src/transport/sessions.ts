/**
 * Producer sessions: what makes delivery at-most-once per (session, seq) across reconnects.
 * A session outlives its connections (resume), so it lives here, not on the socket.
 * Bounded: when full, the least recently active idle session is forgotten (a producer that
 * comes back after that is treated as new and re-baselined from its hello).
 */
import type { SessionId } from '../domain/ingest/item.js';

export interface Session {
  readonly id: SessionId;
  /** highest seq applied; -1 = no baseline yet (the first batch sets it) */
  applied: number;
  /** a task holding this session's frames is in the pool: later frames wait (ordering) */
  inflight: boolean;
  lastActive: number;
  connections: number;
}

export class SessionTable {
  private readonly map = new Map<SessionId, Session>();
  constructor(private readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  /** Finds or creates; undefined when full of busy sessions. */
  attach(id: SessionId, lastAcked: number | undefined, now: number): Session | undefined {
    let s = this.map.get(id);
    if (s) {
      // Map order is our LRU order: re-insert on use.
      this.map.delete(id);
      this.map.set(id, s);
    } else {
      if (this.map.size >= this.max && !this.evictOne()) return undefined;
      s = { id, applied: lastAcked ?? -1, inflight: false, lastActive: now, connections: 0 };
      this.map.set(id, s);
    }
    s.connections++;
    s.lastActive = now;
    return s;
  }

  detach(s: Session): void {
    s.connections = Math.max(0, s.connections - 1);
  }

  get(id: SessionId): Session | undefined {
    return this.map.get(id);
  }

  private evictOne(): boolean {
    for (const [id, s] of this.map) {
      if (s.connections === 0 && !s.inflight) {
        this.map.delete(id);
        return true;
      }
    }
    return false;
  }
}
