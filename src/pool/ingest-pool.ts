/**
 * The ingest pool: an elastic set of workers (one single-thread piscina each, worker-lane.ts),
 * the shared input arena and item slots they read, the micro-batching dispatcher in front of
 * them, warm-up before the port opens, crash recovery, and close.
 *
 * It starts with `min_threads` workers (1) and grows one worker at a time towards `threads`
 * while work keeps waiting, and shrinks back when the workers' busy time would fit in fewer
 * (scale-policy.ts): an idle daemon costs one worker's memory on any number of cores.
 *
 * A worker added under load takes work as soon as its thread has loaded, without synthetic
 * warm-up: warm-up at start is free because the port is not open yet, but under load every
 * millisecond spent on synthetic batches is one the backlog waits for, and real batches warm the
 * same code paths. Its first batches run on a cold JIT; the other workers' do not slow down.
 *
 * Recycling: a worker that ran a burst keeps what the burst grew (its heap, its JIT code) after a
 * shrink, and the input arena keeps every page the burst touched: ~50 MB of an idle daemon's RSS
 * that no shrink gives back. So once nothing has run for `recycle_after_idle_ms` and the arena is
 * empty, the pool swaps in a fresh arena and fresh workers (as many as at start) and terminates
 * the old ones, all in one synchronous step on main: no frame can enter the old arena after the
 * check, no task is in flight, so nothing is lost or run twice. A fresh worker is routable at
 * once (piscina holds a task until its thread has loaded), and a pool that ran nothing since its
 * workers started is left alone.
 *
 * Policy (pool.worker_policy `idle`, opt-in): the workers kept when quiet run SCHED_IDLE once
 * they are warm (thread-policy.ts), so on a machine with few cores main and the scan worker,
 * answering an agent, never wait behind a batch for a core (pushes pay for it: alerts are raised
 * here, and a SCHED_IDLE thread that wakes waits for the core's normal thread to yield). Such a
 * worker gets almost nothing while normal threads of its scheduling group keep every core busy
 * (0.3 % of a core: its session's, under autogroup, or the whole machine's without it), so it is
 * lowered only while it keeps up: each scale check compares its thread's time on a core
 * (schedstat) with the time it held work, and a worker starved over grow_after_ms is replaced by
 * one at the normal policy (ScalePolicy's `promote`). The replaced one takes no more work and ends
 * when it has finished what it holds. A lowered thread cannot be raised again without privilege;
 * the next recycle's fresh workers are lowered again.
 */
import { allocateAlertRing } from '../shm/alert-ring.js';
import { allocateDetectState } from '../shm/detect-state.js';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { log } from '../log.js';
import type { StoreBuffers, StoreReader } from '../shm/index.js';
import { LiveRedaction } from '../domain/redaction/index.js';
import { Dispatcher, type TaskRunner } from './dispatcher.js';
import { allocateExpress, ExpressPoster } from './express.js';
import { InputArena } from './input-arena.js';
import { allocateSlots, SlotAllocator, SlotView } from './item-slots.js';
import type { ItemOutcome, TaskItem, WorkerInit } from './messages.js';
import { ScalePolicy } from './scale-policy.js';
import { WorkerLane, type LaneOptions } from './worker-lane.js';
import { collectGarbage, youngGenerationBytes } from './collect-garbage.js';
import { mallocTrim, mallocTrimSupport, type MallocTrimSupport } from './malloc-trim.js';
import { Cadence } from '../cadence.js';
import type { ThreadPriority } from './thread-priority.js';
import { idleThread, threadSchedStat } from './thread-policy.js';

/** collections tried for a replaced arena, the first after this delay, each next after twice the last */
const ARENA_RELEASE_ATTEMPTS = 5;
const ARENA_RELEASE_DELAY_MS = 50;
/**
 * After the arena is gone, one more collection this long after it if main's young generation is
 * still above YOUNG_SETTLED_BYTES: V8 shrinks new space at a collection only when its allocation
 * rate over roughly the last 5 s reads low, and the recycle's collections can fall inside the
 * window of the burst's own (seen in 3 idle_rss runs of 11: new space kept at 8 MB, +7 MB idle RSS).
 */
const YOUNG_SETTLE_MS = 6000;
/** V8's new space at rest reads 1–2 MiB here; a burst leaves it at 8–16 */
const YOUNG_SETTLED_BYTES = 2 * 1024 * 1024;
/** how often a quiet pool with a worker above the minimum looks again (its shrink window is seconds) */
const QUIET_CHECK_MS = 1000;
/**
 * A lowered worker is starved in a scale sample when it held a task for at least this share of
 * the sample, and its thread ran on a core for at most STARVED_RUN_SHARE of that time: beside CPU
 * hogs of its group a SCHED_IDLE thread runs ~0.3 % of it (PERFORMANCE.md "Nineteenth pass").
 */
const STARVED_HELD_SHARE = 0.5;
const STARVED_RUN_SHARE = 0.1;

export function workerFile(): string {
  // src/pool/ingest-pool.ts runs as dist/src/pool/ingest-pool.js; the worker is dist/workers/ingest.js
  const url = new URL('../../workers/ingest.js', import.meta.url);
  const file = fileURLToPath(url);
  if (existsSync(file)) return file;
  // under vitest the source tree runs directly; the compiled worker is in dist/
  return fileURLToPath(new URL('../../dist/workers/ingest.js', import.meta.url));
}

export interface IngestPoolOptions {
  config: Readonly<Config>;
  store: StoreBuffers;
  reader: StoreReader;
  faultInjection?: boolean;
  /**
   * the workers kept at start and after a recycle start their thread on their first task (the
   * daemon: it idles far more than it ingests); a worker added under load starts at once
   */
  lazyWorkers?: boolean;
}

/** why a recycle is not due yet (IngestPool.recycleWaitsFor); `fresh`: nothing ran since start or the last recycle */
export type RecycleWait = 'disabled' | 'fresh' | 'worker_starting' | 'warming_up' | 'recent_task' | 'dispatcher_busy' | 'arena_in_use' | 'task_in_worker';

export class IngestPool implements TaskRunner {
  readonly arena: InputArena;
  readonly slots: SlotView;
  readonly slotAlloc: SlotAllocator;
  readonly dispatcher: Dispatcher;
  /** the workers that take tasks, oldest first (routing prefers the oldest when they tie) */
  private lanes: WorkerLane[] = [];
  /** a lane added under load whose thread has not loaded yet (one at a time) */
  private starting: WorkerLane | undefined;
  /** lanes replaced by a promotion: no new task, ended once they finished what they hold */
  private draining: WorkerLane[] = [];
  /** lanes removed and not yet terminated; close() waits for them */
  private readonly leaving = new Set<Promise<void>>();
  /** replaced on a recycle: the workers started after it get the fresh arena */
  private laneOptions: LaneOptions;
  private nextLaneId = 0;
  private readonly policy: ScalePolicy;
  /** the scale check: every scale_check_ms while there is work, slower or stopped when there is none */
  private readonly scaleCadence: Cadence;
  /** the watches of ingest, the scale check first: woken together by the first task after a quiet spell */
  private readonly watchers = new Map<string, Cadence>();
  private lastSample = { at: performance.now(), backlogMs: 0, busyMs: 0, shed: 0 };
  /** batches the edges refused as overloaded, ever (noteShed); sampled like the busy time */
  private shedTotal = 0;
  /** busy time of lanes already removed, so the pool's total never goes back */
  private busyOfRemovedMs = 0;
  private waitOfRemovedMs = 0;
  readonly maxThreads: number;
  readonly minThreads: number;
  /** workers added under load, and removed after idling */
  grows = 0;
  shrinks = 0;
  /** times the workers and the arena were replaced after idling */
  recycles = 0;
  /** SCHED_IDLE workers replaced by normal ones because they did not keep up (pool.worker_policy) */
  promotions = 0;
  /** why the workers kept when quiet run the normal policy after all (the addon's refusal, once) */
  idleRefused: string | undefined;
  /** full collections run to give a replaced arena back (one per recycle when the first suffices) */
  arenaReleaseGcs = 0;
  /** collections run after a recycle because main's young generation was still grown (youngSettle) */
  youngSettleGcs = 0;
  /** malloc_trim calls after shrinks and recycles, the resident bytes they gave back, the last one's time (malloc-trim.ts) */
  mallocTrims = 0;
  mallocTrimReleasedBytes = 0;
  mallocTrimLastMs = 0;
  /** tasks handed out since the workers there are now started: a fresh pool is not recycled */
  private tasksSinceFresh = 0;
  /** performance.now() of the last task handed out or settled */
  private lastTaskAt = performance.now();
  private readonly recycleAfterMs: number;
  private readonly shedBytes: number;
  private closed = false;
  private warming = false;
  crashes = 0;
  /** secrets redacted per class by all workers (counts, never values) */
  // keyed by rule names the user chooses ("constructor", "__proto__"): no prototype to collide with
  readonly redacted: Record<string, number> = Object.create(null) as Record<string, number>;
  redactionFailed = 0;
  /** alerts the workers raised but could not publish: a drop /health must show */
  alertsUnpublished = 0;
  /** the rule set in force, shared with MCP egress and health */
  readonly redaction: LiveRedaction;
  /** workers publish alerts here; main reads them (AlertHub) */
  readonly alertRing = allocateAlertRing();
  /** what the workers' detectors share; main only reads its counters */
  readonly detectBuffers = allocateDetectState();
  /** quiet producers' frames, taken by the first worker between items (undefined: off) */
  readonly express: ExpressPoster | undefined;

  constructor(private readonly o: IngestPoolOptions) {
    const p = o.config.pool;
    this.redaction = new LiveRedaction({ rules: o.config.redaction.rules.map((r) => ({ ...r })), allowlist: [...o.config.redaction.allowlist] });
    this.arena = new InputArena(p.input_bytes);
    const slotCount = Math.max(1024, p.threads * p.concurrent_tasks_per_worker * p.max_items_per_task * 8);
    const slotBuf = allocateSlots(slotCount);
    this.slots = new SlotView(slotBuf);
    this.slotAlloc = new SlotAllocator(this.slots);
    this.shedBytes = p.shed_queue_bytes;
    this.express = p.express_entries > 0 ? new ExpressPoster(allocateExpress(p.express_entries)) : undefined;
    this.recycleAfterMs = p.recycle_after_idle_ms;
    const init: WorkerInit = {
      store: o.store,
      arena: this.arena.buffer,
      slots: slotBuf,
      limits: {
        maxDepth: o.config.limits.max_depth,
        maxElements: o.config.limits.max_elements,
        maxEventsPerBatch: o.config.limits.max_events_per_batch,
        maxErrorsPerAck: o.config.limits.max_errors_per_ack,
        maxFrame: o.config.limits.max_frame,
      },
      redaction: { rules: o.config.redaction.rules.map((r) => ({ ...r })), allowlist: [...o.config.redaction.allowlist] },
      faultInjection: o.faultInjection ?? false,
      chaos: new SharedArrayBuffer(16),
      alerts: this.alertRing,
      detect: this.detectBuffers,
      ...(this.express ? { express: this.express.buffer } : {}),
      nice: p.worker_nice,
    };
    this.laneOptions = {
      filename: workerFile(),
      workerData: init,
      concurrentTasks: p.concurrent_tasks_per_worker,
      youngGenerationMb: p.worker_young_generation_mb,
      closeTimeoutMs: p.shutdown_drain_ms,
      onError: (err: unknown) => log.error('ingest pool error', { error: String(err) }),
      onPriority: (pr: ThreadPriority) => this.priorityReported(pr),
    };
    this.maxThreads = p.threads;
    this.minThreads = Math.min(p.min_threads, p.threads);
    // a lane made now is ready at once: piscina holds its first tasks until the thread has loaded,
    // and nothing is waiting before the port opens
    this.lanes = this.idleLanes();
    this.dispatcher = new Dispatcher(this, this.slots, {
      maxItems: p.max_items_per_task,
      maxBytes: p.max_bytes_per_task,
      maxInflight: this.minThreads * p.concurrent_tasks_per_worker,
      workers: this.minThreads,
      latencyBytes: p.latency_bound_bytes,
      sparseBytes: p.sparse_group_bytes,
    });
    this.policy = new ScalePolicy({ min: this.minThreads, max: this.maxThreads, growAfterMs: p.grow_after_ms, shrinkAfterMs: p.shrink_after_ms });
    this.scaleCadence = new Cadence(() => this.scale(), p.scale_check_ms);
    this.watchers.set('scale', this.scaleCadence);
  }

  /**
   * A cadence that watches what ingest does (src/app.ts: the threshold alerts) and may stop when
   * it is quiet: woken by every task, a shed and a producer's hello, like the scale check.
   */
  watch(name: string, c: Cadence): void {
    this.watchers.set(name, c);
  }

  /** each watch's pending delay in ms, null when stopped (/health: an idle daemon shows all null) */
  checks(): Record<string, number | null> {
    const out: Record<string, number | null> = {};
    for (const [name, c] of this.watchers) out[`${name}_ms`] = c.running ? c.delayMs : null;
    return out;
  }

  /** nothing queued, held by a worker or starting: what a quiet spell looks like from here */
  get quiet(): boolean {
    return this.dispatcher.idle && !this.starting && !this.warming && this.draining.length === 0 && this.lanes.every((l) => l.inflight === 0);
  }

  private active(): void {
    for (const c of this.watchers.values()) c.wake();
  }

  /** ingest workers taking tasks now */
  get threads(): number {
    return this.lanes.length;
  }

  /** a worker being added (its thread loading) */
  get startingThreads(): number {
    return this.starting ? 1 : 0;
  }

  /** each worker taking tasks, oldest first: tasks handed to it so far, held now, thread being replaced */
  workerStats(): Array<{ id: number; tasks: number; inflight: number; recovering: boolean; policy: 'idle' | 'normal' }> {
    return this.lanes.map((l) => ({ id: l.id, tasks: l.tasks, inflight: l.inflight, recovering: l.recovering, policy: l.lowered ? 'idle' : 'normal' }));
  }

  /** replaced workers still finishing what they held */
  get drainingThreads(): number {
    return this.draining.length;
  }

  /** piscina's utilization, averaged over the workers there are */
  get utilization(): number {
    if (this.lanes.length === 0) return 0;
    let sum = 0;
    for (const l of this.lanes) sum += l.utilization;
    return sum / this.lanes.length;
  }

  /**
   * The workers' priority for /health: the configured offset, each present worker's thread id and
   * nice as it reported them, and why a worker could not be lowered (not Linux).
   */
  get workerPriority(): { nice_offset: number; threads: Array<{ tid: number; nice: number }>; unavailable?: string } {
    const threads: Array<{ tid: number; nice: number }> = [];
    let unavailable: string | undefined;
    for (const l of this.lanes) {
      const pr = l.priority;
      if (!pr) continue;
      if ('error' in pr) unavailable = pr.error;
      else threads.push({ tid: pr.tid, nice: pr.nice });
    }
    return { nice_offset: this.o.config.pool.worker_nice, threads, ...(unavailable ? { unavailable } : {}) };
  }

  /**
   * Said once: a worker left at main's priority is a slower read tail, not a fault. Where threads
   * have no priority of their own (not Linux) that is the platform, said quietly; a refusal on
   * Linux is a warning.
   */
  private priorityReported(pr: ThreadPriority): void {
    if ('error' in pr) {
      if (this.priorityWarned || this.o.config.pool.worker_nice === 0) return;
      this.priorityWarned = true;
      (pr.unsupported ? log.debug : log.warn)('ingest workers keep main\'s CPU priority (pool.worker_nice not applied)', { reason: pr.error });
    } else if (pr.capped) {
      if (this.priorityWarned) return;
      this.priorityWarned = true;
      log.info('ingest workers run at the lowest CPU priority already (pool.worker_nice capped at 19)', { nice: pr.nice });
    }
  }

  private priorityWarned = false;

  /** Admission control: refuse new work (nack/503) before the workers saturate. */
  overloaded(): boolean {
    // Bytes bound memory; the wait bounds latency: a batch that would queue longer than this is
    // refused (nack + retry_after_ms) rather than absorbed into seconds of delay.
    return this.dispatcher.pendingBytes > this.shedBytes || this.arena.unavailable > this.arena.capacity * 0.75 || this.dispatcher.oldestQueuedMs > this.o.config.pool.max_queue_delay_ms;
  }

  async run(items: TaskItem[], recvTime: number): Promise<ItemOutcome[]> {
    const live = this.redaction;
    const redaction = live.version > 0 ? { version: live.version, rules: live.rules, allowlist: live.allowlist } : undefined;
    this.tasksSinceFresh++;
    this.lastTaskAt = performance.now();
    this.active();
    let r: Awaited<ReturnType<WorkerLane['run']>>;
    const lane = this.route();
    try {
      r = await lane.run({ kind: 'ingest', items, recvTime, ...(redaction ? { redaction } : {}) });
    } finally {
      this.lastTaskAt = performance.now();
      if (this.draining.length) this.endDrained();
    }
    if (lane.idleCandidate && !lane.lowered && !this.warming) this.lower(lane);
    if (r.kind !== 'ingest') throw new Error(`unexpected worker result kind ${r.kind}`);
    if (r.redacted) for (const [cls, n] of Object.entries(r.redacted)) this.redacted[cls] = (this.redacted[cls] ?? 0) + n;
    if (r.redactionFailed) this.redactionFailed += r.redactionFailed;
    if (r.alertsUnpublished) this.alertsUnpublished += r.alertsUnpublished;
    return r.results;
  }

  onTaskFailure(err: unknown): void {
    this.crashes++;
    log.warn('ingest worker failed a task; retrying its items one by one', { error: String(err) });
    // A worker that died holding the store's commit lock would stall every other writer.
    const live = new Set<number>();
    for (const l of [...this.lanes, ...this.draining]) for (const id of l.threadIds()) live.add(id);
    if (this.starting) for (const id of this.starting.threadIds()) live.add(id);
    this.o.reader.releaseLockIfHolderDead(live);
    // and owners waiting for a frame it took from the express board go by the item slot instead
    this.express?.orphanDeadTakers(live);
  }

  /**
   * The worker for the next task: the least busy ready one, the oldest when they tie, so a
   * trickle stays on the first worker, and not one whose thread is being replaced after a crash
   * while another can take it. The dispatcher never has more tasks out than the ready
   * workers can hold, so the pick always has room.
   */
  private route(): WorkerLane {
    let best = this.lanes[0];
    if (!best) throw new Error('ingest pool has no worker');
    // a recovering lane counts as full: it gets work only when every other one is full too
    const full = this.o.config.pool.concurrent_tasks_per_worker;
    const load = (l: WorkerLane): number => l.inflight + (l.recovering ? full : 0);
    let least = load(best);
    for (const l of this.lanes) {
      const n = load(l);
      if (n < least) {
        best = l;
        least = n;
      }
    }
    return best;
  }

  /**
   * The lane's thread to SCHED_IDLE, after a real task and outside warm-up (a worker warms up at
   * the normal policy: 200 batches on a starved thread would hold the port's opening). Refused
   * once, never tried again: the workers then keep the normal policy and /health says why.
   */
  private lower(lane: WorkerLane): void {
    const tid = lane.tid;
    if (tid === undefined || this.idleRefused !== undefined || this.closed || !this.lanes.includes(lane)) return;
    const r = idleThread(tid);
    if (r === 0) {
      lane.loweredTid = tid;
      const sched = threadSchedStat(tid);
      lane.sched = sched ? { runMs: sched.runMs, busyMs: lane.busyTotalMs(performance.now()) } : undefined;
      return;
    }
    this.idleRefused = typeof r === 'object' ? r.reason : `sched_setscheduler refused (errno ${r})`;
    log.info('ingest workers keep the normal CPU policy (pool.worker_policy idle not applied)', { reason: this.idleRefused });
  }

  /**
   * Whether a lowered worker was starved of a core since the last look: it held work for most of
   * the sample and its thread ran for a small part of that (STARVED_*). Undefined where the
   * kernel keeps no record of a thread's time on a core: then work that keeps waiting replaces it.
   * Its time waiting on a run queue would say it more directly, but the kernel adds that up only
   * when the thread gets a core: a starved thread shows none for hundreds of ms, then all at once.
   */
  private starvedSince(now: number, ms: number): boolean | undefined {
    let starved: boolean | undefined;
    for (const l of this.lanes) {
      if (!l.lowered) continue;
      const sched = threadSchedStat(l.loweredTid!);
      const busy = l.busyTotalMs(now);
      const last = l.sched;
      l.sched = sched ? { runMs: sched.runMs, busyMs: busy } : undefined;
      if (!sched || !last) continue;
      const held = busy - last.busyMs;
      starved ||= held >= ms * STARVED_HELD_SHARE && sched.runMs - last.runMs <= held * STARVED_RUN_SHARE;
    }
    return starved;
  }

  /** Ends the replaced lanes that finished what they held. */
  private endDrained(): void {
    const now = performance.now();
    this.draining = this.draining.filter((l) => {
      if (l.inflight > 0) return true;
      void this.retire(l, now).then(() => setTimeout(() => this.closed || this.trimAllocator(), 0).unref());
      return false;
    });
  }

  /** Runs synthetic batches through every worker present at start so the JIT is warm before traffic arrives. */
  async warmup(): Promise<{ batches: number; ms: number; workers: number }> {
    const n = this.o.config.pool.warmup_batches;
    if (n === 0) return { batches: 0, ms: 0, workers: this.lanes.length };
    const t0 = performance.now();
    const batches = await this.warmLanes(this.lanes);
    return { batches, ms: Math.round(performance.now() - t0), workers: this.lanes.length };
  }

  private async warmLanes(lanes: WorkerLane[]): Promise<number> {
    const n = this.o.config.pool.warmup_batches;
    if (n === 0) return 0;
    const per = Math.max(1, Math.ceil(n / 4));
    const jobs: Promise<unknown>[] = [];
    // warm-up tasks queue behind each other on purpose: that is no reason to grow, nor to recycle
    this.warming = true;
    try {
      for (const lane of lanes) for (let i = 0; i < 4; i++) jobs.push(lane.run({ kind: 'warmup', batches: per }));
      await Promise.all(jobs);
    } finally {
      this.warming = false;
      this.lastTaskAt = performance.now();
      this.lastSample = this.sampleTotals(performance.now());
    }
    return per * jobs.length;
  }

  /**
   * A producer said hello: workers whose thread has not started yet (the daemon's, at start and
   * after a recycle) start it and warm up now, before the producer's first batch. Without it the
   * daemon's worker would run a trickle of batches on a cold JIT for minutes (push p50 ~1.5×);
   * with it, an idle daemon still holds no warmed-up worker (the recycle takes it back).
   */
  wake(): void {
    if (this.closed || this.warming) return;
    const cold = this.lanes.filter((l) => l.tasks === 0);
    if (cold.length === 0) return;
    this.tasksSinceFresh++;
    // warmed workers are recycled after idling like any others: the scale check must see to it
    this.active();
    void this.warmLanes(cold).catch((err: unknown) => log.warn('ingest worker warm-up failed', { error: String(err) }));
  }

  /**
   * One sample of the dispatcher's backlog and the workers' busy time; grow or shrink by one.
   * Returns when to look again (the Cadence's contract): at scale_check_ms while anything ran,
   * waited or was refused in the sample; slower while a quiet pool may still shrink or recycle;
   * not at all once neither can happen before the next task.
   */
  private scale(): number | null {
    const fast = this.scaleCadence.fastMs;
    if (this.closed) return null;
    if (this.warming) return fast;
    const now = performance.now();
    if (this.recycleDue(now)) {
      this.recycle(now);
      return this.quietDelay(now);
    }
    // Work waits in two places: in the dispatcher (every task slot taken, or the latency bound),
    // and inside a worker, behind the task it is running (routing gives a worker a second task
    // only when every worker has one). Per-session order keeps one session's frames to one task at
    // a time, so a few busy sessions fill the workers' second slots long before the dispatcher
    // queues anything.
    const cur = this.sampleTotals(now);
    const last = this.lastSample;
    this.lastSample = cur;
    const ms = now - last.at;
    const { backlogMs, busyMs } = cur;
    const lowered = this.lanes.some((l) => l.lowered);
    const decision = this.policy.decide(
      { ms, backlogMs: Math.min(ms, Math.max(0, backlogMs - last.backlogMs)), busyMs: Math.max(0, busyMs - last.busyMs), shed: cur.shed - last.shed },
      this.lanes.length,
      this.starting !== undefined,
      lowered ? { lowered, starved: this.starvedSince(now, ms) } : undefined,
    );
    if (decision === 'grow') this.grow();
    else if (decision === 'shrink') this.shrink();
    else if (decision === 'promote') this.promote();
    if (this.draining.length) this.endDrained();
    const still = busyMs === last.busyMs && backlogMs === last.backlogMs && cur.shed === last.shed;
    return still && this.quiet ? this.quietDelay(now) : fast;
  }

  /**
   * The next look for a pool in which nothing ran: once a second while a worker above the minimum
   * may go (the shrink window counts time, not samples); when only the recycle is left, at its due
   * time; never when neither is left (the next task wakes the check).
   */
  private quietDelay(now: number): number | null {
    const fast = this.scaleCadence.fastMs;
    if (this.lanes.length > this.minThreads) return Math.max(fast, QUIET_CHECK_MS);
    if (this.recycleAfterMs > 0 && this.tasksSinceFresh > 0) return Math.max(fast, this.lastTaskAt + this.recycleAfterMs - now);
    return null;
  }

  /**
   * The edges call this for each batch they refuse (or hand to a worker to refuse) as overloaded:
   * the scale policy grows at once on it (ScalePolicy's header).
   */
  noteShed(batches = 1): void {
    this.shedTotal += batches;
    this.active();
  }

  private sampleTotals(now: number): { at: number; backlogMs: number; busyMs: number; shed: number } {
    let backlogMs = this.dispatcher.backlogTotalMs(now) + this.waitOfRemovedMs;
    let busyMs = this.busyOfRemovedMs;
    for (const l of [...this.lanes, ...this.draining]) {
      busyMs += l.busyTotalMs(now);
      backlogMs += l.waitTotalMs(now);
    }
    return { at: now, backlogMs, busyMs, shed: this.shedTotal };
  }

  /** Idle long enough after work, and nothing anywhere names the arena or waits for a worker. */
  private recycleDue(now: number): boolean {
    return this.recycleWaitsFor(now).length === 0;
  }

  /**
   * What keeps the workers and arena from being recycled now (none: it is due). /health says it,
   * so a daemon that stays large while idle says why instead of being guessed at.
   */
  recycleWaitsFor(now = performance.now()): RecycleWait[] {
    if (this.recycleAfterMs === 0) return ['disabled'];
    const waits: RecycleWait[] = [];
    if (this.tasksSinceFresh === 0) waits.push('fresh');
    if (this.starting) waits.push('worker_starting');
    if (this.warming) waits.push('warming_up');
    if (now - this.lastTaskAt < this.recycleAfterMs) waits.push('recent_task');
    if (!this.dispatcher.idle) waits.push('dispatcher_busy');
    if (!this.arena.empty) waits.push('arena_in_use');
    if (this.lanes.some((l) => l.inflight > 0) || this.draining.length > 0) waits.push('task_in_worker');
    return waits;
  }

  /**
   * Fresh arena, fresh workers, old ones terminated: in one synchronous step (see the header).
   * The old workers hold no task (recycleDue), so no lock, no express entry and no slot.
   */
  private recycle(now: number): void {
    const oldArena = new WeakRef(this.arena.buffer);
    if (!this.arena.renew()) return;
    this.laneOptions = { ...this.laneOptions, workerData: { ...this.laneOptions.workerData, arena: this.arena.buffer } };
    const old = this.lanes;
    this.lanes = this.idleLanes();
    const gone = old.map((lane) => this.retire(lane, now));
    // The old arena's pages go back only when main's last reference to it is collected too, and
    // an idle main may not collect for hours: full collections once the old threads are gone.
    void Promise.all(gone).then(() => this.releaseArena(oldArena, 0));
    this.tasksSinceFresh = 0;
    this.recycles++;
    this.resizeDispatcher();
    log.debug('ingest pool recycled its workers and input arena after idling', { workers: this.lanes.length, retired: old.length, arena_generation: this.arena.generation });
  }

  /**
   * Collects until the retired arena is gone, checked (a WeakRef), a few times at most. Each
   * collection runs from a timer of its own, not from the microtasks that follow a worker's
   * 'exit': while those run, the native frame that delivered the event still holds that Worker,
   * and through its listeners the old piscina, its workerData and the arena. Seen without the
   * check: 2 runs in ~12 at `--threads 4` kept the whole old arena (+35 MB over ring data,
   * `process.memoryUsage().arrayBuffers` 64 MB over the rest) until some later collection.
   */
  private releaseArena(old: WeakRef<SharedArrayBuffer>, attempt: number): void {
    const t = setTimeout(() => {
      if (this.closed) return;
      collectGarbage();
      this.arenaReleaseGcs++;
      // deref() keeps the buffer to the end of this task only: the next attempt is a task of its own
      if (old.deref() === undefined) {
        this.trimAllocator();
        this.youngSettle();
        return;
      }
      if (attempt + 1 < ARENA_RELEASE_ATTEMPTS) this.releaseArena(old, attempt + 1);
      else {
        log.warn('the input arena replaced by a recycle is still referenced after full collections', { gcs: ARENA_RELEASE_ATTEMPTS });
        this.trimAllocator();
      }
    }, ARENA_RELEASE_DELAY_MS * 2 ** attempt);
    t.unref();
  }

  /** Main's young generation, grown by the burst, looked at once more when V8 no longer sees the burst (YOUNG_SETTLE_MS). */
  private youngSettle(): void {
    const t = setTimeout(() => {
      if (this.closed || this.tasksSinceFresh > 0 || youngGenerationBytes() <= YOUNG_SETTLED_BYTES) return;
      collectGarbage();
      this.youngSettleGcs++;
      // a second trim, after the recycle's: this collection freed ArrayBuffer backing stores, which live in the C heap
      this.trimAllocator();
    }, YOUNG_SETTLE_MS);
    t.unref();
  }

  /**
   * The C heap's free pages back to the OS once a worker (a shrink) or the old workers (a recycle)
   * are gone: each thread that ended left its part of glibc's heaps as free chunks that free()
   * alone never returns (malloc-trim.ts). Under a millisecond on main (0.4–0.7 ms), a few times per burst.
   */
  private trimAllocator(): void {
    const r = mallocTrim();
    if (!r) return;
    this.mallocTrims++;
    this.mallocTrimReleasedBytes += r.releasedBytes;
    this.mallocTrimLastMs = r.ms;
    log.debug('gave the C heap free pages back after workers ended', { released_mb: Math.round(r.releasedBytes / 1048576), ms: Math.round(r.ms * 10) / 10 });
  }

  /** Whether malloc_trim runs here, and if not why (/health). */
  get mallocTrimSupport(): MallocTrimSupport {
    return mallocTrimSupport();
  }

  /** The workers kept when idle (at start, after a recycle): lazy ones in the daemon; ready at once; lowered once warm (pool.worker_policy). */
  private idleLanes(): WorkerLane[] {
    const options = { ...this.laneOptions, ...(this.o.lazyWorkers ? { lazy: true } : {}), ...(this.o.config.pool.worker_policy === 'idle' ? { idle: true } : {}) };
    return Array.from({ length: this.minThreads }, () => new WorkerLane(this.nextLaneId++, options, true));
  }

  /** Terminates a lane taken out of routing, keeping its busy time in the totals; close() waits for it. */
  private retire(lane: WorkerLane, now: number): Promise<void> {
    this.busyOfRemovedMs += lane.busyTotalMs(now);
    this.waitOfRemovedMs += lane.waitTotalMs(now);
    const gone = lane.destroy().catch((err: unknown) => log.warn('ingest worker did not stop cleanly', { error: String(err) }));
    this.leaving.add(gone);
    void gone.then(() => this.leaving.delete(gone));
    return gone;
  }

  /** Adds a worker; it takes tasks once its thread answered a no-op (it has loaded). */
  private grow(): void {
    this.startLane((lane, startMs) => {
      this.lanes.push(lane);
      this.grows++;
      this.resizeDispatcher();
      log.debug('ingest pool grew', { workers: this.lanes.length, max: this.maxThreads, start_ms: startMs, queued_bytes: this.dispatcher.pendingBytes });
    });
  }

  /**
   * Replaces the oldest lowered worker by one at the normal policy, in its place once that one has
   * loaded: the lowered one takes no new task and ends when it has finished those it holds.
   */
  private promote(): void {
    const old = this.lanes.find((l) => l.lowered);
    if (!old) return;
    this.startLane((lane, startMs) => {
      const i = this.lanes.indexOf(old);
      // a recycle or a shrink took it meanwhile: the pool has what it had without it
      if (i < 0) return void this.retire(lane, performance.now());
      this.lanes[i] = lane;
      this.draining.push(old);
      this.promotions++;
      this.endDrained();
      log.info('an ingest worker at SCHED_IDLE did not keep up: replaced by one at the normal policy until the next recycle', { start_ms: startMs, still_held: old.inflight, queued_bytes: this.dispatcher.pendingBytes });
    });
  }

  /** Starts a worker under load (one at a time); `ready` gets it once its thread answered a no-op (it has loaded). */
  private startLane(ready: (lane: WorkerLane, startMs: number) => void): void {
    const lane = new WorkerLane(this.nextLaneId++, this.laneOptions, false);
    this.starting = lane;
    const t0 = performance.now();
    lane.run({ kind: 'warmup', batches: 0 }).then(
      () => {
        this.starting = undefined;
        if (this.closed) {
          void lane.destroy();
          return;
        }
        lane.ready = true;
        ready(lane, Math.round(performance.now() - t0));
      },
      (err: unknown) => {
        // a thread that cannot even load is not retried here: the next sustained backlog tries again
        this.starting = undefined;
        if (this.closed) return;
        log.warn('ingest worker added under load failed to start', { error: String(err) });
        void lane.destroy();
      },
    );
  }

  /** Removes the newest worker holding no task (it holds no express entry and no lock either). */
  private shrink(): void {
    for (let i = this.lanes.length - 1; i >= this.minThreads; i--) {
      const lane = this.lanes[i]!;
      if (lane.inflight > 0) continue;
      this.lanes.splice(i, 1);
      this.shrinks++;
      this.resizeDispatcher();
      // the thread's part of the C heap goes back too, also when ingest never stops long enough for a recycle
      void this.retire(lane, performance.now()).then(() => setTimeout(() => this.closed || this.trimAllocator(), 0).unref());
      log.debug('ingest pool shrank', { workers: this.lanes.length, min: this.minThreads });
      return;
    }
  }

  private resizeDispatcher(): void {
    const n = this.lanes.length;
    this.dispatcher.resize(n, n * this.o.config.pool.concurrent_tasks_per_worker);
  }

  async close(drainMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.scaleCadence.close();
    await Promise.race([this.dispatcher.whenIdle(), new Promise((r) => setTimeout(r, drainMs).unref())]);
    const lanes = this.lanes;
    this.lanes = [];
    const draining = this.draining;
    this.draining = [];
    await Promise.all([...lanes.map((l) => l.destroy()), ...draining.map((l) => l.destroy()), ...(this.starting ? [this.starting.destroy()] : []), ...this.leaving]);
  }
}
