/**
 * The piscina wrapper: a fixed-size pool (minThreads === maxThreads) of ingest workers, the
 * shared input arena and item slots they read, the micro-batching dispatcher in front of it,
 * warm-up before the port opens, crash recovery, and close.
 */
import { allocateAlertRing } from '../shm/alert-ring.js';
import { allocateDetectState } from '../shm/detect-state.js';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import type { Config } from '../config.js';
import { log } from '../log.js';
import type { StoreBuffers, StoreReader } from '../shm/index.js';
import { LiveRedaction } from '../domain/redaction/index.js';
import { Dispatcher, type TaskRunner } from './dispatcher.js';
import { allocateExpress, ExpressPoster } from './express.js';
import { InputArena } from './input-arena.js';
import { allocateSlots, SlotAllocator, SlotView } from './item-slots.js';
import type { IngestResult, ItemOutcome, TaskItem, WarmupResult, WorkerInit, WorkerTask } from './messages.js';

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
}

export class IngestPool implements TaskRunner {
  readonly arena: InputArena;
  readonly slots: SlotView;
  readonly slotAlloc: SlotAllocator;
  readonly dispatcher: Dispatcher;
  private readonly piscina: Piscina<WorkerTask, IngestResult | WarmupResult>;
  private readonly shedBytes: number;
  private closed = false;
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
    };
    this.piscina = new Piscina({
      filename: workerFile(),
      minThreads: p.threads,
      maxThreads: p.threads,
      concurrentTasksPerWorker: p.concurrent_tasks_per_worker,
      idleTimeout: Number.MAX_SAFE_INTEGER,
      // the dispatcher bounds what enters the pool; piscina's own queue stays short
      maxQueue: Number.MAX_SAFE_INTEGER,
      workerData: init,
      // A worker's objects die young (one batch); V8's default young generation is sized for
      // long-lived heaps and cost ~30 MB of RSS per worker for nothing. Measured: 436 → 406 MB
      // peak with full rings and 2 workers, throughput unchanged.
      resourceLimits: { maxYoungGenerationSizeMb: p.worker_young_generation_mb },
      closeTimeout: p.shutdown_drain_ms,
    });
    this.piscina.on('error', (err: unknown) => log.error('ingest pool error', { error: String(err) }));
    this.dispatcher = new Dispatcher(this, this.slots, {
      maxItems: p.max_items_per_task,
      maxBytes: p.max_bytes_per_task,
      maxInflight: p.threads * p.concurrent_tasks_per_worker,
      workers: p.threads,
      latencyBytes: p.latency_bound_bytes,
      sparseBytes: p.sparse_group_bytes,
    });
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  get utilization(): number {
    return this.piscina.utilization;
  }

  /** Admission control: refuse new work (nack/503) before the workers saturate. */
  overloaded(): boolean {
    // Bytes bound memory; the wait bounds latency: a batch that would queue longer than this is
    // refused (nack + retry_after_ms) rather than absorbed into seconds of delay.
    return this.dispatcher.pendingBytes > this.shedBytes || this.arena.used > this.arena.capacity * 0.75 || this.dispatcher.oldestQueuedMs > this.o.config.pool.max_queue_delay_ms;
  }

  async run(items: TaskItem[], recvTime: number): Promise<ItemOutcome[]> {
    const live = this.redaction;
    const redaction = live.version > 0 ? { version: live.version, rules: live.rules, allowlist: live.allowlist } : undefined;
    const r = await this.piscina.run({ kind: 'ingest', items, recvTime, ...(redaction ? { redaction } : {}) });
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
    const live = new Set(this.piscina.threads.map((w) => w.threadId));
    this.o.reader.releaseLockIfHolderDead(live);
    // and owners waiting for a frame it took from the express board go by the item slot instead
    this.express?.orphanDeadTakers(live);
  }

  /** Runs synthetic batches through every worker so the JIT is warm before traffic arrives. */
  async warmup(): Promise<{ batches: number; ms: number }> {
    const n = this.o.config.pool.warmup_batches;
    if (n === 0) return { batches: 0, ms: 0 };
    const t0 = performance.now();
    const per = Math.max(1, Math.ceil(n / 4));
    const jobs: Promise<unknown>[] = [];
    for (let i = 0; i < this.o.config.pool.threads * 4; i++) jobs.push(this.piscina.run({ kind: 'warmup', batches: per }));
    await Promise.all(jobs);
    return { batches: per * jobs.length, ms: Math.round(performance.now() - t0) };
  }

  async close(drainMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.race([this.dispatcher.whenIdle(), new Promise((r) => setTimeout(r, drainMs).unref())]);
    await this.piscina.destroy();
  }
}
