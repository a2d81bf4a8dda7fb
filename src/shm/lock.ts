/**
 * The store's commit lock: one Int32 word, 0 = free, else the holder's id.
 *
 * Writers (workers) may block briefly: the lock is held only for a batch's memcpy. The main
 * thread never calls Atomics.wait (it would stall MCP and the uWS edge), so it only ever
 * tries once. Holding the id, not a flag, lets main release the lock of a worker that died
 * while holding it.
 */
import { GEN, LOCK, MAIN_HOLDER } from './layout.js';

/** Each bounded wait re-checks the word even if a notify was missed (force release, main). */
const WAIT_SLICE_MS = 5;
const SPINS_BEFORE_WAIT = 64;

export class StoreLockTimeoutError extends Error {
  constructor(readonly holder: number, readonly waitedMs: number) {
    super(`store commit lock still held by ${holder} after ${waitedMs} ms`);
    this.name = 'StoreLockTimeoutError';
  }
}

export class CommitLock {
  constructor(private readonly words: Int32Array) {}

  holder(): number {
    return Atomics.load(this.words, LOCK);
  }

  tryAcquire(id: number): boolean {
    return Atomics.compareExchange(this.words, LOCK, 0, id) === 0;
  }

  /** Workers only. Throws after `timeoutMs` so a task fails (and is retried) instead of hanging. */
  acquire(id: number, timeoutMs: number): void {
    if (id === 0) throw new RangeError('lock holder id 0 means free');
    for (let i = 0; i < SPINS_BEFORE_WAIT; i++) if (this.tryAcquire(id)) return;
    const start = performance.now();
    for (;;) {
      const seen = Atomics.compareExchange(this.words, LOCK, 0, id);
      if (seen === 0) return;
      const waited = performance.now() - start;
      if (waited >= timeoutMs) throw new StoreLockTimeoutError(seen, Math.round(waited));
      Atomics.wait(this.words, LOCK, seen, Math.min(WAIT_SLICE_MS, timeoutMs - waited));
    }
  }

  release(id: number): void {
    // compareExchange, not store: after a force release the word may belong to someone else.
    if (Atomics.compareExchange(this.words, LOCK, id, 0) === id) Atomics.notify(this.words, LOCK, 1);
  }

  /**
   * Crash recovery: frees the lock if `id` holds it. A writer that died mid-publish leaves the
   * generation odd, so it is made even again or every snapshot reader would keep retrying.
   */
  forceReleaseIfHeldBy(id: number, whileHeld?: () => void): boolean {
    // Take the lock over rather than freeing it, so no writer starts a window before gen is even.
    if (id === 0 || id === MAIN_HOLDER || Atomics.compareExchange(this.words, LOCK, id, MAIN_HOLDER) !== id) return false;
    if ((Atomics.load(this.words, GEN) & 1) === 1) Atomics.add(this.words, GEN, 1);
    try {
      whileHeld?.();
    } finally {
      Atomics.store(this.words, LOCK, 0);
      Atomics.notify(this.words, LOCK, 1);
    }
    return true;
  }

  /** Frees the lock if its holder is a worker not in `live` (the main thread never holds it across a turn). */
  releaseIfHolderDead(live: ReadonlySet<number>, whileHeld?: () => void): number | undefined {
    const h = this.holder();
    if (h === 0 || h === MAIN_HOLDER || live.has(h)) return undefined;
    return this.forceReleaseIfHeldBy(h, whileHeld) ? h : undefined;
  }
}
