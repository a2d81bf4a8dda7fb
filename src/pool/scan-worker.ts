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
import { log } from '../log.js';
import { type FoldAnswer, type FoldQuery, type PackedFold, unpackFold } from '../query/index.js';
import type { StoreBuffers } from '../shm/index.js';

export interface ScanWorkerInit {
  store: StoreBuffers;
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
  private online = false;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  readonly counts = { queries: 0, failed: 0, refused: 0, restarts: 0 };

  constructor(private readonly o: ScanWorkerOptions) {}

  get inFlight(): number {
    return this.pending.size;
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
      w.postMessage({ t: 'fold', id, q } satisfies ScanRequest);
    });
  }

  private deadline(w: Worker): NodeJS.Timeout {
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    return setTimeout(() => this.fail(w, `no answer within ${timeoutMs} ms`), timeoutMs);
  }

  /**
   * Starts the thread now if it is not running, for a read answered without it (nothing new to
   * read: query/empty-fold.ts): the first read that has something to fold then finds it started
   * (measured: ~15 ms more for that call when the start waited for it).
   */
  warm(): void {
    if (!this.closed) this.spawned();
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
    const w = new Worker(scanWorkerFile(), {
      workerData: { store: this.o.store, faultInjection: this.o.faultInjection ?? false, ...(this.o.faultInjection && this.o.startDelayMs ? { startDelayMs: this.o.startDelayMs } : {}) } satisfies ScanWorkerInit,
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
