/**
 * pool.worker_policy with real worker threads and the kernel's own record
 * (/proc/self/task/<tid>/stat): the worker kept when quiet runs SCHED_IDLE once it ran a real
 * batch; beside CPU hogs of its own scheduling group (processes of this session: autogroup ranks
 * sessions, not threads) it gets almost no core, and is replaced by a worker at the normal policy
 * while every batch is still acked and accounted for; the next recycle lowers a fresh worker
 * again; `normal`, the default, lowers nothing. Linux x64 only (the addon): elsewhere /health says why.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { SCHED_IDLE, threadPolicy } from '../../src/pool/thread-policy.js';
import { expectBalanced } from '../helpers/accounting.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

const linuxX64 = existsSync('/proc/thread-self') && process.arch === 'x64';

type WorkerPolicy = { policy: string; idle_now: number; promotions: number; draining: number; refused?: string };
type Pool = { worker_policy: WorkerPolicy; priority: { threads: Array<{ tid: number }> }; workers: { recycles: number; each: Array<{ policy: string }> } };
const pool = (s: App): Pool => (s.health() as { pool: Pool }).pool;

let server: App | undefined;
let hogs: ChildProcess[] = [];
afterEach(async () => {
  for (const h of hogs) h.kill('SIGKILL');
  hogs = [];
  await server?.close();
  server = undefined;
});

/** One busy loop per core, in this session: they outrank a SCHED_IDLE thread of the same group on every core. */
async function startHogs(): Promise<void> {
  hogs = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for(;;);'], { stdio: 'ignore' }));
  await Promise.all(hogs.map((h) => new Promise((r) => h.once('spawn', r))));
}

async function lowered(s: App, p: Producer, seq: number): Promise<number> {
  await p.sendUntilAcked(batch(seq, { logs: [logRecord(seq)] }), 10_000);
  await waitFor('the worker is lowered after its first batch', () => pool(s).worker_policy.idle_now === 1, 10_000);
  const tid = pool(s).priority.threads[0]!.tid;
  expect(threadPolicy(tid)).toBe(SCHED_IDLE);
  return tid;
}

describe.runIf(linuxX64)('the ingest worker at SCHED_IDLE while it keeps up (pool.worker_policy)', () => {
  it('runs SCHED_IDLE after its first batch; beside CPU hogs it is replaced by a normal worker and nothing is lost; a recycle lowers a fresh one', async () => {
    server = await startTestServer({ pool: { threads: 1, recycle_after_idle_ms: 1500, worker_policy: 'idle' } });
    const s = server;
    const p = await Producer.connect(s.port);
    await p.hello(`policy-${process.pid}`);
    const first = await lowered(s, p, 1);
    expect(pool(s).worker_policy).toEqual({ policy: 'idle', idle_now: 1, promotions: 0, draining: 0 });

    // five batches of 20 logs at a time, each acked before the next: replaced within seconds
    await startHogs();
    let seq = 1;
    const five = (): Promise<unknown> => p.sendUntilAcked(Array.from({ length: 5 }, () => batch(++seq, { logs: Array.from({ length: 20 }, (_, i) => logRecord(seq * 100 + i)) })), 15_000);
    const t0 = Date.now();
    while (pool(s).worker_policy.promotions === 0) {
      expect(Date.now() - t0, 'the starved worker is replaced').toBeLessThan(10_000);
      await five();
    }
    // then ingest runs at a normal thread's pace beside the hogs: a starved worker, never replaced,
    // was acked 20 batches in 5 s here; the replacement ~150 a second
    const before = seq;
    const t1 = Date.now();
    while (Date.now() - t1 < 2000) await five();
    expect(seq - before).toBeGreaterThanOrEqual(100);
    const w = pool(s).worker_policy;
    expect(w.promotions).toBeGreaterThanOrEqual(1);
    expect(w.idle_now).toBe(0);
    const now = pool(s).priority.threads[0]!.tid;
    expect(now).not.toBe(first);
    expect(threadPolicy(now)).toBe(0);
    // the replaced thread finished what it held and is gone
    await waitFor('the replaced worker ends', () => pool(s).worker_policy.draining === 0 && threadPolicy(first) === undefined, 10_000);
    for (const h of hogs) h.kill('SIGKILL');
    hogs = [];
    await expectBalanced(s);
    const stored = s.reader.counters()[0]!;
    expect(stored.stored).toBe(1 + (seq - 1) * 20);

    // quiet for recycle_after_idle_ms: fresh workers, lowered again after their first batch
    await waitFor('the pool recycles', () => pool(s).workers.recycles >= 1, 15_000);
    const fresh = await lowered(s, p, ++seq);
    expect(fresh).not.toBe(now);
    p.close();
  });

  it('by default (`normal`) the workers keep the normal policy', async () => {
    server = await startTestServer({ pool: { threads: 1 } });
    const p = await Producer.connect(server.port);
    await p.hello(`policy-normal-${process.pid}`);
    for (let i = 1; i <= 3; i++) await p.sendUntilAcked(batch(i, { logs: [logRecord(i)] }), 10_000);
    p.close();
    const tid = pool(server).priority.threads[0]!.tid;
    expect(threadPolicy(tid)).toBe(0);
    expect(pool(server).worker_policy).toEqual({ policy: 'normal', idle_now: 0, promotions: 0, draining: 0 });
  });
});
