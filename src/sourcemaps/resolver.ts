/**
 * Main's side of source-mapped stacks. Reads never wait on the network and never parse a map here:
 * `lookup` answers synchronously from the positions already resolved; `warm` asks the source-map
 * worker for what is missing and returns at once (an error alert does this the moment it arrives);
 * `settle` does the same and waits at most `waitMs`, for a read that is about to show errors.
 * The worker starts with the first frame worth resolving (an idle daemon, or a page without
 * http(s) scripts, never pays its RSS) and is replaced on the next request if it dies.
 *
 * Bounds: frames asked per record (MAX_FRAMES), requests in flight (MAX_PENDING; more are dropped
 * and counted), positions kept (MAX_KNOWN, least recently used first; a resolved one for the map's
 * max age, a miss for miss_ttl), and the worker's own (map-store.ts) behind them.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import type { FrameAnswer, MapStoreLimits, MapStoreStats, Resolved } from './map-store.js';
import type { SourceMapReply, SourceMapRequest } from './messages.js';
import { refusal } from './host-guard.js';
import { fetchable, frameKey, recordFrames, type Frame, type FrameFields } from './stack.js';

export interface SourceMapsOptions {
  enabled: boolean;
  limits: MapStoreLimits;
  /** how long `settle` waits by default */
  waitMs: number;
  /** the worker's heap cap: a map too big to parse kills the worker, never the daemon */
  heapMb?: number;
}

/** One frame of a record, with its original position when the map gave one. */
export interface OriginalFrame {
  frame: Frame;
  to?: Resolved;
}

export interface ResolvedStack {
  frames: OriginalFrame[];
  /** the frame to show first: the first of the app's own that resolved (library frames come after) */
  top: number;
}

/** What the tools may ask: the MCP port hands this over (src/mcp/port.ts). */
export interface StackResolver {
  readonly enabled: boolean;
  setEnabled(on: boolean): void;
  warm(rec: FrameFields): void;
  settle(recs: readonly FrameFields[], waitMs?: number): Promise<void>;
  lookup(rec: FrameFields): ResolvedStack | undefined;
  stats(): Record<string, unknown>;
}

/** the top frames are what an agent reads; deeper ones are rarely worth a map */
const MAX_FRAMES = 8;
const MAX_PENDING = 64;
const MAX_KNOWN = 4096;
/** verdicts kept, and the longest script + page URL kept (longer ones are checked every time) */
const MAX_VERDICTS = 1024;
const MAX_VERDICT_KEY = 2048;

function workerFile(): string {
  const file = fileURLToPath(new URL('../../workers/sourcemaps.js', import.meta.url));
  if (existsSync(file)) return file;
  // under vitest the source tree runs directly; the compiled worker is in dist/
  return fileURLToPath(new URL('../../dist/workers/sourcemaps.js', import.meta.url));
}

interface Known {
  to?: Resolved;
  until: number;
}

export class SourceMaps implements StackResolver {
  private worker: Worker | null = null;
  private on: boolean;
  private closed = false;
  private nextId = 1;
  private readonly known = new Map<string, Known>();
  /** the host guard's verdicts, by script and page URL (see refused) */
  private readonly verdicts = new Map<string, boolean>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly pending = new Map<number, { done: () => void; timer: NodeJS.Timeout }>();
  private latest: MapStoreStats | undefined;
  /** refused_here: frames the host guard refuses, never sent to the worker nor waited for */
  private readonly counts = { requests: 0, dropped: 0, timed_out: 0, restarts: 0, refused_here: 0 };

  constructor(
    private readonly o: SourceMapsOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.on = o.enabled;
  }

  get enabled(): boolean {
    return this.on;
  }

  /** Off: nothing is fetched and nothing resolved is shown; what was kept is forgotten either way. */
  setEnabled(on: boolean): void {
    this.on = on;
    this.known.clear();
    this.worker?.postMessage({ t: 'clear' } satisfies SourceMapRequest);
  }

  warm(rec: FrameFields): void {
    void this.ask(rec);
  }

  async settle(recs: readonly FrameFields[], waitMs = this.o.waitMs): Promise<void> {
    const waits = recs.map((r) => this.ask(r)).filter((w): w is Promise<void> => w !== undefined);
    if (!waits.length) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(waits), new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  lookup(rec: FrameFields): ResolvedStack | undefined {
    if (!this.on) return undefined;
    const t = this.now();
    let top = -1;
    let any = -1;
    const frames = recordFrames(rec).map((frame, i): OriginalFrame => {
      const k = this.known.get(frameKey(frame));
      const to = k && k.until > t ? k.to : undefined;
      if (!to) return { frame };
      if (any < 0) any = i;
      if (top < 0 && !to.ignored) top = i;
      return { frame, to };
    });
    if (any < 0) return undefined;
    return { frames, top: top < 0 ? any : top };
  }

  /**
   * The host guard's answer for a frame, kept: a stack names the same few scripts again and again,
   * and a page on a public or other origin has every frame of every record an observe shows
   * refused — two URL parses each, up to 8 frames of up to 100 records and alerts a call.
   */
  private refused(url: string, page: string | undefined): boolean {
    const key = page === undefined ? url : `${url}\n${page}`;
    let r = this.verdicts.get(key);
    if (r === undefined) {
      r = refusal(url, page) !== undefined;
      if (key.length <= MAX_VERDICT_KEY) {
        if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
        this.verdicts.set(key, r);
      }
    }
    return r;
  }

  stats(): Record<string, unknown> {
    return { enabled: this.on, worker: this.worker !== null, positions: this.known.size, in_flight: this.pending.size, ...this.counts, ...(this.latest ?? {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.done();
    }
    this.pending.clear();
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  /** What a read of `rec` would wait for (undefined: nothing), after asking for what is missing. */
  private ask(rec: FrameFields): Promise<void> | undefined {
    if (!this.on || this.closed) return undefined;
    const t = this.now();
    const waits: Promise<void>[] = [];
    const missing: Frame[] = [];
    const page = typeof rec.url === 'string' ? rec.url : undefined;
    for (const f of recordFrames(rec).filter(fetchable).slice(0, MAX_FRAMES)) {
      const key = frameKey(f);
      const k = this.known.get(key);
      if (k && k.until > t) continue;
      // The worker's first check (load.ts) would refuse it, whatever the network says: a script on
      // a public origin (a CDN, a deployed site) or on another origin than its page. Decided here,
      // so a read never waits a worker's round trip for a frame that cannot resolve (measured: the
      // alert block and observe's frames each waited one per call under the bench's errors).
      if (this.refused(f.url, page)) {
        this.counts.refused_here++;
        continue;
      }
      const flying = this.inFlight.get(key);
      if (flying) waits.push(flying);
      else if (!missing.some((m) => frameKey(m) === key)) missing.push(f);
    }
    if (missing.length) {
      if (this.pending.size >= MAX_PENDING) this.counts.dropped++;
      else {
        const p = this.request(missing, page);
        for (const f of missing) this.inFlight.set(frameKey(f), p);
        void p.then(() => {
          for (const f of missing) if (this.inFlight.get(frameKey(f)) === p) this.inFlight.delete(frameKey(f));
        });
        waits.push(p);
      }
    }
    return waits.length ? Promise.all(waits).then(() => undefined) : undefined;
  }

  /** Resolves when the worker answered, gave up, or died: never rejects. */
  private request(frames: Frame[], page: string | undefined): Promise<void> {
    const w = this.spawned();
    const id = this.nextId++;
    this.counts.requests++;
    // a script and then its map, each within the fetch timeout, after the loads queued before them
    const timeoutMs = 2 * this.o.limits.timeoutMs + 1000;
    return new Promise<void>((done) => {
      const timer = setTimeout(() => {
        this.counts.timed_out++;
        this.pending.delete(id);
        done();
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { done, timer });
      w.postMessage({ t: 'resolve', id, frames, ...(page !== undefined ? { page } : {}) } satisfies SourceMapRequest);
    });
  }

  private store(answers: readonly FrameAnswer[]): void {
    const t = this.now();
    for (const a of answers) {
      // dropped over the worker's queue bound: not a verdict on the script, ask again next time
      if (a.miss === 'dropped') continue;
      this.known.delete(a.key);
      this.known.set(a.key, a.to ? { to: a.to, until: t + this.o.limits.maxAgeMs } : { until: t + this.o.limits.missTtlMs });
      if (this.known.size > MAX_KNOWN) this.known.delete(this.known.keys().next().value as string);
    }
  }

  private spawned(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(workerFile(), {
      workerData: this.o.limits,
      // a worker's stdout would otherwise be piped into ours, which belongs to MCP
      stdout: true,
      resourceLimits: { maxOldGenerationSizeMb: this.o.heapMb ?? 384 },
    });
    w.stdout.pipe(process.stderr);
    // a daemon on its way out does not wait for a map
    w.unref();
    w.on('message', (m: SourceMapReply) => {
      // a late answer is still worth keeping: the next read finds it
      if (this.on) this.store(m.answers);
      this.latest = m.stats;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      p.done();
    });
    w.on('error', (e) => this.fail(w, e.message));
    w.on('exit', (code) => this.fail(w, `exited (code ${code})`));
    this.worker = w;
    return w;
  }

  /** The worker is gone: what it held resolves unresolved, the next request starts a new one. */
  private fail(w: Worker, why: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    if (this.closed) return;
    this.counts.restarts++;
    log.warn('source-map worker replaced', { reason: why, requests: this.pending.size });
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.done();
    }
    this.pending.clear();
    this.inFlight.clear();
  }
}
