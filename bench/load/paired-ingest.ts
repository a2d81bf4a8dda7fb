/**
 * The ingest cost of two builds side by side, for `--compare` against any base: both daemons run at
 * once (`--server`, one ingest worker each), and each round gives one, then the other, a closed-loop
 * burst of the bench's mixed frames (the same seed); the figure is the daemon's CPU per accepted event (every thread:
 * uWS, dispatch, the worker path, commit), head ÷ base per round, then the median. The in-process
 * rig (paired-worker-path.ts) is finer but needs a base that has it; this needs only the wire
 * protocol. CPU time is read per thread from the kernel's scheduler statistics (ns), not from
 * /proc/<pid>/stat's 10 ms ticks: a burst costs ~0.1 s.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProducers } from './producer.js';
import { freePort, startServer, type ServerProc } from './server-proc.js';
import { pairedStats, type PairedRatios } from '../paired-stats.js';

/** `ratio`: head ÷ base per round, then the median: below 1 is cheaper */
export interface PairedIngestResult extends PairedRatios {
  /** CPU µs per accepted event, median per side */
  base_us: number;
  head_us: number;
  rounds: number;
  /** events accepted over all timed bursts, per side */
  base_events: number;
  head_events: number;
  /** events refused or batches nacked over all timed bursts: their CPU counts too */
  base_refused: number;
  head_refused: number;
}

export interface PairedIngestOptions {
  rounds?: number;
  /** wall ms of a burst (closed loop: as many events as the build takes) */
  burstMs?: number;
}

/** ns on CPU of every live thread of `pid` (/proc/<pid>/task/<tid>/schedstat, first field) */
export function threadCpuNs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns;
}

export async function pairedIngest(baseRoot: string, headRoot: string, o: PairedIngestOptions = {}): Promise<PairedIngestResult | string> {
  const roots = [['base', baseRoot], ['head', headRoot]] as const;
  for (const [name, root] of roots) if (!existsSync(join(root, 'dist'))) return `${name}: ${join(root, 'dist')} is missing (not built)`;
  const ms = o.burstMs ?? 400;
  const rounds = o.rounds ?? 12;
  const procs: ServerProc[] = [];
  try {
    for (const [, root] of roots) procs.push(await startServer({ kind: 'gasoline', port: await freePort(), root, threads: 1 }));
    const refused = [0, 0];
    const accepted = [0, 0];
    /** one burst into side i: CPU µs per accepted event */
    const burst = async (i: number, seed: number): Promise<number> => {
      const p = procs[i]!;
      const c0 = threadCpuNs(p.pid);
      // closed loop: as fast as the build acks, so tasks carry what they carry at saturation (the
      // worker path), not one batch each at a paced rate (a thread wake per batch)
      const run = await runProducers({ url: `ws://127.0.0.1:${p.port}/ws`, threads: 1, connectionsPerThread: 2, window: 16, mode: 'closed', durationMs: ms, drainMs: 5000, seed, mix: 'mixed' });
      const c1 = threadCpuNs(p.pid);
      refused[i]! += run.rejectedReported + Object.values(run.nacks).reduce((n, v) => n + v, 0);
      accepted[i]! += run.acceptedReported;
      if (run.acceptedReported <= 0) throw new Error(`${i === 0 ? 'base' : 'head'} accepted nothing of a burst`);
      return (c1 - c0) / 1000 / run.acceptedReported;
    };
    // the first bursts start each worker's JIT and the pool's buffers: untimed
    for (let w = 0; w < 2; w++) for (let i = 0; i < 2; i++) await burst(i, 100 + w);
    refused[0] = refused[1] = accepted[0] = accepted[1] = 0;
    const b: number[] = [];
    const h: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      const got: number[] = [];
      // the same seed for both sides of a round: the same frames
      for (const i of order) got[i] = await burst(i, 200 + r);
      b.push(got[0]!);
      h.push(got[1]!);
    }
    const { base: base_us, head: head_us, ...ratios } = pairedStats(b, h);
    return {
      base_us,
      head_us,
      ...ratios,
      rounds,
      base_events: accepted[0]!,
      head_events: accepted[1]!,
      base_refused: refused[0]!,
      head_refused: refused[1]!,
    };
  } catch (e) {
    return (e as Error).message.split('\n')[0]!;
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}
