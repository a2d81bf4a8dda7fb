/**
 * One ingest worker: a single-thread piscina (so a crashed thread is still detected, its tasks
 * failed and the thread replaced by piscina), the tasks main has handed it, and how long it held
 * any. The pool adds and removes lanes itself; one piscina per lane is what lets it pick exactly
 * which thread goes (an idle one) — piscina's own idleTimeout would remove any idle thread behind
 * the dispatcher's back, and its growth spawns on the first task it cannot place, one spike
 * being enough.
 */
import { Piscina } from 'piscina';
import type { IngestResult, WarmupResult, WorkerInit, WorkerResult, WorkerTask } from './messages.js';
import type { ThreadPriority } from './thread-priority.js';

export interface LaneOptions {
  filename: string;
  workerData: WorkerInit;
  concurrentTasks: number;
  youngGenerationMb: number;
  closeTimeoutMs: number;
  onError: (err: unknown) => void;
  /** once per thread, from its first result: the priority its start left it at */
  onPriority?: (p: ThreadPriority) => void;
  /**
   * the thread runs SCHED_IDLE once warm, while it keeps up (pool.worker_policy; the pool lowers
   * it, ingest-pool.ts): set on the workers kept when quiet, never on those added under load
   */
  idle?: boolean;
  /**
   * no thread until the first task: an idle daemon holds no ingest thread at all (its ~20 MB of
   * RSS), and the first batch after idle waits for one to load (tens of ms)
   */
  lazy?: boolean;
}

export class WorkerLane {
  private readonly piscina: Piscina<WorkerTask, IngestResult | WarmupResult>;
  /** tasks handed over and not settled */
  inflight = 0;
  /**
   * A task failed here (its thread most likely died) and the replacement has not answered a no-op
   * yet: routing sends work elsewhere meanwhile, or the next task would wait for a thread to load
   * (tens to hundreds of ms) beside an idle worker, and a retried item would wait longest of all.
   */
  recovering = false;
  /** routable: the thread has loaded (lanes added under load are not given work before) */
  ready: boolean;
  private busyMs = 0;
  private busySince = 0;
  /** time a second task sat behind the first: the thread runs one at a time, so it waited */
  private waitMs = 0;
  private waitSince = 0;
  /** the thread's priority, as its first result reported it (undefined before its first task) */
  priority: ThreadPriority | undefined;
  /** to be lowered to SCHED_IDLE once warm (LaneOptions.idle) */
  readonly idleCandidate: boolean;
  /** the thread id put at SCHED_IDLE (a thread piscina replaced after a crash is a new one, normal) */
  loweredTid: number | undefined;
  /** the lowered thread's time on a core, and this lane's busy time (ms), when the pool last looked (ingest-pool.ts: starvation) */
  sched: { runMs: number; busyMs: number } | undefined;

  constructor(
    readonly id: number,
    o: LaneOptions,
    ready: boolean,
  ) {
    this.ready = ready;
    this.idleCandidate = o.idle === true;
    this.piscina = new Piscina({
      filename: o.filename,
      minThreads: o.lazy ? 0 : 1,
      maxThreads: 1,
      concurrentTasksPerWorker: o.concurrentTasks,
      // Infinity, not a large number: piscina arms no timer at all then (a number above 2^31 ms
      // would fire at once), so a lazy lane's thread, once started, stays
      idleTimeout: Infinity,
      // the dispatcher bounds what enters the pool; piscina's own queue stays short
      maxQueue: Number.MAX_SAFE_INTEGER,
      workerData: o.workerData,
      // A worker's objects die young (one batch); V8's default young generation is sized for
      // long-lived heaps and cost ~30 MB of RSS per worker for nothing. Measured: 436 → 406 MB
      // peak with full rings and 2 workers, throughput unchanged.
      resourceLimits: { maxYoungGenerationSizeMb: o.youngGenerationMb },
      closeTimeout: o.closeTimeoutMs,
    });
    this.piscina.on('error', o.onError);
    this.onPriority = o.onPriority;
  }

  private readonly onPriority: ((p: ThreadPriority) => void) | undefined;

  /** tasks handed to this lane so far (a lazy lane's thread starts with the first) */
  tasks = 0;

  async run(task: WorkerTask): Promise<IngestResult | WarmupResult> {
    this.tasks++;
    const n = ++this.inflight;
    if (n === 1) this.busySince = performance.now();
    else if (n === 2) this.waitSince = performance.now();
    try {
      const r = await this.piscina.run(task);
      this.noteFirst(r);
      return r;
    } catch (err) {
      this.recover();
      throw err;
    } finally {
      const left = --this.inflight;
      if (left === 0) this.busyMs += performance.now() - this.busySince;
      else if (left === 1) this.waitMs += performance.now() - this.waitSince;
    }
  }

  /** a thread's first result carries its priority (a replacement thread's too) */
  private noteFirst(r: WorkerResult): void {
    if (!r.priority) return;
    this.priority = r.priority;
    this.onPriority?.(r.priority);
  }

  /** Starts the replacement thread now (a lazy lane would wait for a task) and waits until it loaded. */
  private recover(): void {
    if (this.recovering) return;
    this.recovering = true;
    const done = (): void => {
      this.recovering = false;
    };
    // a thread that cannot load fails this too: the lane takes work again rather than never
    this.piscina.run({ kind: 'warmup', batches: 0 }).then((r: WorkerResult) => {
      this.noteFirst(r);
      done();
    }, done);
  }

  /** ms during which a task waited inside this lane behind another, the wait under way included */
  waitTotalMs(now: number): number {
    return this.waitMs + (this.inflight > 1 ? now - this.waitSince : 0);
  }

  /** ms this lane has held at least one task, the stretch under way included */
  busyTotalMs(now: number): number {
    return this.busyMs + (this.inflight > 0 ? now - this.busySince : 0);
  }

  /** the kernel id of the lane's thread, once its first result said it (Linux) */
  get tid(): number | undefined {
    const p = this.priority;
    return p && 'tid' in p ? p.tid : undefined;
  }

  /** the thread runs SCHED_IDLE now: lowered, and not replaced since */
  get lowered(): boolean {
    return this.loweredTid !== undefined && this.loweredTid === this.tid;
  }

  /** thread ids alive in this lane (a crashed one is gone from it at once) */
  threadIds(): number[] {
    return this.piscina.threads.map((w) => w.threadId);
  }

  get utilization(): number {
    return this.piscina.utilization;
  }

  destroy(): Promise<void> {
    return this.piscina.destroy();
  }
}
