/**
 * When the ingest pool grows or shrinks, decided from samples alone (no threads, no clock), so
 * the rule is unit-tested on its edges and the pool only carries it out.
 *
 * Grow: work waited for a worker (queued in the dispatcher that it could not hand out, or behind
 * another task inside a busy worker) for at least half of every sample over `growAfterMs`. One spike shorter than
 * that never adds a thread; after a grow the streak starts again, so the pool adds one worker per
 * window and sees what it changed before adding the next. Except when the edge refused work as
 * overloaded in the sample: a producer that is told to resend while a worker could still be
 * added pays more than a thread kept for `shrinkAfterMs`, so that grows at once (one worker per
 * sample, none while one is starting). Seen: a daemon that had shrunk to one worker after 10 s
 * of quiet met 100 000 events/s and refused ~800 batches in the 500 ms the streak asked for.
 *
 * Shrink: over `shrinkAfterMs` since the last grow, nothing waited or was refused and the workers' busy time
 * would have fit in one worker fewer kept at most half busy. Busy time, not per-worker idleness:
 * the dispatcher spreads a trickle over every worker, so no single one ever idles that long while
 * the pool as a whole does almost nothing. Shrinks may follow each other sample by sample while
 * the same window still says so, so a burst's workers are gone soon after it, not one per window.
 *
 * Promote: a worker running SCHED_IDLE (pool.worker_policy) is replaced by a normal one when its
 * thread was starved of a core (ingest-pool.ts says when a sample is) in every sample over
 * `growAfterMs`: a few starved samples at the start of a load are the daemon's own start, not a
 * neighbour. Work that waits behind a lowered worker that is not starved is work, not policy: a
 * normal worker would be no faster, so that grows the pool as before. Where the kernel keeps no
 * record of a thread's waits, what would grow the pool (sustained waiting, a refusal) replaces the
 * lowered worker instead, whatever the pool's size, before any worker is added.
 */

export interface ScaleSample {
  /** how long the sample covered */
  ms: number;
  /** of which, how long work waited that the dispatcher could not hand out */
  backlogMs: number;
  /** sum over workers of the time each held at least one task */
  busyMs: number;
  /** batches the edge refused as overloaded in it (absent: none) */
  shed?: number;
}

export interface ScalePolicyOptions {
  min: number;
  max: number;
  growAfterMs: number;
  shrinkAfterMs: number;
}

export type ScaleDecision = 'grow' | 'shrink' | 'promote' | undefined;

/** the pool's SCHED_IDLE workers in the sample: any at all, and whether one was starved of a core (undefined: unknown here) */
export interface LoweredWorkers {
  lowered: boolean;
  starved: boolean | undefined;
}

/** a sample counts towards growing when work waited at least this share of it */
const GROW_BACKLOG_SHARE = 0.5;
/** the busy time of the window must fit in one worker fewer at this load, or the pool keeps its size */
const SHRINK_HEADROOM = 0.5;

export class ScalePolicy {
  /** newest last; only as many as the longer window needs */
  private samples: ScaleSample[] = [];
  /** ms of samples since the last grow (shrinks do not reset it: see the header) */
  private sinceGrowMs = 0;
  /** ms of consecutive backlogged samples since the last grow */
  private streakMs = 0;
  /** ms of consecutive samples in which a lowered worker was starved */
  private starvedMs = 0;

  constructor(private readonly o: ScalePolicyOptions) {}

  /** One sample; `workers` is the size now, `starting` true while an added worker is not ready. */
  decide(s: ScaleSample, workers: number, starting: boolean, idle: LoweredWorkers = { lowered: false, starved: false }): ScaleDecision {
    this.starvedMs = idle.lowered && idle.starved ? this.starvedMs + s.ms : 0;
    this.samples.push(s);
    this.sinceGrowMs += s.ms;
    this.streakMs = s.ms > 0 && s.backlogMs >= s.ms * GROW_BACKLOG_SHARE ? this.streakMs + s.ms : 0;
    this.trim();
    if (starting) {
      // what waited while a worker loads says nothing about the pool with it: measure again after
      this.streakMs = 0;
      this.starvedMs = 0;
      return undefined;
    }
    const waiting = this.streakMs >= this.o.growAfterMs || (s.shed ?? 0) > 0;
    if (idle.lowered && (idle.starved === undefined ? waiting : this.starvedMs >= this.o.growAfterMs)) {
      this.sinceGrowMs = 0;
      this.streakMs = 0;
      this.starvedMs = 0;
      return 'promote';
    }
    if (workers < this.o.max && waiting) {
      this.sinceGrowMs = 0;
      this.streakMs = 0;
      return 'grow';
    }
    if (workers > this.o.min && this.sinceGrowMs >= this.o.shrinkAfterMs) {
      let ms = 0;
      let backlog = 0;
      let busy = 0;
      let shed = 0;
      for (let i = this.samples.length - 1; i >= 0 && ms < this.o.shrinkAfterMs; i--) {
        const x = this.samples[i]!;
        ms += x.ms;
        backlog += x.backlogMs;
        busy += x.busyMs;
        shed += x.shed ?? 0;
      }
      if (backlog === 0 && shed === 0 && busy <= ms * (workers - 1) * SHRINK_HEADROOM) return 'shrink';
    }
    return undefined;
  }

  private trim(): void {
    const keep = Math.max(this.o.growAfterMs, this.o.shrinkAfterMs);
    let ms = 0;
    let i = this.samples.length - 1;
    for (; i >= 0 && ms < keep; i--) ms += this.samples[i]!.ms;
    if (i >= 0) this.samples = this.samples.slice(i + 1);
  }
}
