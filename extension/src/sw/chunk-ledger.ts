/**
 * Which content-script chunks the workers of this browser session have taken. A content script
 * resends a chunk whose reply it lost. When the reply was lost because the worker died, the chunk
 * may already have gone on (taken, batched, sent, stored), and the next worker, knowing nothing of
 * it, stored it again: a duplicate (the capture e2e's service-worker kill, 1 run in 7). So a
 * chunk's id is written to chrome.storage.session (kept across worker restarts, out of content
 * scripts' reach) before its records reach the transport, and a resend finds it whichever worker
 * it reaches. A worker that dies between that write and handing the records over loses the chunk:
 * records the content script was never told were taken, as when a worker dies before reading it.
 */

export interface SessionArea {
  get(keys: string | null): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string[]): Promise<void>;
}

const PREFIX = 'chunk:';
/** a content script gives up on a chunk after ~35 s of resends: a minute covers every one */
export const CHUNK_KEEP_MS = 60_000;

export class ChunkLedger {
  /** ids this worker took, oldest first, with when */
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly area: SessionArea,
    private readonly now: () => number = Date.now,
  ) {
    // what a dead worker took and no one will resend any more
    void this.area
      .get(null)
      .then((all) => {
        const cutoff = this.now() - CHUNK_KEEP_MS;
        const old = Object.entries(all).filter(([k, at]) => k.startsWith(PREFIX) && !(typeof at === 'number' && at >= cutoff));
        if (old.length) return this.area.remove(old.map(([k]) => k));
      })
      .catch(() => undefined);
  }

  /** True the first time `id` is offered in this browser session, false for a resend. */
  async take(id: string): Promise<boolean> {
    if (this.recent.has(id)) return false;
    // at once, so a resend that crosses this one in the same worker is refused while we write
    this.recent.set(id, this.now());
    this.prune();
    const key = PREFIX + id;
    try {
      if ((await this.area.get(key))[key] !== undefined) return false;
      await this.area.set({ [key]: this.now() });
    } catch {
      // storage refused (quota): deliver, as before this ledger; a duplicate beats a loss here
    }
    return true;
  }

  private prune(): void {
    const cutoff = this.now() - CHUNK_KEEP_MS;
    const old: string[] = [];
    for (const [id, at] of this.recent) {
      if (at >= cutoff) break;
      old.push(PREFIX + id);
      this.recent.delete(id);
    }
    if (old.length) void this.area.remove(old).catch(() => undefined);
  }
}
