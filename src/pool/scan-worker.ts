/**
 * Main's side of the scan worker: sends folded reads to one worker thread that maps the same
 * rings, and hands back the answers. Bounded (queries waiting, time per query); a worker that
 * crashes or hangs fails the queries it held with a stable code and is replaced on the next one,
 * so one bad read never takes observe down for everyone.
 *
 * The thread starts with the first read that needs it, not with the app: it costs ~18 MB of RSS,
 * which an idle daemon, or an agent that never folds a read, should not pay. That first read
 * waits for the thread to load (tens of ms) once.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { gasolineError } from '../errors.js';
import { ASKED, TAKEN } from './scan-reads.js';
import { log } from '../log.js';
import { type FoldAnswer, type FoldQuery, type PackedFold, unpackFold } from '../query/index.js';
import type { StoreBuffers } from '../shm/index.js';

export interface ScanWorkerInit {
  store: StoreBuffers;
  /** two Int32 counters: reads main posted and reads the thread began (scan-reads.ts) */
  reads: SharedArrayBuffer;
  faultInjection: boolean;
  /** fault injection only: the thread waits this long before it says it is ready (a slow start) */
  startDelayMs?: number;
}

export type ScanRequest = { t: 'fold'; id: number; q: FoldQuery } | { t: 'crash' } | { t: 'hang' };
/** `ready`: once, when its modules are loaded and its indexes built — the reads' deadlines start then */
/** the answer travels packed (src/query/fold-wire.ts): a clone of its groups cost main ~1 ms a call */
export type ScanReply = { id: number; ok: true; p: PackedFold } | { id: number; ok: false; error: string } | { ready: true };

export interface ScanWorkerOptions {
  store: StoreBuffers;
  /** queries in the worker or waiting for it; more are refused with scan_busy */
  maxPending?: number;
  /**
   * a query not answered by then fails with scan_failed and the worker is replaced; counted from
   * when the thread says it is ready, so a start slowed by a busy machine is not taken for a stuck read
   */
  timeoutMs?: number;
  youngGenerationMb?: number;
  faultInjection?: boolean;
  /** with faultInjection: each thread starts this much slower (a start slower than any deadline, on any machine) */
  startDelayMs?: number;
}

/** how often a shape answered without the thread is sent on to it: well inside the indexes' IDLE_MS */
export const KEEP_WARM_MS = 10_000;
const MAX_WARMED = 64;

function scanWorkerFile(): string {
  const file = fileURLToPath(new URL('../../workers/scan.js', import.meta.url));
  if (existsSync(file)) return file;
  // under vitest the source tree runs directly; the compiled worker is in dist/
  return fileURLToPath(new URL('../../dist/workers/scan.js', import.meta.url));
}

interface Pending {
  resolve: (a: FoldAnswer) => void;
  reject: (e: Error) => void;
  /** undefined while the thread is still starting: the deadline starts when it is online */
  timer: NodeJS.Timeout | undefined;
}

export class ScanWorker {
  private worker: Worker | null = null;
  /** the thread's ScanWorkerInit.reads, new with each thread */
  private reads: Int32Array<ArrayBufferLike> = new Int32Array(2);
  private online = false;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** kept_warm: reads answered without the thread, sent on to keep its indexes (keepWarm) */
  readonly counts = { queries: 0, failed: 0, refused: 0, restarts: 0, kept_warm: 0 };
  /** per read shape (kinds, filter), when keepWarm last sent one */
  private readonly warmed = new Map<string, number>();

  constructor(private readonly o: ScanWorkerOptions) {}

  get inFlight(): number {
    return this.pending.size;
  }

  /** reads posted to the thread it has not begun yet (its background index work gives way meanwhile) */
  get unbegun(): number {
    return Atomics.load(this.reads, ASKED) - Atomics.load(this.reads, TAKEN);
  }

  /** whether the thread exists now (it starts on the first read, and again after a failure) */
  get running(): boolean {
    return this.worker !== null;
  }

  run(q: FoldQuery): Promise<FoldAnswer> {
    if (this.closed) return Promise.reject(gasolineError('shutting_down'));
    if (this.pending.size >= (this.o.maxPending ?? 32)) {
      this.counts.refused++;
      return Promise.reject(gasolineError('scan_busy', `${this.pending.size} reads are waiting for the scan worker; call again shortly`));
    }
    const w = this.spawned();
    const id = this.nextId++;
    this.counts.queries++;
    return new Promise<FoldAnswer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, timer: this.online ? this.deadline(w) : undefined });
      this.post(w, { t: 'fold', id, q });
    });
  }

  private deadline(w: Worker): NodeJS.Timeout {
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    return setTimeout(() => this.fail(w, `no answer within ${timeoutMs} ms`), timeoutMs);
  }

  /**
   * A read answered without the thread (nothing new: query/empty-fold.ts) still goes to it now and
   * then, unawaited (its answer is dropped): the first one starts the thread and makes the indexes
   * its filter reads, which then follow the rings as records arrive; later ones keep them from
   * being dropped as unused (match-index.ts IDLE_MS). Without it the first read with something to
   * fold started the thread and built its index over all that was ingested since, inside the call
   * (a fresh daemon's first loaded calls in the bench: 75–84 ms against 36–43 ms).
   */
  keepWarm(q: FoldQuery, now = performance.now()): void {
    if (this.closed) return;
    const key = `${q.kinds.join(',')}|${q.filter.what ?? ''}`;
    const last = this.warmed.get(key);
    if (last !== undefined && now - last < KEEP_WARM_MS) return;
    if (this.warmed.size >= MAX_WARMED) this.warmed.clear();
    this.warmed.set(key, now);
    this.counts.kept_warm++;
    // id 0 is never pending (ids start at 1): the answer is not waited for
    this.post(this.spawned(), { t: 'fold', id: 0, q });
  }

  /** A read for the thread, counted first so that its background work gives way (ScanWorkerInit.reads). */
  private post(w: Worker, r: ScanRequest & { t: 'fold' }): void {
    Atomics.add(this.reads, ASKED, 1);
    w.postMessage(r);
  }

  /** Fault injection: the worker exits at once (crash), or spins forever (hang), whatever it was reading. */
  faultForTest(t: 'crash' | 'hang'): void {
    if (!this.o.faultInjection) throw new Error('fault injection is off');
    this.spawned().postMessage({ t } satisfies ScanRequest);
  }

  /** Idempotent: fails what is waiting and stops the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.rejectAll(gasolineError('shutting_down'));
    if (w) await w.terminate();
  }

  private spawned(): Worker {
    if (this.worker) return this.worker;
    const reads = new SharedArrayBuffer(8);
    this.reads = new Int32Array(reads);
    const w = new Worker(scanWorkerFile(), {
      workerData: { store: this.o.store, reads, faultInjection: this.o.faultInjection ?? false, ...(this.o.faultInjection && this.o.startDelayMs ? { startDelayMs: this.o.startDelayMs } : {}) } satisfies ScanWorkerInit,
      // a worker's stdout would otherwise be piped into ours, which belongs to MCP
      stdout: true,
      resourceLimits: { maxYoungGenerationSizeMb: this.o.youngGenerationMb ?? 16 },
    });
    w.stdout.pipe(process.stderr);
    this.online = false;
    w.on('message', (m: ScanReply) => {
      if ('ready' in m) {
        if (this.worker !== w) return;
        this.online = true;
        // what was asked while it started: their deadlines start now
        for (const p of this.pending.values()) p.timer ??= this.deadline(w);
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(unpackFold(m.p));
      else {
        this.counts.failed++;
        p.reject(gasolineError('scan_failed', `the read failed: ${m.error}`));
      }
    });
    w.on('error', (e) => this.fail(w, e.message));
    w.on('exit', (code) => this.fail(w, `scan worker exited (code ${code})`));
    this.worker = w;
    return w;
  }

  /** The worker is gone or stuck: everything it held fails, the next query starts a new one. */
  private fail(w: Worker, why: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    if (this.closed) return;
    this.counts.restarts++;
    log.warn('scan worker replaced', { reason: why, failed_queries: this.pending.size });
    this.counts.failed += this.pending.size;
    this.rejectAll(gasolineError('scan_failed', `${why}; call again`));
    void w.terminate();
  }

  private rejectAll(e: Error): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
  }
}
