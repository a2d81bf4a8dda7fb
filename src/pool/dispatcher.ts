/**
 * Micro-batching dispatcher: never one piscina task per frame. Items submitted during one turn
 * of the event loop are combined into tasks of up to `maxItems` / `maxBytes`, and at most
 * `maxInflight` tasks are in the pool at once (threads × concurrent tasks per worker), so a
 * worker never idles while main prepares the next task and queues stay bounded.
 *
 * A task whose worker dies is retried once, item by item, skipping items its slot says were
 * already committed; an item that kills a worker again is poison.
 */
import type { ItemResult, TaskItem } from './messages.js';
import { SLOT_APPLIED, SLOT_DUPLICATE, type SlotView } from './item-slots.js';

export interface TaskRunner {
  run(items: TaskItem[], recvTime: number): Promise<ItemResult[]>;
  /** called after a task failed, before any retry (crash recovery of shared locks) */
  onTaskFailure(err: unknown): void;
}

export interface Pending {
  item: TaskItem;
  recvTime: number;
  done: (r: ItemResult) => void;
}

interface Group {
  entries: Pending[];
  bytes: number;
  /** performance.now() when it was queued */
  at: number;
}

export interface DispatcherOptions {
  maxItems: number;
  maxBytes: number;
  maxInflight: number;
  /** workers: what is queued is spread over this many tasks so no worker idles beside a busy one */
  workers: number;
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
  private queuedBytes = 0;
  private inflightTasks = 0;
  private inflightItems = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private tasks = 0;
  private retried = 0;
  private poisoned = 0;

  constructor(
    private readonly runner: TaskRunner,
    private readonly slots: SlotView,
    private readonly opts: DispatcherOptions,
  ) {}

  submit(item: TaskItem, recvTime: number, done: (r: ItemResult) => void): void {
    this.submitGroup([{ item, recvTime, done }]);
  }

  /** A group is never split across tasks: a session's frames must be applied in order by one worker. */
  submitGroup(group: Pending[]): void {
    if (group.length === 0) return;
    let bytes = 0;
    for (const p of group) bytes += p.item.len;
    this.queue.push({ entries: group, bytes, at: performance.now() });
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
    return this.queueHead < this.queue.length ? performance.now() - this.queue[this.queueHead]!.at : 0;
  }

  /** bytes waiting for a worker; admission control reads this */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  get stats(): DispatcherStats {
    return {
      queuedItems: this.queue.length - this.queueHead, // groups
      queuedBytes: this.queuedBytes,
      inflightTasks: this.inflightTasks,
      inflightItems: this.inflightItems,
      tasks: this.tasks,
      retried: this.retried,
      poisoned: this.poisoned,
    };
  }

  get idle(): boolean {
    return this.inflightTasks === 0 && this.queue.length === this.queueHead;
  }

  /** resolves when nothing is queued or in flight */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.inflightTasks < this.opts.maxInflight && this.queueHead < this.queue.length) {
      const batch: Pending[] = [];
      let bytes = 0;
      let groups = 0;
      const queuedGroups = this.queue.length - this.queueHead;
      const freeTasks = Math.min(this.opts.maxInflight - this.inflightTasks, this.opts.workers);
      const groupsPerTask = Math.max(1, Math.ceil(queuedGroups / Math.max(1, freeTasks)));
      while (this.queueHead < this.queue.length) {
        const g = this.queue[this.queueHead]!;
        if (batch.length > 0 && (groups >= groupsPerTask || batch.length + g.entries.length > this.opts.maxItems || bytes + g.bytes > this.opts.maxBytes)) break;
        groups++;
        for (const p of g.entries) batch.push(p);
        bytes += g.bytes;
        this.queueHead++;
      }
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
    this.checkIdle();
  }

  private launch(batch: Pending[], isRetry: boolean): void {
    this.inflightTasks++;
    this.inflightItems += batch.length;
    this.tasks++;
    const recvTime = batch[0]!.recvTime;
    this.runner.run(batch.map((p) => p.item), recvTime).then(
      (results) => {
        this.finish(batch);
        for (let i = 0; i < batch.length; i++) {
          const r = results[i];
          batch[i]!.done(r ?? { t: 'error', code: 'internal', message: 'worker returned no result for this item' });
        }
      },
      (err: unknown) => {
        this.runner.onTaskFailure(err);
        this.finish(batch);
        for (const p of batch) this.recover(p, isRetry);
      },
    );
  }

  private recover(p: Pending, wasRetry: boolean): void {
    const st = this.slots.read(p.item.slot);
    if (st.state === SLOT_APPLIED || st.state === SLOT_DUPLICATE) {
      // The crashed attempt committed this item before dying: answer from its slot.
      p.done(committedResult(p.item, st));
      return;
    }
    if (!wasRetry) {
      this.retried++;
      // Retry alone, so an innocent item is not condemned with the one that crashes workers.
      this.launch([p], true);
      return;
    }
    this.poisoned++;
    p.done({
      t: 'error',
      code: 'poison',
      message: `this ${p.item.src === 'ws' ? 'frame' : 'body'} crashed an ingest worker twice and was discarded`,
      ...(p.item.src === 'ws' && st.seq >= 0 ? { seq: st.seq } : {}),
    });
  }

  private finish(batch: Pending[]): void {
    this.inflightTasks--;
    this.inflightItems -= batch.length;
    if (this.queueHead < this.queue.length) this.pump();
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

function committedResult(item: TaskItem, st: { state: number; accepted: number; rejected: number; seq: number }): ItemResult {
  if (item.src === 'http') {
    return { t: 'http', status: 200, body: { received: st.accepted, rejected: st.rejected } };
  }
  return {
    t: 'batch',
    seq: st.seq,
    outcome: st.state === SLOT_DUPLICATE ? 'duplicate' : 'applied',
    accepted: st.accepted,
    rejected: st.rejected,
  };
}
