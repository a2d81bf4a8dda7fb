/**
 * GET /metrics: the app's figures in Prometheus text format, through prom-client. Nothing is
 * counted twice: every ingest figure is read at scrape time from the source /health reads (the
 * shared-memory counters, the pool, the edge stats), and only what has no other home — the push
 * and tool-call latency histograms — is observed here. One registry per app: several apps run in
 * one test process, and a global registry would mix their figures.
 *
 * prom-client is loaded, and the registry built, on the first scrape: with its process collectors
 * it is ~14 MB of RSS that an idle daemon nobody scrapes should not hold (issue 17). Nothing is
 * lost by waiting: the figures are read at scrape time anyway, and the two histograms are plain
 * numbers kept from the start (metrics-histogram.ts).
 *
 * Cardinality is bounded by construction: label values are our kinds, drop reasons, error codes
 * and tool names, never page or user data; a map whose keys we do not fully control goes through
 * `boundedLabel` (a safe shape, at most MAX_LABEL_VALUES distinct values, the rest as "other").
 */
import type { Registry } from 'prom-client';
import type { AlertHub } from './domain/alerts/hub.js';
import { KINDS } from './domain/kinds.js';
import type { IngestPool } from './pool/ingest-pool.js';
import type { ScanWorker } from './pool/scan-worker.js';
import { DROP_REASONS, type KindCounters, type StoreReader } from './shm/index.js';
import type { EdgeStats } from './transport/edge-stats.js';
import { FixedHistogram } from './metrics-histogram.js';
import { VERSION } from './version.js';

type Prom = typeof import('prom-client');

const PREFIX = 'gasoline_';
const MAX_LABEL_VALUES = 32;
const LABEL_SHAPE = /^[a-z0-9_]{1,40}$/;

/** a push is ~1 ms end to end when idle, 5 ms is the p99 target, seconds mean something is wrong */
const PUSH_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** tool calls: a cursor read is ~2 ms, a folded scan tens of ms, a page command up to its wait */
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsParts {
  reader: StoreReader;
  pool: IngestPool;
  scans: ScanWorker;
  stats: EdgeStats;
  alerts: AlertHub;
  /** producer sessions the edge keeps (resumable), connected or not */
  producerSessions: () => number;
}

/** What a gauge hook reads when scraped; a part registers it once it exists (sessions, clients). */
export type GaugeSource = () => number;

/** Gauges other parts feed later (the /mcp transport, the client registry); 0 until they do. */
const HOOK_GAUGES: Record<string, string> = {
  gasoline_mcp_sessions: 'MCP sessions open on /mcp (streamable HTTP), each with its SSE stream',
  gasoline_clients_connected: 'MCP clients with at least one open session',
};

export class Metrics {
  /** built on the first scrape, with prom-client */
  private registry: Registry | undefined;
  private building: Promise<{ prom: Prom; registry: Registry }> | undefined;
  private prom: Prom | undefined;
  private readonly toolCalls = new FixedHistogram<'tool' | 'outcome'>(`${PREFIX}tool_call_duration_seconds`, 'MCP tool calls, from arguments parsed to result built, by tool and outcome', CALL_BUCKETS, ['tool', 'outcome']);
  private readonly pushLatency = new FixedHistogram(`${PREFIX}push_latency_seconds`, 'Streamed alerts, from the event at the edge to the notification written', PUSH_BUCKETS);
  private readonly sources = new Map<string, GaugeSource>();
  /** help of the hook gauges, registered when the registry is built */
  private readonly hookHelp = new Map<string, string>();
  /** label values seen per metric family, so an unexpected key cannot grow a family past the cap */
  private readonly seen = new Map<string, Set<string>>();
  /** one counter snapshot per scrape, so received = stored + rejected + dropped holds in it */
  private snap: KindCounters[] = [];

  constructor(private readonly p: MetricsParts) {
    for (const [name, help] of Object.entries(HOOK_GAUGES)) this.gauge(name, help, () => 0);
  }

  /**
   * A gauge read at scrape time. Naming one that exists (the hook gauges above) replaces its
   * source: the part that owns the figure registers it once it is built.
   */
  gauge(name: string, help: string, read: GaugeSource): void {
    const known = this.sources.has(name);
    this.sources.set(name, read);
    if (known) return;
    this.hookHelp.set(name, help);
    if (this.registry && this.prom) this.registerHook(this.prom, this.registry, name, help);
  }

  private registerHook(prom: Prom, registry: Registry, name: string, help: string): void {
    const sources = this.sources;
    new prom.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(finite(sources.get(name)!()));
      },
    });
  }

  /** A tool call's duration; `tool` is one of the tools the dispatcher registered (a fixed set). */
  toolCall(tool: string, ms: number, isError: boolean): void {
    this.toolCalls.observe({ tool: this.boundedLabel('tool', tool), outcome: isError ? 'error' : 'ok' }, Math.max(0, ms) / 1000);
  }

  /** A streamed alert's edge → written latency (the figure streaming status reports as latency_ms). */
  push(ms: number): void {
    if (Number.isFinite(ms)) this.pushLatency.observe({}, Math.max(0, ms) / 1000);
  }

  /** The exposition text: this app's figures, then the process's. */
  async text(): Promise<string> {
    const { prom, registry } = await (this.building ??= this.build());
    this.snap = this.p.reader.counters();
    const own = await registry.metrics();
    return own + this.toolCalls.text() + this.pushLatency.text() + (await processRegistry(prom).metrics());
  }

  private async build(): Promise<{ prom: Prom; registry: Registry }> {
    const prom = await import('prom-client');
    const registry = new prom.Registry();
    this.prom = prom;
    this.registry = registry;
    new prom.Gauge({ name: `${PREFIX}info`, help: 'The running version (always 1)', labelNames: ['version'], registers: [registry] }).set({ version: VERSION }, 1);
    for (const [name, help] of this.hookHelp) this.registerHook(prom, registry, name, help);
    this.ingest();
    this.edge();
    this.workers();
    return { prom, registry };
  }

  /** Per kind: what arrived, what was kept, refused or dropped (and why), and the rings. */
  private ingest(): void {
    const { reader } = this.p;
    const perKind = (field: 'received' | 'stored' | 'rejected' | 'evicted' | 'cleared', help: string): void => {
      this.counter(`records_${field}_total`, help, ['kind'], (set) => {
        KINDS.forEach((k, id) => {
          set({ kind: k }, this.snap[id]?.[field] ?? 0);
        });
      });
    };
    perKind('received', 'Records received from producers, per kind (received = stored + rejected + dropped)');
    perKind('stored', 'Records stored in the ring, per kind');
    perKind('rejected', 'Records refused by validation, per kind');
    perKind('evicted', 'Records overwritten by newer ones in a full ring, per kind');
    perKind('cleared', 'Records removed by configure clear, per kind');
    this.counter('records_dropped_total', 'Records dropped, per kind and reason', ['kind', 'reason'], (set) => {
      KINDS.forEach((k, id) => {
        for (const r of DROP_REASONS) set({ kind: k, reason: r }, this.snap[id]?.dropped[r] ?? 0);
      });
    });
    const ring = (name: string, help: string, pick: (s: ReturnType<StoreReader['ringStats']>) => number): void => {
      this.collected(name, help, ['kind'], (set) => {
        KINDS.forEach((k, id) => {
          set({ kind: k }, pick(reader.ringStats(id)));
        });
      });
    };
    ring('ring_used_bytes', 'Bytes of the ring holding readable records, per kind', (s) => s.usedBytes);
    ring('ring_capacity_bytes', 'Ring size, per kind', (s) => s.capacity);
    ring('ring_records', 'Readable records in the ring, per kind', (s) => s.records);
  }

  /** The edge: frames, connections, and every refusal by its error code. */
  private edge(): void {
    const { stats } = this.p;
    this.counter('frames_received_total', 'WebSocket frames received', [], (set) => set({}, stats.framesReceived));
    this.counter('received_bytes_total', 'Bytes received in WebSocket frames', [], (set) => set({}, stats.bytesReceived));
    this.counter('connections_total', 'WebSocket connections accepted', [], (set) => set({}, stats.connectionsTotal));
    this.collected('connections_open', 'WebSocket connections open', [], (set) => set({}, stats.connectionsOpen));
    this.collected('producer_sessions', 'Producer sessions kept for resume, connected or not', [], (set) => set({}, this.p.producerSessions()));
    this.counter('http_requests_total', 'HTTP requests', [], (set) => set({}, stats.httpRequests));
    this.counter('acks_sent_total', 'Acks sent to producers', [], (set) => set({}, stats.acksSent));
    const byCode = (name: string, help: string, label: string, map: Record<string, number>): void => {
      this.counter(name, help, [label], (set) => this.bounded(name, map, (v, n) => set({ [label]: v }, n)));
    };
    byCode('edge_refused_total', 'Connections or frames refused at the edge, by error code', 'code', stats.refused);
    byCode('frame_errors_total', 'Frames answered with an error, by error code', 'code', stats.frameErrors);
    byCode('nacks_total', 'Batches nacked, by error code', 'code', stats.nacks);
    byCode('ws_closes_total', 'WebSocket closes, by reason', 'reason', stats.closes);
    byCode('http_responses_total', 'HTTP responses, by status', 'status', stats.httpStatus);
  }

  /** The ingest pool, the scan worker, redaction and alerts. */
  private workers(): void {
    const { pool, scans, alerts } = this.p;
    const d = pool.dispatcher;
    this.collected('pool_threads', 'Ingest worker threads taking tasks now', [], (set) => set({}, pool.threads));
    this.collected('pool_threads_max', 'Ingest worker threads the pool may grow to', [], (set) => set({}, pool.maxThreads));
    this.counter('pool_grows_total', 'Ingest workers added under sustained queueing', [], (set) => set({}, pool.grows));
    this.counter('pool_shrinks_total', 'Ingest workers removed after idling', [], (set) => set({}, pool.shrinks));
    this.collected('pool_queued_items', 'Items waiting in the dispatcher', [], (set) => set({}, d.stats.queuedItems));
    this.collected('pool_queued_bytes', 'Bytes waiting in the dispatcher', [], (set) => set({}, d.stats.queuedBytes));
    this.collected('pool_inflight_tasks', 'Tasks running in the ingest workers', [], (set) => set({}, d.stats.inflightTasks));
    this.collected('pool_overloaded', '1 while admission control refuses new work', [], (set) => set({}, pool.overloaded() ? 1 : 0));
    this.collected('arena_used_bytes', 'Input arena bytes holding frames and bodies not yet ingested', [], (set) => set({}, pool.arena.used));
    this.collected('arena_capacity_bytes', 'Input arena size', [], (set) => set({}, pool.arena.capacity));
    this.counter('pool_tasks_total', 'Tasks handed to the ingest workers', [], (set) => set({}, d.stats.tasks));
    this.counter('pool_retried_total', 'Items retried after a worker crash', [], (set) => set({}, d.stats.retried));
    this.counter('pool_poisoned_total', 'Items that crashed a worker twice (refused as poison)', [], (set) => set({}, d.stats.poisoned));
    this.counter('worker_crashes_total', 'Ingest worker crashes', [], (set) => set({}, pool.crashes));
    this.counter('scan_queries_total', 'Folded reads run by the scan worker', [], (set) => set({}, scans.counts.queries));
    this.counter('scan_failed_total', 'Folded reads that failed (crash or timeout)', [], (set) => set({}, scans.counts.failed));
    this.counter('scan_refused_total', 'Folded reads refused over the queue bound', [], (set) => set({}, scans.counts.refused));
    this.counter('redacted_total', 'Secrets redacted at ingest, by class (counts, never values)', ['class'], (set) => this.bounded('redacted_total', pool.redacted, (v, n) => set({ class: v }, n)));
    this.counter('redaction_failed_total', 'Records whose redaction failed (kept with metadata only)', [], (set) => set({}, pool.redactionFailed));
    this.counter('alerts_published_total', 'Alerts fanned out to MCP sessions', [], (set) => set({}, alerts.stats.published));
    this.counter('alerts_missed_total', 'Alerts overwritten in the alert ring before main read them', [], (set) => set({}, alerts.stats.missed));
    this.counter('alerts_unpublished_total', 'Alerts raised in a worker but too large for an alert slot', [], (set) => set({}, pool.alertsUnpublished));
  }

  /** A counter whose value lives elsewhere: set from its source at every scrape. */
  private counter<L extends string>(name: string, help: string, labelNames: L[], read: (set: (labels: Partial<Record<L, string>>, v: number) => void) => void): void {
    new this.prom!.Counter<L>({
      name: `${PREFIX}${name}`,
      help,
      labelNames,
      registers: [this.registry!],
      collect() {
        this.reset();
        read((labels, v) => this.inc(labels, Math.max(0, finite(v))));
      },
    });
  }

  /** A gauge read from its source at every scrape. */
  private collected<L extends string>(name: string, help: string, labelNames: L[], read: (set: (labels: Partial<Record<L, string>>, v: number) => void) => void): void {
    new this.prom!.Gauge<L>({
      name: `${PREFIX}${name}`,
      help,
      labelNames,
      registers: [this.registry!],
      collect() {
        this.reset();
        read((labels, v) => this.set(labels, finite(v)));
      },
    });
  }

  /** Walks a map of counts keyed by code, folding keys past the cap (or of a foreign shape) into "other". */
  private bounded(family: string, map: Record<string, number>, set: (value: string, n: number) => void): void {
    const sums = new Map<string, number>();
    for (const [k, n] of Object.entries(map)) {
      const v = this.boundedLabel(family, k);
      sums.set(v, (sums.get(v) ?? 0) + n);
    }
    for (const [v, n] of sums) set(v, n);
  }

  private boundedLabel(family: string, value: string): string {
    let seen = this.seen.get(family);
    if (!seen) this.seen.set(family, (seen = new Set()));
    if (seen.has(value)) return value;
    if (!LABEL_SHAPE.test(value) || seen.size >= MAX_LABEL_VALUES) return 'other';
    seen.add(value);
    return value;
  }
}

function finite(n: number): number {
  return Number.isFinite(n) ? n : 0;
}

let processReg: Registry | undefined;
/**
 * CPU, memory, event-loop lag, GC, handles: facts about the process, not about one app, and
 * prom-client's collector starts observers that live as long as the process. So one registry per
 * process, made on first use, appended to every app's text.
 */
function processRegistry(prom: Prom): Registry {
  if (!processReg) {
    processReg = new prom.Registry();
    prom.collectDefaultMetrics({ register: processReg, prefix: PREFIX });
  }
  return processReg;
}
