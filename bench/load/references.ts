/**
 * Issue 22's in-run references: the same load and the same probe against the plain reference
 * server (reference-server.ts), measured in the same run as Gasoline and interleaved with it, so
 * the CI gate can judge ratios that the machine's neighbours move together instead of absolute
 * figures they move 2–3× from hour to hour.
 *
 *   ingest: closed-loop WebSocket throughput and server CPU per event, Gasoline (2 workers) ÷ the
 *           reference, alternating rounds; throughput by the medians, CPU per event by the minima
 *           (a neighbour only ever adds CPU time to a round, never takes it away);
 *   push:   send → notification line on stdout, sequential samples like the push probe's, against
 *           the reference, in the same seconds as the floor profile's; its push percentiles are
 *           divided by these. Twice: the plain reference, and the same along the hops a push
 *           behind a bridge takes (`--hops`: a worker thread and a relay process), whose ratio
 *           does not move with the machine's wake-up cost (reference-server.ts).
 */
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { Packr, unpack } from 'msgpackr';
import WebSocket from 'ws';
import { newHistogram, percentiles, type Percentiles } from './histogram.js';
import { startServer } from './server-proc.js';
import { runWsLoad, type WsLoadResult } from './ws-load.js';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** the least positive value (a round with no events has no cost to compare), 0 when none */
const least = (xs: number[]): number => {
  const p = xs.filter((x) => x > 0);
  return p.length ? Math.min(...p) : 0;
};

export interface IngestRefResult {
  rounds: number;
  round_ms: number;
  gasoline_events_per_s: number[];
  reference_events_per_s: number[];
  /** median Gasoline ÷ median reference */
  ratio: number;
  /** server CPU µs per accepted event (all threads, from /proc), each round */
  gasoline_cpu_us_per_event: number[];
  reference_cpu_us_per_event: number[];
  /**
   * least Gasoline ÷ least reference CPU per event over the rounds: what an event costs, which
   * neighbours move far less than throughput (they take wall time from a 3-thread server more than
   * from a 1-thread one). The least, not the median: a busy neighbour inflates a round's CPU per
   * event (fewer frames per task, colder caches) and never deflates it, so the least round is the
   * one nearest the build's own cost; medians read 13.4–20 on one healthy build.
   */
  cpu_cost_ratio: number;
  gasoline_verified: boolean;
  /** each Gasoline round's accounting, so a failed check says which */
  gasoline_checks: Array<{ verification: WsLoadResult['verification']; unacked: number; nacks: Record<string, number>; closes: Record<string, number>; resends: number }>;
}

/** Alternating closed-loop rounds: reference, Gasoline, reference, Gasoline, … */
export async function runIngestVsReference(o: { root: string; ports: () => Promise<number>; rounds: number; roundMs: number; serverThreads: number }): Promise<IngestRefResult> {
  const load = { durationMs: o.roundMs, threads: 1, connectionsPerThread: 4, window: 16 };
  const g: WsLoadResult[] = [];
  const r: WsLoadResult[] = [];
  for (let i = 0; i < o.rounds; i++) {
    r.push(await runWsLoad({ server: 'reference', port: await o.ports(), ...load }));
    g.push(await runWsLoad({ server: 'gasoline', port: await o.ports(), root: o.root, serverThreads: o.serverThreads, ...load }));
  }
  const ge = g.map((x) => x.events_per_s);
  const re = r.map((x) => x.events_per_s);
  const ref = median(re);
  const cost = (x: WsLoadResult): number => (x.events_per_s > 0 ? Math.round(((x.server_cpu_pct / 100) * 1e6 * 1000) / x.events_per_s) / 1000 : 0);
  const gc = g.map(cost);
  const rc = r.map(cost);
  return {
    rounds: o.rounds,
    round_ms: o.roundMs,
    gasoline_events_per_s: ge,
    reference_events_per_s: re,
    ratio: ref > 0 ? Math.round((median(ge) / ref) * 1000) / 1000 : 0,
    gasoline_verified: g.every((x) => x.verification?.ok === true),
    gasoline_checks: g.map((x) => ({ verification: x.verification, unacked: x.unacked, nacks: x.nacks, closes: x.closes, resends: x.resends })),
    gasoline_cpu_us_per_event: gc,
    reference_cpu_us_per_event: rc,
    cpu_cost_ratio: least(rc) > 0 ? Math.round((least(gc) / least(rc)) * 100) / 100 : 0,
  };
}

export interface PushRefResult {
  samples: number;
  missed: number;
  push_latency: Percentiles;
}

const packr = new Packr({ useRecords: true });

/**
 * The push probe's shape without MCP: one frame holding one 5xx network record with a unique URL,
 * stamped at send; the sample ends when the reference's stdout line naming that URL is read.
 */
export async function runPushReference(o: { port: number; durationMs: number; intervalMs: number; timeoutMs?: number; hops?: boolean }): Promise<PushRefResult> {
  const srv = await startServer({ kind: 'reference', port: o.port, hops: o.hops });
  const timeoutMs = o.timeoutMs ?? 2000;
  const ws = new WebSocket(`ws://127.0.0.1:${o.port}/ws`, { perMessageDeflate: false });
  try {
    const lines = createInterface({ input: srv.child.stdout! });
    let waiter: { token: string; resolve: (at: number | null) => void } | null = null;
    lines.on('line', (line) => {
      const at = performance.now();
      if (waiter && line.includes(waiter.token)) {
        const w = waiter;
        waiter = null;
        w.resolve(at);
      }
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.on('open', () => ws.send(packr.pack({ t: 'hello', v: 1, client: 'bench', version: 'probe-1', session: `ref-${process.pid}` })));
      ws.once('message', (d: Buffer) => ((unpack(d) as { t?: string }).t === 'welcome' ? resolve() : reject(new Error('reference: no welcome'))));
    });
    const h = newHistogram();
    let missed = 0;
    let i = 0;
    for (const end = performance.now() + o.durationMs; performance.now() < end; i++) {
      const token = `probe-ref-${i}`;
      const arrived = new Promise<number | null>((resolve) => {
        const t = setTimeout(() => {
          waiter = null;
          resolve(null);
        }, timeoutMs);
        waiter = { token, resolve: (at) => (clearTimeout(t), resolve(at)) };
      });
      const now = Date.now();
      const frame = packr.pack({ t: 'batch', seq: i + 1, sent_at: now, network: [{ ts: now, method: 'GET', url: `https://probe.example.test/${token}`, status: 503, duration: 12, initiator_type: 'fetch' }] });
      const t0 = performance.now();
      ws.send(frame);
      const at = await arrived;
      if (at === null) {
        missed++;
        h.recordValue(timeoutMs * 1000);
      } else h.recordValue(Math.max(1, Math.round((at - t0) * 1000)));
      await new Promise((r) => setTimeout(r, o.intervalMs));
    }
    lines.close();
    return { samples: i, missed, push_latency: percentiles(h) };
  } finally {
    ws.terminate();
    await srv.stop();
  }
}
