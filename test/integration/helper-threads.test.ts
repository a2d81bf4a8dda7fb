/**
 * pool.helper_threads on a real `--server` daemon (bin/gasoline, as a bridge starts it): the
 * threads the process started with, but main, run SCHED_IDLE (V8's platform workers, Node's
 * delayed-task scheduler); main, the ingest worker started later and libuv's pool keep the normal
 * policy; /health says how many. Read from the kernel (/proc/<pid>/task/<tid>/stat). Linux x64
 * only: elsewhere there is no addon, and /health says why (the unit test's last case).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHED_IDLE, threadPolicy } from '../../src/pool/thread-policy.js';
import { cleanup, health, sandbox, startServer, type Sandbox } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { waitFor } from '../helpers/wait-for.js';

const linuxX64 = existsSync('/proc/thread-self') && process.arch === 'x64';

type Pool = { helper_threads: { policy: string; threads?: number; reason?: string }; priority: { threads: Array<{ tid: number }> } };

let sb: Sandbox | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (sb) await cleanup(sb);
  sb = undefined;
  child = undefined;
});

const policies = (pid: number): Map<number, number | undefined> => new Map(readdirSync(`/proc/${pid}/task`).map((t) => [Number(t), threadPolicy(Number(t), pid)]));

async function daemon(helperThreads?: 'idle' | 'normal'): Promise<{ pid: number; pool: () => Promise<Pool> }> {
  sb = sandbox(await freePort());
  if (helperThreads) {
    const c = JSON.parse(readFileSync(sb.configFile, 'utf8')) as { pool: Record<string, unknown> };
    c.pool.helper_threads = helperThreads;
    writeFileSync(sb.configFile, JSON.stringify(c));
  }
  child = startServer(sb);
  const port = sb.port;
  await waitFor('the daemon answers /health', () => health(port), 20_000);
  const pool = async () => ((await health(port)) as { pool: Pool }).pool;
  return { pid: child.pid!, pool };
}

describe.runIf(linuxX64)('Node\'s and V8\'s own threads below the daemon\'s (pool.helper_threads)', () => {
  it('by default the threads it started with, but main, run SCHED_IDLE; those started later do not', async () => {
    const d = await daemon();
    const start = policies(d.pid);
    const idle = [...start].filter(([, p]) => p === SCHED_IDLE).map(([t]) => t);
    // V8's platform workers (four by default) and Node's own: at least those
    expect(idle.length).toBeGreaterThanOrEqual(4);
    expect((await d.pool()).helper_threads).toEqual({ policy: 'idle', threads: idle.length });
    expect(start.get(d.pid)).toBe(0);
    // a producer starts the ingest worker; batches and files start libuv's pool: all normal
    const p = await Producer.connect(sb!.port);
    await p.hello(`helpers-${process.pid}`);
    await waitFor('the ingest worker reports', async () => (await d.pool()).priority.threads.length === 1, 15_000);
    await p.sendUntilAcked(batch(0, { logs: [logRecord(1)] }), 10_000);
    p.close();
    const worker = (await d.pool()).priority.threads[0]!.tid;
    const now = policies(d.pid);
    expect(now.get(worker)).toBe(0);
    const later = [...now].filter(([t]) => !start.has(t));
    expect(later.length).toBeGreaterThanOrEqual(1);
    for (const [t, pol] of later) expect({ t, pol }).toEqual({ t, pol: 0 });
    // what was lowered at start stays so, and nothing else was
    expect([...now].filter(([, pol]) => pol === SCHED_IDLE).map(([t]) => t).sort()).toEqual(idle.filter((t) => now.has(t)).sort());
  });

  it('`normal` leaves every thread as it started, and /health says so', async () => {
    const d = await daemon('normal');
    expect([...policies(d.pid).values()].filter((p) => p !== 0)).toEqual([]);
    expect((await d.pool()).helper_threads).toEqual({ policy: 'normal', reason: 'pool.helper_threads is normal' });
  });
});
