/**
 * The dispatcher's scheduling: what goes into which task, and in what order. The runner here is
 * the dispatcher's own seam (TaskRunner) driven by hand, so a test decides when a task finishes;
 * the real pool behind it is exercised by the integration tests and measured by `pnpm bench`.
 */
import { describe, expect, it } from 'vitest';
import { Dispatcher, type DispatcherOptions, type Pending, type TaskRunner } from '../../../src/pool/dispatcher.js';
import { allocateSlots, SlotView } from '../../../src/pool/item-slots.js';
import type { ItemResult, TaskItem } from '../../../src/pool/messages.js';

interface Launched {
  items: TaskItem[];
  finish: () => void;
}

function harness(opts: Partial<DispatcherOptions> = {}) {
  const launched: Launched[] = [];
  const runner: TaskRunner = {
    run: (items) =>
      new Promise<ItemResult[]>((resolve) => {
        launched.push({ items, finish: () => resolve(items.map(() => ({ t: 'batch', seq: 0, outcome: 'applied', accepted: 1, rejected: 0 }))) });
      }),
    onTaskFailure: () => undefined,
  };
  const d = new Dispatcher(runner, new SlotView(allocateSlots(64)), { maxItems: 64, maxBytes: 2 * 1024 * 1024, maxInflight: 2, workers: 1, ...opts });
  let slot = 0;
  const ws = (label: string, len: number): Pending => ({ item: { src: 'ws', off: 0, len, slot: slot++, shed: false, session: label, applied: -1 }, recvTime: 0, done: () => undefined });
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
