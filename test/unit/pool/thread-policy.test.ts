/**
 * What the kernel says of a thread's scheduling (src/pool/thread-policy.ts), read from its own
 * record: a thread's time on a core grows with the work it does, far less while it sleeps, and a
 * thread that is gone has no record. Real threads, real kernel.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ownThreadId } from '../../../src/pool/thread-priority.js';
import { threadSchedStat } from '../../../src/pool/thread-policy.js';

const schedstat = existsSync('/proc/thread-self/schedstat');

describe.runIf(schedstat)('threadSchedStat', () => {
  it("counts the thread's time on a core: it grows while the thread spins, far less while it sleeps", async () => {
    const tid = ownThreadId()!;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // the record of a running thread lags by up to a tick or so: each reading follows a sleep
    await sleep(20);
    const a = threadSchedStat(tid)!;
    const t0 = performance.now();
    while (performance.now() - t0 < 100);
    await sleep(20);
    const b = threadSchedStat(tid)!;
    await sleep(100);
    const c = threadSchedStat(tid)!;
    const spun = b.runMs - a.runMs;
    // a core of its own for much of it, even on a busy machine
    expect(spun).toBeGreaterThan(30);
    expect(c.runMs - b.runMs).toBeLessThan(spun / 3);
  });

  it("another thread's record, by its id; none once it is gone", async () => {
    const w = new Worker("const { parentPort } = require('node:worker_threads'); parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()); setInterval(() => {}, 1000);", { eval: true });
    const tid = Number(await new Promise((r) => w.once('message', r)));
    expect(threadSchedStat(tid)).toMatchObject({ runMs: expect.any(Number), waitMs: expect.any(Number) });
    await w.terminate();
    expect(threadSchedStat(tid)).toBeUndefined();
  });
});
