/**
 * A periodic job that runs only while it has something to watch. Each run returns the delay to
 * the next one, or null to stop; `wake()` brings a stopped or slowed job back to its fast pace.
 *
 * Why not setInterval: an idle daemon woke ~55 times a second for nothing (the pool's scale
 * check every 100 ms, the threshold check every 250 ms, the frame-deadline sweep every second
 * with no connection, the read index's catch-up every 25 ms), ~10 ms of CPU a second, and a
 * laptop's core never reached its deep sleep states. Whoever makes work calls `wake()`: it is a
 * comparison when the job already runs at its fast pace, so it can be called per task.
 */
export class Cadence {
  private timer: NodeJS.Timeout | undefined;
  /** the delay the pending run was scheduled with; -1 when none is pending */
  private pending = -1;
  private closed = false;

  constructor(
    private readonly job: () => number | null,
    readonly fastMs: number,
  ) {}

  /** At the fast pace from now on, unless it already is. */
  wake(): void {
    if (this.pending === this.fastMs || this.closed) return;
    this.schedule(this.fastMs);
  }

  /** a run is pending (it has not stopped itself) */
  get running(): boolean {
    return this.pending !== -1;
  }

  /** the delay the pending run was scheduled with (-1: stopped); for tests and /health */
  get delayMs(): number {
    return this.pending;
  }

  /** Stops for good: wake() does nothing after it. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = -1;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.pending = ms;
    this.timer = setTimeout(this.fire, ms);
    // what a cadence watches never keeps the process alive on its own
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.pending = -1;
    // a job that throws keeps the fast pace: the error surfaces as setInterval's did (the
    // daemon logs it and runs on), and what it watches is still watched
    let next: number | null = this.fastMs;
    try {
      next = this.job();
    } finally {
      // a wake() during the job has scheduled the fast pace already; that stands
      if (next !== null && !this.closed && this.pending === -1) this.schedule(Math.max(1, next));
    }
  };
}
