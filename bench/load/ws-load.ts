/**
 * WebSocket load profile: start the server process, drive P producers closed-loop (or paced)
 * for a bounded time, measure server CPU and peak RSS from /proc, then check from /health that
 * every accepted event is readable from the rings or counted as evicted.
 *
 *   node dist/bench/load/ws-load.js [--server gasoline|ceiling] [--seconds 10] [--threads 1]
 *        [--connections 4] [--window 16] [--rate EVENTS_PER_S] [--server-threads N] [--port P]
 */
import { performance } from 'node:perf_hooks';
import { buildFramePool } from './frames.js';
import { runProducers, type ProducerRunResult } from './producer.js';
import { cpuSeconds, getHealth, peakRssMb, startServer, type ServerKind } from './server-proc.js';

export interface WsLoadOptions {
  server: ServerKind;
  port: number;
  durationMs: number;
  /** producer threads and connections per thread */
  threads: number;
  connectionsPerThread: number;
  window: number;
  /** open loop at this many events/s; closed loop when absent */
  rate?: number;
  serverThreads?: number;
  /** the checkout whose build runs (head by default) */
  root?: string;
}

export interface Verification {
  ok: boolean;
  accepted_from_acks: number;
  stored_delta: number;
  stored_minus_evicted: number;
  ring_records: number;
  rejected_delta: number;
  dropped_delta: number;
}

export interface WsLoadResult extends ProducerRunResult {
  server: ServerKind;
  server_threads: number | null;
  server_cpu_pct: number;
  server_peak_rss_mb: number;
  /** this bench process (producer threads): shows whether the load generator was the limit */
  client_cpu_pct: number;
  ring_budget_mb: number | null;
  verification: Verification | null;
  server_stderr_tail?: string;
}

export interface KindHealth {
  received: number;
  stored: number;
  rejected: number;
  evicted: number;
  cleared?: number;
  dropped: Record<string, number>;
  ring: { records: number; capacity_bytes: number };
}

export function kinds(h: Record<string, unknown>): KindHealth[] {
  return Object.values((h.kinds ?? {}) as Record<string, KindHealth>);
}

export const total = (h: Record<string, unknown>, f: (k: KindHealth) => number): number => kinds(h).reduce((n, k) => n + f(k), 0);
export const droppedSum = (k: KindHealth): number => Object.values(k.dropped ?? {}).reduce((a, b) => a + b, 0);

export async function runWsLoad(o: WsLoadOptions): Promise<WsLoadResult> {
  const pool = buildFramePool(42, 1);
  const srv = await startServer({ kind: o.server, port: o.port, threads: o.serverThreads, seqOffset: pool.seqOffset, ...(o.root ? { root: o.root } : {}) });
  try {
    const before = await getHealth(o.port);
    const cpu0 = cpuSeconds(srv.pid);
    const ucpu0 = process.cpuUsage();
    const t0 = performance.now();
    // sample CPU at the end of the send window, not after the drain (100 ms connect slack)
    let cpuWindow = { server: 0, client: 0, seconds: 1 };
    const sampler = setTimeout(() => {
      const u = process.cpuUsage(ucpu0);
      cpuWindow = { server: cpuSeconds(srv.pid) - cpu0, client: (u.user + u.system) / 1e6, seconds: (performance.now() - t0) / 1000 };
    }, o.durationMs + 100);
    const res = await runProducers({
      url: `ws://127.0.0.1:${o.port}/ws`,
      threads: o.threads,
      connectionsPerThread: o.connectionsPerThread,
      window: o.window,
      mode: o.rate ? 'open' : 'closed',
      ...(o.rate ? { rate: o.rate } : {}),
      durationMs: o.durationMs,
      drainMs: 5000,
    });
    clearTimeout(sampler);
    // let the last commits land in the counters
    await new Promise((r) => setTimeout(r, 300));
    const after = await getHealth(o.port);
    const rss = peakRssMb(srv.pid);
    let verification: Verification | null = null;
    let budget: number | null = null;
    if (o.server === 'gasoline') {
      const storedDelta = total(after, (k) => k.stored) - total(before, (k) => k.stored);
      const storedMinusEvicted = total(after, (k) => k.stored - k.evicted - (k.cleared ?? 0));
      const ringRecords = total(after, (k) => k.ring.records);
      budget = Math.round(total(after, (k) => k.ring.capacity_bytes) / 1048576);
      verification = {
        ok: storedDelta === res.acceptedReported && storedMinusEvicted === ringRecords && res.unacked === 0,
        accepted_from_acks: res.acceptedReported,
        stored_delta: storedDelta,
        stored_minus_evicted: storedMinusEvicted,
        ring_records: ringRecords,
        rejected_delta: total(after, (k) => k.rejected) - total(before, (k) => k.rejected),
        dropped_delta: total(after, droppedSum) - total(before, droppedSum),
      };
    }
    const out: WsLoadResult = {
      server: o.server,
      server_threads: o.serverThreads ?? null,
      ...res,
      server_cpu_pct: Math.round((cpuWindow.server / cpuWindow.seconds) * 100),
      server_peak_rss_mb: rss,
      client_cpu_pct: Math.round((cpuWindow.client / cpuWindow.seconds) * 100),
      ring_budget_mb: budget,
      verification,
    };
    if (res.connected < res.connections || Object.keys(res.closes).some((c) => c !== '1000' && c !== '1005')) out.server_stderr_tail = srv.stderr().slice(-1500);
    return out;
  } finally {
    await srv.stop();
  }
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runWsLoad({
    server: (flag('--server') as ServerKind | undefined) ?? 'gasoline',
    port: Number(flag('--port') ?? 7990),
    durationMs: Number(flag('--seconds') ?? 10) * 1000,
    threads: Number(flag('--threads') ?? 1),
    connectionsPerThread: Number(flag('--connections') ?? 4),
    window: Number(flag('--window') ?? 16),
    ...(flag('--rate') ? { rate: Number(flag('--rate')) } : {}),
    ...(flag('--server-threads') ? { serverThreads: Number(flag('--server-threads')) } : {}),
  });
  console.log(JSON.stringify(r, null, 2));
}
