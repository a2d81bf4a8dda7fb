/**
 * Issue 7's load profiles against the real `bin/gasoline`, driven as an agent drives it: through
 * a bridge (MCP on the bridge's stdio, forwarded to the daemon that ingests; issue 16) or in
 * --standalone (MCP on stdio + ingest in one process), chosen per profile:
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
import { McpProc, toolText, type ProcMode } from './mcp-client.js';
import { runProducers, type ProducerRunResult } from './producer.js';
import { detectStreaming, startPushProbe, type PushProbeResult } from './push-probe.js';
import { cpuSeconds, getHealth, peakRssMb } from './server-proc.js';
import { type CallSplit, splitCalls, trailedCalls } from './trail-split.js';
import { droppedSum, kinds, total } from './ws-load.js';

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
  /** how the agent reaches the server: through a bridge (the default install) or standalone */
  mode: ProcMode;
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
  dropped_by_reason: Record<string, number>;
  unacked: number;
}

export interface ProfileResult {
  name: string;
  mode: ProcMode;
  /** bridge mode: the bridge process's peak RSS (the server figures are the daemon's) */
  bridge_peak_rss_mb: number | null;
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
  /** the loaded observe calls split into the daemon's part (its client trail) and the hops around it; null if unpaired */
  observe_split: CallSplit | null;
  /** the same observe call before the load started (the loaded p99 is divided by this one's) */
  observe_idle_latency: Percentiles;
  /** the untimed calls that read the seed before the profile: a fresh daemon compiling its read path */
  observe_warmup_latency: Percentiles;
  /** failed observe or configure calls */
  observe_errors: number;
  configure_latency: Percentiles;
  configure_action: string;
  server_cpu_pct: number;
  server_peak_rss_mb: number;
  ring_budget_mb: number;
  accounting: Accounting;
  stdout_bad_lines: number;
  notifications: number;
  /** alerts the detectors did not raise because the shared per-second allowance was used up (/health) */
  alerts_suppressed_at_source: number | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function producers(port: number, l: LoadSpec, durationMs: number, seed: number, drainMs = 5000): Promise<ProducerRunResult> {
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
    drainMs,
    mix: l.mix,
    seed,
    ...(l.totalEvents ? { totalEvents: l.totalEvents } : {}),
  });
}

export async function startServer(root: string, port: number, threads: number | undefined, mode: ProcMode, env?: NodeJS.ProcessEnv): Promise<McpProc> {
  const mcp = new McpProc({ root, port, mode, ...(threads !== undefined ? { threads } : {}), ...(env ? { env } : {}) });
  try {
    await mcp.start();
  } catch (e) {
    mcp.child.kill('SIGKILL');
    await mcp.stop(); // a daemon the bridge started must not outlive the failure
    throw e;
  }
  return mcp;
}

/**
 * Below saturation every batch is acknowledged, so Σ accepted must equal Δ stored exactly. Under
 * overload the producers stop while some batches are applied but their acks not yet read
 * (`unackedEvents`): then Δ stored may exceed Σ accepted by at most that much, never fall short.
 * Either way every stored event is readable or counted as evicted.
 */
export function accounting(before: Record<string, unknown>, after: Record<string, unknown>, accepted: number, unacked: number, unackedEvents = 0): Accounting {
  const storedDelta = total(after, (k) => k.stored) - total(before, (k) => k.stored);
  const storedMinusEvicted = total(after, (k) => k.stored - k.evicted - (k.cleared ?? 0));
  const ringRecords = total(after, (k) => k.ring.records);
  const storedOk = unackedEvents === 0 ? storedDelta === accepted && unacked === 0 : storedDelta >= accepted && storedDelta <= accepted + unackedEvents;
  return {
    ok: storedOk && storedMinusEvicted === ringRecords,
    accepted_from_acks: accepted,
    stored_delta: storedDelta,
    stored_minus_evicted: storedMinusEvicted,
    ring_records: ringRecords,
    evicted: total(after, (k) => k.evicted) - total(before, (k) => k.evicted),
    rejected_delta: total(after, (k) => k.rejected) - total(before, (k) => k.rejected),
    dropped_delta: total(after, droppedSum) - total(before, droppedSum),
    dropped_by_reason: droppedByReason(before, after),
    unacked,
  };
}

function droppedByReason(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [h, sign] of [[after, 1], [before, -1]] as const) {
    for (const k of kinds(h)) for (const [r, n] of Object.entries(k.dropped ?? {})) out[r] = (out[r] ?? 0) + sign * n;
  }
  return Object.fromEntries(Object.entries(out).filter(([, n]) => n !== 0));
}

/** Waits (bounded) until the pool has nothing queued or in flight, so the counters are final. */
export async function settled(port: number, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    const pool = (await getHealth(port)).pool as { queue_depth?: number; inflight_items?: number } | undefined;
    if (!pool || ((pool.queue_depth ?? 0) === 0 && (pool.inflight_items ?? 0) === 0)) return;
    await sleep(100);
  }
}

const suppressed = (h: Record<string, unknown>): number | null => {
  const v = (h.alerts as { suppressed_at_source?: unknown } | undefined)?.suppressed_at_source;
  return typeof v === 'number' ? v : null;
};

const sumNacks = (n: Record<string, number>): number => Object.values(n).reduce((a, b) => a + b, 0);

/** observe calls timed on the idle server before a profile's load: enough for a p99 that is not the maximum */
const IDLE_OBSERVES = 40;
/** the seed a daemon reads before the timed calls (see runProfile) */
const SEED_RATE = 20_000;
const SEED_MS = 2000;
const SEED_CALL_EVERY_MS = 150;
/**
 * The profile's own calls, at its cadence and under its load, before the timed ones; reported with
 * the seed's (observe_warmup_*). The seed's calls fold ~150 ms of data each: the timed calls' full
 * answers (500 groups, a fold that stops at its bound) and the rings' first wrap were still ahead,
 * and a fresh daemon's JIT compiled the read path again for them. In 60 s of `heavy` (59 calls) the
 * calls over 10 ms were among the first five, and `fromIndex` was optimized, thrown back and
 * compiled again three or four times in those seconds (8-16 ms a compile; --trace-deopt). An agent
 * pays that once per daemon (PERFORMANCE.md, "Thirteenth pass").
 */
export const LOADED_WARMUP_CALLS = 6;

/** steady / heavy / burst / soak: one server, one load (plus an optional burst), observe + probe. */
export async function runProfile(p: ProfileSpec): Promise<ProfileResult> {
  const mcp = await startServer(p.root, p.port, p.serverThreads, p.mode);
  try {
    const support = await detectStreaming(mcp);
    // an agent calling observe (and configure) every second while all this goes on; configure is
    // streaming status when the server has streaming, else health (said in configure_action)
    const configureArgs = support.available ? { action: 'streaming', streaming_action: 'status' } : { action: 'health' };
    // The first calls of a fresh process start the scan worker and compile the query path
    // (measured: 4–9 ms for the first few against ~0.5 ms warm); an agent pays that once per
    // daemon, so they are not counted.
    for (let i = 0; i < 3; i++) {
      await mcp.callTool('observe', { what: 'errors', limit: 50 });
      await mcp.callTool('configure', configureArgs);
    }
    // On an empty store those calls compile only the empty answer: the index walk, the fold, the
    // packing and the render of a full answer stayed cold, and the first four loaded calls took
    // 10–30 ms against ~5 ms after (2026-11-25). So the daemon then takes a short seed of the
    // profile's own mix while the same call reads it; those calls are reported apart
    // (observe_warmup_*).
    const obsWarm = newHistogram();
    if (p.observeEveryMs > 0) {
      const seeding = producers(p.port, { ...p.load, rate: Math.min(p.load.rate, SEED_RATE) }, SEED_MS, 7);
      let seeded = false;
      // both outcomes end the loop; a failed seed is thrown by the await below, inside the try whose
      // finally stops the daemon (a .finally() here would leave a second, unhandled rejection)
      seeding.then(
        () => (seeded = true),
        () => (seeded = true),
      );
      while (!seeded) {
        await sleep(SEED_CALL_EVERY_MS);
        obsWarm.recordValue((await mcp.callTool('observe', { what: 'errors', limit: 50 })).us);
      }
      await seeding;
    }
    // issue 22's reference for observe: the same call on this server before the profile's load
    // (after the seed, read already: nothing new to fold)
    const obsIdle = newHistogram();
    for (let i = 0; i < (p.observeEveryMs > 0 ? IDLE_OBSERVES : 0); i++) obsIdle.recordValue((await mcp.callTool('observe', { what: 'errors', limit: 50 })).us);
    const before = await getHealth(p.port);
    const budget = memoryBudgetMb(before);
    const cpu0 = cpuSeconds(mcp.pid);
    const t0 = performance.now();
    const probe = await startPushProbe({ mcp, port: p.port, support, intervalMs: p.probeEveryMs, tag: p.name });
    // the load runs longer by the warm-up calls' time, so the timed calls still span `durationMs`
    // (and the burst falls where it did among them)
    const warmCalls = p.observeEveryMs > 0 ? LOADED_WARMUP_CALLS : 0;
    const warmMs = warmCalls * p.observeEveryMs;
    const main = producers(p.port, p.load, p.durationMs + warmMs, 42);
    const burst = p.burst
      ? // 100 ms of slack past the burst's 2 s so the last due batches are still sent
        sleep(warmMs + p.burst.atMs).then(() => producers(p.port, { ...p.burst!, totalEvents: Math.round((p.burst!.rate * p.burst!.durationMs) / 1000) }, p.burst!.durationMs + 100, 4242))
      : Promise.resolve(null);

    const obs = newHistogram();
    const obsMs: number[] = [];
    const conf = newHistogram();
    let observeErrors = 0;
    let running = true;
    let warmLeft = warmCalls;
    const observing = (async () => {
      // 0: no agent reads during the profile (the push floor measures the bare path)
      while (running && p.observeEveryMs > 0) {
        await sleep(p.observeEveryMs);
        if (!running) break;
        const r = await mcp.callTool('observe', { what: 'errors', limit: 50 });
        if (warmLeft > 0) {
          warmLeft--;
          obsWarm.recordValue(r.us);
          if (toolText(r).isError) observeErrors++;
          const c = await mcp.callTool('configure', configureArgs);
          if (toolText(c).isError) observeErrors++;
          continue;
        }
        obs.recordValue(r.us);
        obsMs.push(r.us / 1000);
        if (toolText(r).isError) observeErrors++;
        const c = await mcp.callTool('configure', configureArgs);
        conf.recordValue(c.us);
        if (toolText(c).isError) observeErrors++;
      }
    })();

    const [m, b] = await Promise.all([main, burst]);
    running = false;
    await observing;
    const probeResult = await probe.stop();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(mcp.pid) - cpu0;
    await settled(p.port, 5000);
    await sleep(300); // the last commits reach the counters
    const after = await getHealth(p.port);
    // the trail's lines are on disk by now: they are written as each answer leaves, and settled() waited
    const serverMs = obsMs.length ? trailedCalls(mcp.stateDir, 'observe', obsMs.length) : null;
    const accepted = m.acceptedReported + (b?.acceptedReported ?? 0) + probeResult.accepted;
    const acct = accounting(before, after, accepted, m.unacked + (b?.unacked ?? 0));
    const runS = (p.durationMs + warmMs) / 1000;
    return {
      name: p.name,
      mode: p.mode,
      bridge_peak_rss_mb: p.mode === 'bridge' ? mcp.clientRss().hwm_mb : null,
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
      observe_split: serverMs ? splitCalls(obsMs, serverMs) : null,
      observe_idle_latency: percentiles(obsIdle),
      observe_warmup_latency: percentiles(obsWarm),
      observe_errors: observeErrors,
      configure_latency: percentiles(conf),
      configure_action: `${configureArgs.action}${'streaming_action' in configureArgs ? ` ${configureArgs.streaming_action}` : ''}`,
      server_cpu_pct: Math.round((cpu / seconds) * 100),
      server_peak_rss_mb: peakRssMb(mcp.pid),
      ring_budget_mb: budget,
      accounting: acct,
      stdout_bad_lines: mcp.badLines,
      notifications: mcp.notifications,
      alerts_suppressed_at_source: suppressed(after) === null ? null : suppressed(after)! - (suppressed(before) ?? 0),
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
  /** the extra step at the first nacking rate */
  hold: boolean;
}

export interface SaturateResult {
  steps: SaturateStep[];
  /** the most events/s accepted in any step (every one readable or evicted, checked below) */
  max_accepted_events_per_s: number;
  /** the highest offered rate accepted in full (≥ 95 %) with no nack */
  max_sustained_offered: number;
  /**
   * what the hold step (overload kept up for a whole step) accepted ÷ the most any step accepted:
   * whether refusing the excess leaves the server doing the rest at its maximum. null: no hold step
   */
  hold_over_max: number | null;
  step_ms: number;
  nacks_seen: boolean;
  overload_refused_cleanly: boolean;
  server_peak_rss_mb: number;
  ring_budget_mb: number;
  accounting: Accounting;
  health_after_ok: boolean;
  stdout_bad_lines: number;
}

/**
 * The configured memory budget: the rings plus the input arena, the two bounded buffers the
 * config sizes (rings.*, pool.input_bytes). Under overload the arena fills to its shed mark
 * (75 %), so it belongs in the budget that "RSS ≤ budget + 200 MB" is judged against.
 */
export function memoryBudgetMb(health: Awaited<ReturnType<typeof getHealth>>): number {
  const arena = Number((health as unknown as { pool?: { arena_capacity_bytes?: number } }).pool?.arena_capacity_bytes ?? 0);
  return Math.round((total(health, (k) => k.ring.capacity_bytes) + arena) / 1048576);
}

/** the untimed load a fresh daemon takes before saturate's first step (see runSaturate) */
const SATURATE_WARMUP_MS = 2000;

/** rates beyond the planned ones a machine that nacks none of them gets (×1.25 each) */
const EXTRA_STEPS = 4;

/**
 * Open-loop steps of rising rate on one server until a step sees nacks (past the planned rates
 * too, EXTRA_STEPS). The window is wide (8 sessions × 256 batches in flight, producers() below) so
 * that overload reaches admission control instead of stalling in the producer: the proof that
 * excess is refused, not buffered. Saturate measures ingest, which a bridge does not touch, so it
 * runs --standalone: then `--compare` measures it on builds from before the bridge too.
 */
export async function runSaturate(o: { root: string; port: number; rates: number[]; stepMs: number; probeEveryMs: number; serverThreads?: number }): Promise<SaturateResult> {
  const mcp = await startServer(o.root, o.port, o.serverThreads, 'standalone');
  try {
    const support = await detectStreaming(mcp);
    // A fresh daemon has one ingest worker and cold code: its first second at the first step's
    // rate measured its start-up, not its maximum (2026-12-01, a machine ~1.7x slower than the
    // one the steps were set on: nacks at 100 000 events/s within the first step, then no step
    // above it, while a warm daemon held 300 000). An agent meets a warm daemon; the warm-up is
    // untimed, and the accounting below starts after it. Its drain is short: the warm-up's own
    // nacks and resends once drained for 10 s, long enough for the pool to see 10 s without a
    // wait and shrink back to one worker just as the first step began.
    await producers(o.port, { rate: o.rates[0]!, mix: 'mixed', connections: 8, window: 256 }, SATURATE_WARMUP_MS, 4711, 1000);
    await settled(o.port, 5000);
    const before = await getHealth(o.port);
    const budget = memoryBudgetMb(before);
    const steps: SaturateStep[] = [];
    let accepted = 0;
    let unacked = 0;
    let unackedEvents = 0;
    // after the first step that sees nacks, one more at the same rate: overload held for a whole
    // step must stay refused and bounded (and by then the rings have filled, as they do in use)
    const plan = [...o.rates];
    let holding = false;
    for (let i = 0; i < plan.length; i++) {
      const rate = plan[i]!;
      const probe = await startPushProbe({ mcp, port: o.port, support, intervalMs: o.probeEveryMs, tag: `sat${rate}` });
      // CPU over the send window, the same window accepted events/s is counted in: an overloaded
      // step then waits up to 10 s for its last acks, and that idle tail used to read as ~40 %
      const cpu0 = cpuSeconds(mcp.pid);
      let cpuInWindow: number | undefined;
      const windowEnd = setTimeout(() => (cpuInWindow = cpuSeconds(mcp.pid) - cpu0), o.stepMs);
      const t0 = performance.now();
      const r = await producers(o.port, { rate, mix: 'mixed', connections: 8, window: 256 }, o.stepMs, rate, 10_000);
      clearTimeout(windowEnd);
      const cpuPct = cpuInWindow !== undefined ? (cpuInWindow / (o.stepMs / 1000)) * 100 : ((cpuSeconds(mcp.pid) - cpu0) / ((performance.now() - t0) / 1000)) * 100;
      const pr = await probe.stop();
      accepted += r.acceptedReported + pr.accepted;
      unacked += r.unacked;
      unackedEvents += r.unacked * 100;
      const nacked = sumNacks(r.nacks) + sumNacks(r.errorFrames);
      steps.push({
        offered_events_per_s: rate,
        accepted_events_per_s: r.events_per_s,
        nacked_batches: nacked,
        ack_latency: r.ack_latency,
        push: pr,
        server_cpu_pct: Math.round(cpuPct),
        rss_mb: peakRssMb(mcp.pid),
        hold: holding,
      });
      if (holding) break; // the hold step is done
      if (nacked > 0) {
        holding = true;
        plan.splice(i + 1, plan.length, rate);
      } else if (i === plan.length - 1 && plan.length < o.rates.length + EXTRA_STEPS) {
        // no nack yet at the plan's top: a faster machine; the proof needs the overload, so go on
        plan.push(Math.round((rate * 1.25) / 50_000) * 50_000);
      }
      await settled(o.port, 5000); // let the queue empty between steps
    }
    await settled(o.port, 10_000);
    await sleep(300);
    let healthOk = true;
    let after: Record<string, unknown> = before;
    try {
      after = await getHealth(o.port);
    } catch {
      healthOk = false;
    }
    const acct = accounting(before, after, accepted, unacked, unackedEvents);
    const rss = peakRssMb(mcp.pid);
    const nacksSeen = steps.some((s) => s.nacked_batches > 0);
    const sustained = steps.filter((s) => s.nacked_batches === 0 && s.accepted_events_per_s >= 0.95 * s.offered_events_per_s);
    const max = Math.max(0, ...steps.map((s) => s.accepted_events_per_s));
    const held = steps.find((s) => s.hold);
    return {
      steps,
      max_accepted_events_per_s: max,
      hold_over_max: held && max > 0 ? Math.round((held.accepted_events_per_s / max) * 100) / 100 : null,
      max_sustained_offered: Math.max(0, ...sustained.map((s) => s.offered_events_per_s)),
      step_ms: o.stepMs,
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
