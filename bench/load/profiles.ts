/**
 * Issue 7's load profiles against the real `bin/gasoline` in its default embedded mode (MCP on
 * stdio + ingest on loopback, one process), so ingest, tools and pushes share one event loop as
 * they do for a user:
 *
 *   steady    2 000 events/s mixed kinds, observe every second, streaming on, push probe
 *   heavy     20 000 events/s: 5 000 network records/s + 15 000 console lines/s
 *   burst     steady + 50 000 5xx network records in 2 s in the middle
 *   saturate  open-loop ramp until the server nacks: the most it accepts, and proof the rest is
 *             refused (nack) with memory bounded, every accepted event still readable
 *   soak      steady for 10 minutes (not in CI)
 *
 * Every load is bounded in time and count and goes to 127.0.0.1 only. Latencies are HDR
 * percentiles; CPU is the server process's utime+stime (all threads), RSS its VmHWM.
 */
import { performance } from 'node:perf_hooks';
import type { Mix } from './frames.js';
import { newHistogram, percentiles, type Percentiles } from './histogram.js';
import { McpProc, toolText } from './mcp-client.js';
import { runProducers, type ProducerRunResult } from './producer.js';
import { detectStreaming, startPushProbe, type PushProbeResult } from './push-probe.js';
import { cpuSeconds, getHealth, peakRssMb } from './server-proc.js';
import { droppedSum, total } from './ws-load.js';

export interface LoadSpec {
  /** events/s, open loop */
  rate: number;
  mix: Mix;
  connections: number;
  window?: number;
  /** exactly this many events, then stop (the burst) */
  totalEvents?: number;
}

export interface ProfileSpec {
  name: string;
  root: string;
  port: number;
  durationMs: number;
  load: LoadSpec;
  /** extra load started `atMs` into the run (burst) */
  burst?: LoadSpec & { atMs: number; durationMs: number };
  observeEveryMs: number;
  probeEveryMs: number;
  serverThreads?: number;
}

export interface Accounting {
  ok: boolean;
  accepted_from_acks: number;
  stored_delta: number;
  stored_minus_evicted: number;
  ring_records: number;
  evicted: number;
  rejected_delta: number;
  dropped_delta: number;
  unacked: number;
}

export interface ProfileResult {
  name: string;
  duration_s: number;
  offered_events_per_s: number;
  accepted_events_per_s: number;
  /** nack frames × 100 events per batch, per second of the run */
  nacked_events_per_s: number;
  nacks: Record<string, number>;
  ack_latency: Percentiles;
  burst: (Pick<ProducerRunResult, 'events_per_s' | 'acceptedReported' | 'nacks'> & { ack_latency: Percentiles; offered_events: number }) | null;
  push: PushProbeResult;
  observe_latency: Percentiles;
  observe_errors: number;
  server_cpu_pct: number;
  server_peak_rss_mb: number;
  ring_budget_mb: number;
  accounting: Accounting;
  stdout_bad_lines: number;
  notifications: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function producers(port: number, l: LoadSpec, durationMs: number, seed: number): Promise<ProducerRunResult> {
  // one producer thread per 4 connections; the bench's main thread stays free for the probe
  const threads = Math.max(1, Math.ceil(l.connections / 4));
  return runProducers({
    url: `ws://127.0.0.1:${port}/ws`,
    threads,
    connectionsPerThread: Math.max(1, Math.round(l.connections / threads)),
    window: l.window ?? 16,
    mode: 'open',
    rate: l.rate,
    durationMs,
    drainMs: 5000,
    mix: l.mix,
    seed,
    ...(l.totalEvents ? { totalEvents: l.totalEvents } : {}),
  });
}

async function startServer(root: string, port: number, threads: number | undefined): Promise<McpProc> {
  const mcp = new McpProc({ root, port, ...(threads !== undefined ? { threads } : {}) });
  try {
    await mcp.start();
  } catch (e) {
    mcp.child.kill('SIGKILL');
    throw e;
  }
  return mcp;
}

function accounting(before: Record<string, unknown>, after: Record<string, unknown>, accepted: number, unacked: number): Accounting {
  const storedDelta = total(after, (k) => k.stored) - total(before, (k) => k.stored);
  const storedMinusEvicted = total(after, (k) => k.stored - k.evicted - (k.cleared ?? 0));
  const ringRecords = total(after, (k) => k.ring.records);
  return {
    ok: storedDelta === accepted && storedMinusEvicted === ringRecords && unacked === 0,
    accepted_from_acks: accepted,
    stored_delta: storedDelta,
    stored_minus_evicted: storedMinusEvicted,
    ring_records: ringRecords,
    evicted: total(after, (k) => k.evicted) - total(before, (k) => k.evicted),
    rejected_delta: total(after, (k) => k.rejected) - total(before, (k) => k.rejected),
    dropped_delta: total(after, droppedSum) - total(before, droppedSum),
    unacked,
  };
}

const sumNacks = (n: Record<string, number>): number => Object.values(n).reduce((a, b) => a + b, 0);

/** steady / heavy / burst / soak: one server, one load (plus an optional burst), observe + probe. */
export async function runProfile(p: ProfileSpec): Promise<ProfileResult> {
  const mcp = await startServer(p.root, p.port, p.serverThreads);
  try {
    const support = await detectStreaming(mcp);
    const before = await getHealth(p.port);
    const budget = Math.round(total(before, (k) => k.ring.capacity_bytes) / 1048576);
    const cpu0 = cpuSeconds(mcp.pid);
    const t0 = performance.now();
    const probe = await startPushProbe({ mcp, port: p.port, support, intervalMs: p.probeEveryMs, tag: p.name });
    const main = producers(p.port, p.load, p.durationMs, 42);
    const burst = p.burst
      ? // 100 ms of slack past the burst's 2 s so the last due batches are still sent
        sleep(p.burst.atMs).then(() => producers(p.port, { ...p.burst!, totalEvents: Math.round((p.burst!.rate * p.burst!.durationMs) / 1000) }, p.burst!.durationMs + 100, 4242))
      : Promise.resolve(null);

    // an agent calling observe every second while all this goes on
    const obs = newHistogram();
    let observeErrors = 0;
    let running = true;
    const observing = (async () => {
      while (running) {
        await sleep(p.observeEveryMs);
        if (!running) break;
        const r = await mcp.callTool('observe', { what: 'errors', limit: 50 });
        obs.recordValue(r.us);
        if (toolText(r).isError) observeErrors++;
      }
    })();

    const [m, b] = await Promise.all([main, burst]);
    running = false;
    await observing;
    const probeResult = await probe.stop();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(mcp.pid) - cpu0;
    await sleep(300); // the last commits reach the counters
    const after = await getHealth(p.port);
    const accepted = m.acceptedReported + (b?.acceptedReported ?? 0) + probeResult.accepted;
    const acct = accounting(before, after, accepted, m.unacked + (b?.unacked ?? 0));
    const runS = p.durationMs / 1000;
    return {
      name: p.name,
      duration_s: Math.round(seconds * 10) / 10,
      offered_events_per_s: p.load.rate,
      accepted_events_per_s: m.events_per_s,
      nacked_events_per_s: Math.round(((sumNacks(m.nacks) + sumNacks(b?.nacks ?? {})) * 100) / runS),
      nacks: { ...m.nacks, ...m.errorFrames },
      ack_latency: m.ack_latency,
      burst: b
        ? { events_per_s: b.events_per_s, acceptedReported: b.acceptedReported, nacks: { ...b.nacks, ...b.errorFrames }, ack_latency: b.ack_latency, offered_events: Math.round((p.burst!.rate * p.burst!.durationMs) / 1000) }
        : null,
      push: probeResult,
      observe_latency: percentiles(obs),
      observe_errors: observeErrors,
      server_cpu_pct: Math.round((cpu / seconds) * 100),
      server_peak_rss_mb: peakRssMb(mcp.pid),
      ring_budget_mb: budget,
      accounting: acct,
      stdout_bad_lines: mcp.badLines,
      notifications: mcp.notifications,
    };
  } finally {
    await mcp.stop();
  }
}

export interface SaturateStep {
  offered_events_per_s: number;
  accepted_events_per_s: number;
  nacked_batches: number;
  ack_latency: Percentiles;
  push: PushProbeResult;
  server_cpu_pct: number;
  rss_mb: number;
}

export interface SaturateResult {
  steps: SaturateStep[];
  /** the most events/s accepted in any step (every one readable or evicted, checked below) */
  max_accepted_events_per_s: number;
  /** the highest offered rate accepted in full (≥ 95 %) with no nack */
  max_sustained_offered: number;
  nacks_seen: boolean;
  overload_refused_cleanly: boolean;
  server_peak_rss_mb: number;
  ring_budget_mb: number;
  accounting: Accounting;
  health_after_ok: boolean;
  stdout_bad_lines: number;
}

/**
 * Open-loop steps of rising rate on one server until a step sees nacks. The window is wide (8
 * sessions × 128 batches ≈ 20 MB in flight) so that overload reaches admission control instead of
 * stalling in the producer: the proof that excess is refused, not buffered.
 */
export async function runSaturate(o: { root: string; port: number; rates: number[]; stepMs: number; probeEveryMs: number; serverThreads?: number }): Promise<SaturateResult> {
  const mcp = await startServer(o.root, o.port, o.serverThreads);
  try {
    const support = await detectStreaming(mcp);
    const before = await getHealth(o.port);
    const budget = Math.round(total(before, (k) => k.ring.capacity_bytes) / 1048576);
    const steps: SaturateStep[] = [];
    let accepted = 0;
    let unacked = 0;
    for (const rate of o.rates) {
      const cpu0 = cpuSeconds(mcp.pid);
      const t0 = performance.now();
      const probe = await startPushProbe({ mcp, port: o.port, support, intervalMs: o.probeEveryMs, tag: `sat${rate}` });
      const r = await producers(o.port, { rate, mix: 'mixed', connections: 8, window: 256 }, o.stepMs, rate);
      const pr = await probe.stop();
      const seconds = (performance.now() - t0) / 1000;
      accepted += r.acceptedReported + pr.accepted;
      unacked += r.unacked;
      const nacked = sumNacks(r.nacks) + sumNacks(r.errorFrames);
      steps.push({
        offered_events_per_s: rate,
        accepted_events_per_s: r.events_per_s,
        nacked_batches: nacked,
        ack_latency: r.ack_latency,
        push: pr,
        server_cpu_pct: Math.round(((cpuSeconds(mcp.pid) - cpu0) / seconds) * 100),
        rss_mb: peakRssMb(mcp.pid),
      });
      if (nacked > 0) break;
      await sleep(500); // let the queue empty between steps
    }
    await sleep(300);
    let healthOk = true;
    let after: Record<string, unknown> = before;
    try {
      after = await getHealth(o.port);
    } catch {
      healthOk = false;
    }
    const acct = accounting(before, after, accepted, unacked);
    const rss = peakRssMb(mcp.pid);
    const nacksSeen = steps.some((s) => s.nacked_batches > 0);
    const sustained = steps.filter((s) => s.nacked_batches === 0 && s.accepted_events_per_s >= 0.95 * s.offered_events_per_s);
    return {
      steps,
      max_accepted_events_per_s: Math.max(0, ...steps.map((s) => s.accepted_events_per_s)),
      max_sustained_offered: Math.max(0, ...sustained.map((s) => s.offered_events_per_s)),
      nacks_seen: nacksSeen,
      overload_refused_cleanly: nacksSeen && healthOk && acct.ok && rss <= budget + 200,
      server_peak_rss_mb: rss,
      ring_budget_mb: budget,
      accounting: acct,
      health_after_ok: healthOk,
      stdout_bad_lines: mcp.badLines,
    };
  } finally {
    await mcp.stop();
  }
}
