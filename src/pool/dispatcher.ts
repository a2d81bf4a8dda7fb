/**
 * Micro-batching dispatcher: never one piscina task per frame. Items submitted during one turn
 * of the event loop are combined into tasks of up to `maxItems` / `maxBytes`, and at most
 * `maxInflight` tasks are in the pool at once (threads × concurrent tasks per worker), so a
 * worker never idles while main prepares the next task and queues stay bounded.
 *
 * A task whose worker dies is retried once, item by item, skipping items its slot says were
 * already committed; an item that kills a worker again is poison. A session's items are retried
 * one after another, each with the seq the one before it committed as its baseline, so an innocent
 * producer whose batches shared the task is not refused as out of order.
 */
import type { ItemOutcome, TaskItem } from './messages.js';
import type { SlotView } from './item-slots.js';
import { replayed } from '../domain/ingest/outcome.js';

export interface TaskRunner {
  run(items: TaskItem[], recvTime: number): Promise<ItemOutcome[]>;
  /** called after a task failed, before any retry (crash recovery of shared locks) */
  onTaskFailure(err: unknown): void;
}

export interface Pending {
  item: TaskItem;
  recvTime: number;
  done: (r: ItemOutcome) => void;
}

interface Group {
  entries: Pending[];
  bytes: number;
  wsBytes: number;
  /** performance.now() when it was queued */
  at: number;
}

export interface DispatcherOptions {
  maxItems: number;
  maxBytes: number;
  maxInflight: number;
  /** workers: what is queued is spread over this many tasks so no worker idles beside a busy one */
  workers: number;
  /**
   * WebSocket frame bytes per task, and in flight beyond one task per worker (0: no bound). About
   * a millisecond of work: what a newly arrived frame may have to wait behind inside a worker.
   */
  latencyBytes?: number;
  /** groups up to this size from an idle producer take the sparse lane (0: no sparse lane) */
  sparseBytes?: number;
}

export interface DispatcherStats {
  queuedItems: number;
  queuedBytes: number;
  inflightTasks: number;
  inflightItems: number;
  tasks: number;
  retried: number;
  poisoned: number;
}

export class Dispatcher {
  private readonly queue: Group[] = [];
  private queueHead = 0;
  /** served before `queue`; small by construction (small groups from idle producers) */
  private sparse: Group[] = [];
  private queuedBytes = 0;
  private inflightTasks = 0;
  private inflightItems = 0;
  /** WebSocket frame bytes in tasks not yet finished (the latency bound counts these) */
  private inflightWsBytes = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private tasks = 0;
  private retried = 0;
  private poisoned = 0;
  /** ms during which work waited that could not be handed out (the pool's growth signal) */
  private backlogMs = 0;
  /** performance.now() when the current backlog began; undefined when there is none */
  private backlogSince: number | undefined;
  private readonly opts: DispatcherOptions;

  constructor(
    private readonly runner: TaskRunner,
    private readonly slots: SlotView,
    opts: DispatcherOptions,
  ) {
    this.opts = { ...opts };
  }

  /**
   * The pool grew or shrank: tasks in flight and the spread follow the workers there are. Tasks
   * already handed out stay where they are; a smaller bound only holds back the next ones.
   */
  resize(workers: number, maxInflight: number): void {
    this.opts.workers = workers;
    this.opts.maxInflight = maxInflight;
    if (this.queued) this.pump();
  }

  /** total ms work has waited for a worker so far, the wait under way included */
  backlogTotalMs(now = performance.now()): number {
    return this.backlogMs + (this.backlogSince === undefined ? 0 : now - this.backlogSince);
  }

  submit(item: TaskItem, recvTime: number, done: (r: ItemOutcome) => void, sparse = false): void {
    this.submitGroup([{ item, recvTime, done }], sparse);
  }

  /**
   * A group is never split across tasks: a session's frames must be applied in order by one worker.
   * `sparse`: the group comes from a producer that was idle (nothing queued, nothing in flight)
   * and is small. Such groups go ahead of backlogged ones — fq_codel's sparse-flow rule — so a
   * quiet producer's error is not stuck behind a busy one's backlog; a producer that keeps sending is
   * never idle when its next frame arrives, so it cannot stay in this lane.
   */
  submitGroup(group: Pending[], sparse = false): void {
    if (group.length === 0) return;
    let bytes = 0;
    for (const p of group) bytes += p.item.len;
    const g = { entries: group, bytes, wsBytes: wsBytesOf(group), at: performance.now() };
    if (sparse && bytes <= (this.opts.sparseBytes ?? 0)) this.sparse.push(g);
    else this.queue.push(g);
    this.queuedBytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
  }

  /** how long the oldest queued group has waited for a worker (ms); admission control reads this */
  get oldestQueuedMs(): number {
    const at = Math.min(this.queueHead < this.queue.length ? this.queue[this.queueHead]!.at : Infinity, this.sparse[0]?.at ?? Infinity);
    return at === Infinity ? 0 : performance.now() - at;
  }

  /** bytes waiting for a worker; admission control reads this */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  get stats(): DispatcherStats {
    return {
      queuedItems: this.queue.length - this.queueHead + this.sparse.length, // groups
      queuedBytes: this.queuedBytes,
      inflightTasks: this.inflightTasks,
      inflightItems: this.inflightItems,
      tasks: this.tasks,
      retried: this.retried,
      poisoned: this.poisoned,
    };
  }

  get idle(): boolean {
    return this.inflightTasks === 0 && !this.queued;
  }

  /** resolves when nothing is queued or in flight */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private get queued(): boolean {
    return this.sparse.length > 0 || this.queueHead < this.queue.length;
  }

  private pump(): void {
    const bound = this.opts.latencyBytes ?? 0;
    while (this.inflightTasks < this.opts.maxInflight && this.queued) {
      // Work handed to a worker cannot be overtaken. Beyond one task per worker, frames are handed
      // over only while little frame work is in flight, and each task holds little: what arrives
      // next waits here, where the sparse lane can still put it first, not behind a long backlog
      // inside a worker. HTTP bodies are a bulk path (many small independent bodies, batched for
      // throughput) and are not counted.
      const extra = this.inflightTasks >= this.opts.workers;
      if (bound > 0 && extra && this.inflightWsBytes >= bound) break;
      const wsAllowance = bound > 0 ? (extra ? bound - this.inflightWsBytes : bound) : Infinity;
      const batch: Pending[] = [];
      let bytes = 0;
      let wsBytes = 0;
      let groups = 0;
      const queuedGroups = this.queue.length - this.queueHead + this.sparse.length;
      const freeTasks = Math.min(this.opts.maxInflight - this.inflightTasks, this.opts.workers);
      const groupsPerTask = Math.max(1, Math.ceil(queuedGroups / Math.max(1, freeTasks)));
      let sparseTaken = 0;
      for (;;) {
        const fromSparse = sparseTaken < this.sparse.length;
        const g = fromSparse ? this.sparse[sparseTaken] : this.queue[this.queueHead];
        if (!g) break;
        if (batch.length > 0 && (groups >= groupsPerTask || batch.length + g.entries.length > this.opts.maxItems || bytes + g.bytes > this.opts.maxBytes || wsBytes + g.wsBytes > wsAllowance)) break;
        groups++;
        for (const p of g.entries) batch.push(p);
        bytes += g.bytes;
        wsBytes += g.wsBytes;
        if (fromSparse) sparseTaken++;
        else this.queueHead++;
      }
      if (sparseTaken) this.sparse = this.sparse.slice(sparseTaken);
      this.queuedBytes -= bytes;
      this.launch(batch, false);
    }
    if (this.queueHead === this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    } else if (this.queueHead > 4096) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
    this.noteBacklog();
    this.checkIdle();
  }

  /**
   * After a pump: what is still queued could not be handed out (every task slot taken, or the
   * latency bound reached), so it waits for a worker. Only pump hands work out, so only its end
   * can begin or end a backlog.
   */
  private noteBacklog(): void {
    if (this.queued) {
      this.backlogSince ??= performance.now();
    } else if (this.backlogSince !== undefined) {
      this.backlogMs += performance.now() - this.backlogSince;
      this.backlogSince = undefined;
    }
  }

  private launch(batch: Pending[], isRetry: boolean): void {
    this.inflightWsBytes += wsBytesOf(batch);
    this.inflightTasks++;
    this.inflightItems += batch.length;
    this.tasks++;
    const recvTime = batch[0]!.recvTime;
    this.runner.run(batch.map((p) => p.item), recvTime).then(
      (results) => {
        this.finish(batch);
        for (let i = 0; i < batch.length; i++) {
          const r = results[i];
          batch[i]!.done(r ?? { kind: 'rejected', code: 'internal', message: 'worker returned no result for this item' });
        }
      },
      (err: unknown) => {
        this.runner.onTaskFailure(err);
        this.finish(batch);
        this.recoverAll(batch, isRetry);
      },
    );
  }

  /** Items without a session (HTTP bodies, frames before hello) are independent; a session's go in order. */
  private recoverAll(batch: Pending[], wasRetry: boolean): void {
    const chains = new Map<string, Pending[]>();
    for (const p of batch) {
      const session = p.item.src === 'ws' ? p.item.session : null;
      if (session === null) this.recover(p, wasRetry);
      else {
        const chain = chains.get(session);
        if (chain) chain.push(p);
        else chains.set(session, [p]);
      }
    }
    for (const chain of chains.values()) this.recoverChain(chain, 0, wasRetry);
  }

  private recoverChain(chain: Pending[], i: number, wasRetry: boolean): void {
    const p = chain[i];
    if (!p) return;
    const next = chain[i + 1];
    if (!next) {
      this.recover(p, wasRetry);
      return;
    }
    const done = p.done;
    this.recover(
      {
        ...p,
        done: (r) => {
          done(r);
          // what this item committed (or was acknowledged as) is the baseline of the next one
          const seq = r.kind === 'applied' || r.kind === 'duplicate' ? r.seq : r.kind === 'rejected' && r.code === 'poison' ? r.seq : undefined;
          if (seq !== undefined && seq >= 0 && next.item.src === 'ws' && seq > next.item.applied) next.item = { ...next.item, applied: seq };
          this.recoverChain(chain, i + 1, wasRetry);
        },
      },
      wasRetry,
    );
  }

  private recover(p: Pending, wasRetry: boolean): void {
    const committed = this.slots.committed(p.item.slot);
    if (committed) {
      // The crashed attempt committed this item before dying: answer from its slot, as a worker
      // retrying it would (the same builder, the same answer).
      p.done(replayed(committed));
      return;
    }
    if (!wasRetry) {
      this.retried++;
      // Retry alone, so an innocent item is not condemned with the one that crashes workers.
      this.launch([p], true);
      return;
    }
    this.poisoned++;
    const st = this.slots.read(p.item.slot);
    p.done({
      kind: 'rejected',
      code: 'poison',
      message: `this ${p.item.src === 'ws' ? 'frame' : 'body'} crashed an ingest worker twice and was discarded`,
      ...(p.item.src === 'ws' && st.seq >= 0 ? { seq: st.seq } : {}),
    });
  }

  private finish(batch: Pending[]): void {
    this.inflightWsBytes -= wsBytesOf(batch);
    this.inflightTasks--;
    this.inflightItems -= batch.length;
    if (this.queued) this.pump();
    else this.checkIdle();
  }

  private checkIdle(): void {
    if (this.idle && this.idleWaiters.length) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const f of w) f();
    }
  }
}

function wsBytesOf(entries: Pending[]): number {
  let n = 0;
  for (const p of entries) if (p.item.src === 'ws') n += p.item.len;
  return n;
}
