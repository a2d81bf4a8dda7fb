/**
 * idle_rss (issue 17): what a `--server` daemon holds when nobody uses it, once after start and
 * once after a burst, each after `idleMs` (30 s) of nothing. The pool starts one ingest worker
 * and no scan worker, grows under the burst, and must be back to one worker by the second
 * reading, whatever the number of cores (`threads` lets a 2-core machine run a 16-core config).
 *
 * After a burst the rings hold what it stored: those pages are the user's telemetry, bounded by
 * the configured ring sizes, and they stay resident by design. So the figure gated after a burst
 * is RSS minus the ring bytes holding records (the process's own memory); the raw RSS is reported
 * beside it, and every figure against the configured budget (rings + input arena).
 *
 * The daemon starts its worker's thread on the first batch, and after `pool.recycle_after_idle_ms`
 * (15 s) of nothing replaces its workers and input arena with fresh ones: both readings come
 * after that, so they are what an idle daemon holds, not what it held while busy.
 *
 * Beside the memory, what an idle hour costs in CPU: the daemon's CPU time and its threads'
 * wake-ups (voluntary context switches) per second, once after start and once after the burst
 * (2026-12-02: ~16 a second before its periodic checks stopped when there is nothing to watch,
 * src/cadence.ts; ~1.3 after).
 */
import { cpuSeconds, getHealth, startServer, wakeups } from './server-proc.js';
import { rssOf } from './mcp-client.js';
import { runProducers } from './producer.js';

export interface IdleRssOptions {
  root: string;
  port: number;
  /** idle time before each reading (the issue says 30 s) */
  idleMs: number;
  /** the burst: closed-loop producers flat out, to make the pool grow */
  burstMs: number;
  /** pool.threads of the server (default: its own, cores − 1) */
  threads?: number;
}

interface PoolHealth {
  threads: number;
  workers?: { now: number; max: number; grows: number; shrinks: number; recycles?: number; young_settle_gcs?: number; malloc_trim?: { available: boolean; trims: number; released_bytes: number } };
}

export interface IdleRssResult {
  threads_max: number | null;
  idle_ms: number;
  burst_ms: number;
  /** configured rings + input arena, MB */
  budget_mb: number;
  start_rss_mb: number;
  start_workers: number;
  start_scan_worker_running: boolean | null;
  burst_events_per_s: number;
  burst_peak_workers: number;
  burst_peak_rss_mb: number;
  burst_grows: number | null;
  after_burst_rss_mb: number;
  after_burst_workers: number;
  after_burst_shrinks: number | null;
  /** times the pool replaced its workers and input arena after idling (by the second reading) */
  after_burst_recycles: number | null;
  /** collections the pool ran after its recycle because main's young generation was still grown */
  after_burst_young_settle_gcs: number | null;
  /** glibc's malloc_trim after the recycle: calls, and the resident MB they gave back (null: not available there) */
  after_burst_malloc_trims: number | null;
  after_burst_malloc_trim_released_mb: number | null;
  /**
   * the daemon's CPU (all threads) and wake-ups per second: over the last IDLE_WINDOW_MS of the
   * idle spell after start, and over the IDLE_WINDOW_MS that follow the spell after the burst
   */
  start_cpu_ms_per_s: number;
  start_wakeups_per_s: number;
  after_burst_cpu_ms_per_s: number;
  after_burst_wakeups_per_s: number;
  /** ring bytes holding records after the burst, MB */
  after_burst_ring_data_mb: number;
  after_burst_rss_over_ring_data_mb: number;
}

type Health = Record<string, unknown> & { pool: PoolHealth; kinds: Record<string, { ring: { used_bytes: number; capacity_bytes: number } }>; scan_worker?: { running?: boolean } };

const MB = 1024 * 1024;

export async function runIdleRss(o: IdleRssOptions): Promise<IdleRssResult> {
  const srv = await startServer({ kind: 'gasoline', port: o.port, root: o.root, ...(o.threads !== undefined ? { threads: o.threads } : {}) });
  const health = async (): Promise<Health> => (await getHealth(o.port)) as Health;
  try {
    const quiet0 = await idleSpell(srv.pid, o.idleMs);
    const h0 = await health();
    const start = rssOf(srv.pid).rss_mb;
    const ringCapacity = Object.values(h0.kinds).reduce((n, k) => n + k.ring.capacity_bytes, 0);
    const arena = Number((h0.pool as unknown as { arena_capacity_bytes?: number }).arena_capacity_bytes ?? 0);

    // the burst, with the pool's size sampled while it runs
    let peakWorkers = h0.pool.threads;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const h = await health().catch(() => undefined);
        if (h) peakWorkers = Math.max(peakWorkers, h.pool.threads);
        await idle(200);
      }
    })();
    const res = await runProducers({ url: `ws://127.0.0.1:${o.port}/ws`, threads: 1, connectionsPerThread: 4, window: 16, mode: 'closed', durationMs: o.burstMs, drainMs: 5000 });
    sampling = false;
    await sampler;
    const hBurst = await health();
    const burstPeakRss = rssOf(srv.pid).hwm_mb;

    await idle(o.idleMs);
    const h1 = await health();
    const after = rssOf(srv.pid).rss_mb;
    // the wake-ups after a burst are read over the next 10 s: the recycle (15 s) retires threads
    // (their counts leave the sum) and its collections run until ~25 s (~21 s the young generation's)
    const quiet1 = await idleSpell(srv.pid, IDLE_WINDOW_MS);
    const ringData = Object.values(h1.kinds).reduce((n, k) => n + k.ring.used_bytes, 0) / MB;
    return {
      threads_max: h1.pool.workers?.max ?? null,
      idle_ms: o.idleMs,
      burst_ms: o.burstMs,
      budget_mb: Math.round((ringCapacity + arena) / MB),
      start_rss_mb: start,
      start_workers: h0.pool.threads,
      start_scan_worker_running: h0.scan_worker?.running ?? null,
      burst_events_per_s: res.events_per_s,
      burst_peak_workers: peakWorkers,
      burst_peak_rss_mb: burstPeakRss,
      burst_grows: hBurst.pool.workers?.grows ?? null,
      after_burst_rss_mb: after,
      after_burst_workers: h1.pool.threads,
      after_burst_shrinks: h1.pool.workers?.shrinks ?? null,
      after_burst_recycles: h1.pool.workers?.recycles ?? null,
      after_burst_young_settle_gcs: h1.pool.workers?.young_settle_gcs ?? null,
      after_burst_malloc_trims: h1.pool.workers?.malloc_trim?.available ? h1.pool.workers.malloc_trim.trims : null,
      after_burst_malloc_trim_released_mb: h1.pool.workers?.malloc_trim?.available ? Math.round((h1.pool.workers.malloc_trim.released_bytes / MB) * 10) / 10 : null,
      start_cpu_ms_per_s: quiet0.cpuMsPerS,
      start_wakeups_per_s: quiet0.wakeupsPerS,
      after_burst_cpu_ms_per_s: quiet1.cpuMsPerS,
      after_burst_wakeups_per_s: quiet1.wakeupsPerS,
      after_burst_ring_data_mb: Math.round(ringData * 10) / 10,
      after_burst_rss_over_ring_data_mb: Math.round(after - ringData),
    };
  } finally {
    await srv.stop();
  }
}

/**
 * The last part of an idle spell is what an idle hour costs: by then the pool has recycled (15 s)
 * and collected. CPU comes in clock ticks (10 ms), so over 10 s it reads to 1 ms a second.
 */
const IDLE_WINDOW_MS = 10_000;

/** Idles `ms`; the CPU and wake-ups per second of its last IDLE_WINDOW_MS (or all of it, if shorter). */
async function idleSpell(pid: number, ms: number): Promise<{ cpuMsPerS: number; wakeupsPerS: number }> {
  const window = Math.min(ms, IDLE_WINDOW_MS);
  await idle(ms - window);
  const cpu0 = cpuSeconds(pid);
  const w0 = wakeups(pid);
  const t0 = performance.now();
  await idle(window);
  const s = (performance.now() - t0) / 1000;
  return { cpuMsPerS: Math.round(((cpuSeconds(pid) - cpu0) * 1000 * 10) / s) / 10, wakeupsPerS: Math.round(((wakeups(pid) - w0) * 10) / s) / 10 };
}

function idle(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
