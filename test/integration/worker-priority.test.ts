/**
 * pool.worker_nice with real worker threads: the kernel's own record of each thread's nice value
 * (/proc/self/task/<tid>/stat) says the ingest workers, and only they, run at the configured
 * offset above the rest of the process; /health names them. Linux only (elsewhere the pool keeps
 * main's priority and says why: the last test).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { lowerOwnPriority, NICE_MAX, ownThreadId } from '../../src/pool/thread-priority.js';
import { Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

const linux = existsSync('/proc/thread-self');

/** field 19 of /proc/<pid>/task/<tid>/stat, counted after the command name (which may hold spaces) */
function kernelNice(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

type Priority = { nice_offset: number; threads: Array<{ tid: number; nice: number }>; unavailable?: string };
const priority = (s: App) => (s.health() as { pool: { priority: Priority } }).pool.priority;

let server: App | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The daemon's workers start on a producer's hello (lazy lanes), and report from their warm-up. */
async function wakeWorkers(s: App, n: number): Promise<Priority> {
  const p = await Producer.connect(s.port);
  await p.hello(`nice-${process.pid}-${Date.now()}`);
  await waitFor(`${n} workers report their priority`, () => priority(s).threads.length === n, 15_000);
  p.close();
  return priority(s);
}

describe.runIf(linux)('ingest workers at a lower CPU priority (pool.worker_nice)', () => {
  it('each ingest worker thread runs at main\'s nice + the offset; every other thread keeps main\'s', async () => {
    const base = getPriority(ownThreadId()!);
    server = await startTestServer({ pool: { threads: 2, min_threads: 2, worker_nice: 7 } });
    const pr = await wakeWorkers(server, 2);
    expect(pr.nice_offset).toBe(7);
    expect(pr.unavailable).toBeUndefined();
    const want = Math.min(NICE_MAX, base + 7);
    const workerTids = new Set(pr.threads.map((t) => t.tid));
    expect(workerTids.size).toBe(2);
    for (const t of pr.threads) {
      expect(t.nice).toBe(want);
      // what the kernel says, not what the worker believes it set
      expect(kernelNice(t.tid)).toBe(want);
    }
    // main, the scan worker (started by a folded read), V8's and libuv's threads: unchanged
    await server.mcp.fold({ kinds: [0], start: [0], maxScan: 100, filter: { what: 'logs' }, fold: true });
    const others = readdirSync('/proc/self/task').map(Number).filter((tid) => !workerTids.has(tid));
    expect(others.length).toBeGreaterThan(2);
    for (const tid of others) expect({ tid, nice: kernelNice(tid) }).toEqual({ tid, nice: base });
  });

  it('by default the workers keep main\'s nice (config.ts: an offset cost paced ingest on a 6.18 kernel)', async () => {
    const base = getPriority(ownThreadId()!);
    server = await startTestServer({ pool: { threads: 1 } });
    const pr = await wakeWorkers(server, 1);
    expect(pr.nice_offset).toBe(0);
    expect(kernelNice(pr.threads[0]!.tid)).toBe(base);
  });

  it('offset 10 puts the workers 10 above main', async () => {
    const base = getPriority(ownThreadId()!);
    server = await startTestServer({ pool: { threads: 1, worker_nice: 10 } });
    const pr = await wakeWorkers(server, 1);
    expect(pr.nice_offset).toBe(10);
    expect(kernelNice(pr.threads[0]!.tid)).toBe(Math.min(NICE_MAX, base + 10));
  });

  it('offset 0 leaves the workers at main\'s nice', async () => {
    const base = getPriority(ownThreadId()!);
    server = await startTestServer({ pool: { threads: 1, worker_nice: 0 } });
    const pr = await wakeWorkers(server, 1);
    expect(pr.nice_offset).toBe(0);
    expect(kernelNice(pr.threads[0]!.tid)).toBe(base);
  });

  it('a thread lowers only itself, capped at 19, and says so when capped', async () => {
    const { Worker } = await import('node:worker_threads');
    const base = getPriority(ownThreadId()!);
    const url = new URL('../../dist/src/pool/thread-priority.js', import.meta.url).href;
    // a throw-away thread: its priority cannot be raised back without privilege
    const w = new Worker(`import(${JSON.stringify(url)}).then((m) => require('node:worker_threads').parentPort.postMessage([m.lowerOwnPriority(3), m.lowerOwnPriority(40)]))`, { eval: true });
    const [first, second] = await new Promise<[{ tid: number; nice: number; capped?: true }, { tid: number; nice: number; capped?: true }]>((r, j) => {
      w.once('message', r);
      w.once('error', j);
    });
    await w.terminate();
    expect(first).toMatchObject({ nice: Math.min(NICE_MAX, base + 3) });
    expect(second).toEqual({ tid: first.tid, nice: NICE_MAX, capped: true });
    expect(first.tid).not.toBe(ownThreadId());
    expect(getPriority(ownThreadId()!)).toBe(base);
  });
});

describe('where threads have no priority of their own', () => {
  it('offset 0 only reads the priority; without /proc/thread-self nothing is changed and the reason is given', () => {
    const r = lowerOwnPriority(0);
    if (linux) expect(r).toEqual({ tid: ownThreadId(), nice: getPriority(ownThreadId()!) });
    else expect(r).toEqual({ error: expect.stringContaining('/proc/thread-self'), unsupported: true });
  });
});
