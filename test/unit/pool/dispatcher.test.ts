/**
 * The dispatcher's scheduling: what goes into which task, and in what order. The runner here is
 * the dispatcher's own seam (TaskRunner) driven by hand, so a test decides when a task finishes;
 * the real pool behind it is exercised by the integration tests and measured by `pnpm bench`.
 */
import { describe, expect, it } from 'vitest';
import { Dispatcher, type DispatcherOptions, type Pending, type TaskRunner } from '../../../src/pool/dispatcher.js';
import { allocateSlots, SlotView } from '../../../src/pool/item-slots.js';
import type { ItemOutcome, TaskItem } from '../../../src/pool/messages.js';
import { sessionId } from '../../../src/domain/ingest/item.js';

interface Launched {
  items: TaskItem[];
  finish: () => void;
}

function harness(opts: Partial<DispatcherOptions> = {}) {
  const launched: Launched[] = [];
  const runner: TaskRunner = {
    run: (items) =>
      new Promise<ItemOutcome[]>((resolve) => {
        launched.push({ items, finish: () => resolve(items.map(() => ({ kind: 'applied', seq: 0, accepted: 1, rejected: 0 }))) });
      }),
    onTaskFailure: () => undefined,
  };
  const d = new Dispatcher(runner, new SlotView(allocateSlots(64)), { maxItems: 64, maxBytes: 2 * 1024 * 1024, maxInflight: 2, workers: 1, ...opts });
  let slot = 0;
  const ws = (label: string, len: number): Pending => ({ item: { src: 'ws', off: 0, len, slot: slot++, shed: false, session: sessionId(label), applied: -1 }, recvTime: 0, done: () => undefined });
  const http = (label: string, len: number): Pending => ({ item: { src: 'http', route: '/logs', off: 0, len, slot: slot++, shed: false, edgeAt: Number(label.slice(1)) }, recvTime: 0, done: () => undefined });
  const labels = (l: Launched): string[] => l.items.map((i) => (i.src === 'ws' ? i.session! : `h${i.edgeAt}`));
  return { d, launched, ws, http, labels };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
const KB = 1024;

describe('Dispatcher latency bound and sparse lane', () => {
  it('without a bound, everything queued goes to the free worker in one task', async () => {
    const { d, launched, ws, labels } = harness({ latencyBytes: 0 });
    for (const s of ['a', 'b', 'c', 'd']) d.submitGroup([ws(s, 20 * KB)]);
    await turn();
    expect(launched.map(labels)).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('with a bound, a task holds about one bound of frames and no more is handed over while that much is in flight', async () => {
    const { d, launched, ws, labels } = harness({ latencyBytes: 16 * KB });
    for (const s of ['a', 'b', 'c', 'd']) d.submitGroup([ws(s, 6 * KB)]);
    await turn();
    // 'a'+'b' fit in 16 KB; the second task (beyond one per worker) gets what is left of the bound
    expect(launched.map(labels)).toEqual([['a', 'b'], ['c']]);
    expect(d.stats.inflightTasks).toBe(2);
    launched[0]!.finish();
    await turn();
    expect(launched.map(labels)[2]).toEqual(['d']);
  });

  it('a group larger than the bound still goes alone (a session is never split), but nothing joins it', async () => {
    const { d, launched, ws, labels } = harness({ latencyBytes: 16 * KB });
    d.submitGroup([ws('big', 40 * KB)]);
    d.submitGroup([ws('next', 1 * KB)]);
    await turn();
    expect(launched.map(labels)).toEqual([['big']]);
    expect(d.stats.queuedItems).toBe(1);
    launched[0]!.finish();
    await turn();
    expect(launched.map(labels)[1]).toEqual(['next']);
  });

  it('a small group from an idle producer overtakes the backlog waiting in the dispatcher', async () => {
    const { d, launched, ws, labels } = harness({ latencyBytes: 16 * KB, sparseBytes: 8 * KB });
    for (const s of ['a', 'b', 'c', 'd']) d.submitGroup([ws(s, 20 * KB)]);
    await turn();
    expect(launched.map(labels)).toEqual([['a']]); // 20 KB in flight: no second task
    d.submitGroup([ws('quiet', 300)], true);
    await turn();
    launched[0]!.finish();
    await turn();
    expect(launched.map(labels).slice(1)).toEqual([['quiet'], ['b']]);
  });

  it('the sparse lane is only for small groups: a big one from an idle producer waits its turn', async () => {
    const { d, launched, ws, labels } = harness({ latencyBytes: 16 * KB, sparseBytes: 8 * KB });
    d.submitGroup([ws('a', 20 * KB)]);
    await turn();
    d.submitGroup([ws('b', 20 * KB)]);
    d.submitGroup([ws('idle-but-big', 9 * KB)], true);
    await turn();
    launched[0]!.finish();
    await turn();
    expect(launched.map(labels).slice(1)).toEqual([['b']]);
    launched[1]!.finish();
    await turn();
    expect(launched.map(labels).slice(2)).toEqual([['idle-but-big']]);
  });

  it('HTTP bodies are not counted against the bound: they stay batched for throughput', async () => {
    const { d, launched, http, labels } = harness({ latencyBytes: 16 * KB });
    for (let i = 1; i <= 5; i++) d.submit(http(`h${i}`, 20 * KB).item, 0, () => undefined);
    await turn();
    expect(launched.map(labels)).toEqual([['h1', 'h2', 'h3', 'h4', 'h5']]);
  });

  it('admission control sees how long the oldest group waited, in either lane', async () => {
    const { d, ws } = harness({ latencyBytes: 16 * KB, sparseBytes: 8 * KB, maxInflight: 1 });
    d.submitGroup([ws('a', 20 * KB)]);
    await turn();
    d.submitGroup([ws('quiet', 100)], true);
    const t0 = performance.now();
    while (performance.now() - t0 < 5);
    expect(d.oldestQueuedMs).toBeGreaterThanOrEqual(5);
  });
});

describe('Dispatcher crash recovery', () => {
  /** A runner whose tasks the test settles by hand: finish with per-item results, or fail (the worker died). */
  function crashable() {
    const launched: Array<{ items: TaskItem[]; finish: (results: ItemOutcome[]) => void; fail: () => void }> = [];
    const runner: TaskRunner = {
      run: (items) => new Promise<ItemOutcome[]>((resolve, reject) => launched.push({ items, finish: resolve, fail: () => reject(new Error('worker exited with code 70')) })),
      onTaskFailure: () => undefined,
    };
    const d = new Dispatcher(runner, new SlotView(allocateSlots(64)), { maxItems: 64, maxBytes: 2 * 1024 * 1024, maxInflight: 4, workers: 2 });
    return { d, launched };
  }
  const applied = (seq: number): ItemOutcome => ({ kind: 'applied', seq, accepted: 1, rejected: 0 });

  it('retries a session’s items one after another, each on the seq the one before committed', async () => {
    const { d, launched } = crashable();
    const answers: Array<[string, ItemOutcome]> = [];
    let slot = 0;
    const item = (session: string, applied: number): Pending => ({
      item: { src: 'ws', off: 0, len: 100, slot: slot++, shed: false, session: sessionId(session), applied },
      recvTime: 0,
      done: (r) => answers.push([session, r]),
    });
    // an innocent session's three batches (seq 5, 6, 7; 4 applied before) share a task with another's
    d.submitGroup([item('innocent', 4), item('innocent', 4), item('innocent', 4)]);
    d.submitGroup([item('other', 9)]);
    await turn();
    expect(launched).toHaveLength(2);
    launched[0]!.fail();
    await turn();
    // one retry per session at a time: the innocent session's first item, alone
    const retries = launched.slice(2);
    expect(retries.map((l) => l.items.map((i) => (i.src === 'ws' ? [i.session, i.applied] : [])))).toEqual([[['innocent', 4]]]);
    retries[0]!.finish([applied(5)]);
    await turn();
    expect(launched[3]!.items).toMatchObject([{ session: 'innocent', applied: 5 }]);
    launched[3]!.finish([applied(6)]);
    await turn();
    expect(launched[4]!.items).toMatchObject([{ session: 'innocent', applied: 6 }]);
    launched[4]!.finish([applied(7)]);
    await turn();
    expect(answers.filter(([s]) => s === 'innocent').map(([, r]) => r)).toEqual([applied(5), applied(6), applied(7)]);
    expect(d.stats.retried).toBe(3);
  });

  it('an item that kills its retry too is poison, and the session’s next item still goes on', async () => {
    const { d, launched } = crashable();
    const answers: ItemOutcome[] = [];
    const mk = (slot: number): Pending => ({ item: { src: 'ws', off: 0, len: 100, slot, shed: false, session: sessionId('s'), applied: 0 }, recvTime: 0, done: (r) => answers.push(r) });
    d.submitGroup([mk(0), mk(1)]);
    await turn();
    launched[0]!.fail();
    await turn();
    launched[1]!.fail(); // the first item kills its retry as well
    await turn();
    expect(answers[0]).toMatchObject({ kind: 'rejected', code: 'poison' });
    expect(launched[2]!.items).toMatchObject([{ slot: 1 }]);
    launched[2]!.finish([applied(2)]);
    await turn();
    expect(answers[1]).toEqual(applied(2));
    expect(d.stats.poisoned).toBe(1);
  });
});

/** lets wall time pass without yielding, so nothing the test did not do can happen meanwhile */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('Dispatcher under an elastic pool', () => {
  it('resize lets more tasks out at once when a worker is added, and holds the next ones back when one goes', async () => {
    const { d, launched, ws } = harness({ latencyBytes: 0, maxInflight: 2, workers: 1, maxItems: 1 });
    for (const s of ['a', 'b', 'c', 'd', 'e']) d.submitGroup([ws(s, 1 * KB)]);
    await turn();
    expect(d.stats.inflightTasks).toBe(2);
    d.resize(2, 4);
    expect(d.stats.inflightTasks).toBe(4);
    d.resize(1, 2);
    // what is out stays out; the last group waits for the inflight count to fall under the new bound
    for (const l of launched.splice(0, 2)) l.finish();
    await turn();
    expect(d.stats.inflightTasks).toBe(2);
    for (const l of launched.splice(0, 2)) l.finish();
    await turn();
    expect(d.stats.inflightTasks).toBe(1);
    expect(d.stats.queuedItems).toBe(0);
  });

  it('counts backlog time only while queued work could not be handed out', async () => {
    const { d, launched, ws } = harness({ latencyBytes: 0, maxInflight: 1, workers: 1, maxItems: 1 });
    d.submitGroup([ws('a', 1 * KB)]);
    await turn();
    // handed out at once: no backlog, even though it sat queued until the pump
    expect(d.backlogTotalMs()).toBe(0);
    d.submitGroup([ws('b', 1 * KB)]);
    await turn();
    // the clock read after the first reading and before the second, so a pause of this thread
    // anywhere else cannot make the interval look longer than what the dispatcher saw
    const during = d.backlogTotalMs();
    const t0 = performance.now();
    spin(20);
    const t1 = performance.now();
    expect(d.backlogTotalMs()).toBeGreaterThanOrEqual(during + (t1 - t0) - 1);
    launched[0]!.finish();
    await turn();
    const after = d.backlogTotalMs();
    expect(after).toBeGreaterThan(15);
    spin(10);
    expect(d.backlogTotalMs()).toBe(after);
  });
});
