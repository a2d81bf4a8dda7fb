/**
 * The /health report (also configure({action:"health"})): counters from every part the app
 * built, read on demand. It leaves the process, so it passes the rule set in force.
 */
import type { Config } from './config.js';
import type { CommandRouter } from './clients/commands.js';
import type { ClientRegistry } from './clients/registry.js';
import type { CiResults } from './domain/ci-results.js';
import type { AlertHub } from './domain/alerts/hub.js';
import { KINDS } from './domain/kinds.js';
import { BUILTIN_RULES } from './domain/redaction/rules.js';
import type { HelperThreads } from './pool/helper-threads.js';
import type { IngestPool } from './pool/ingest-pool.js';
import type { ScanWorker } from './pool/scan-worker.js';
import type { DetectState } from './shm/detect-state.js';
import type { StoreReader } from './shm/index.js';
import type { Edge } from './transport/edge.js';
import { VERSION } from './version.js';

export interface HealthParts {
  config: Readonly<Config>;
  startedAt: number;
  reader: StoreReader;
  pool: IngestPool;
  scans: ScanWorker;
  edge: Edge;
  commands: CommandRouter;
  ci: CiResults;
  alerts: AlertHub;
  detect: DetectState;
  clients: ClientRegistry;
  /** pool.helper_threads: what was done to Node's and V8's own threads at start */
  helperThreads?: HelperThreads;
}

export function createHealth(p: HealthParts): () => Record<string, unknown> {
  // egress uses the rule set in force, including rules added at run time
  return () => p.pool.redaction.engine.redactValue(report(p)) as Record<string, unknown>;
}

function report(p: HealthParts): Record<string, unknown> {
  const { reader, pool, scans, edge, commands, ci, alerts, detect } = p;
  const counters = reader.counters();
  const kinds: Record<string, unknown> = {};
  KINDS.forEach((k, id) => {
    const c = counters[id]!;
    const r = reader.ringStats(id);
    kinds[k] = { ...c, ring: { used_bytes: r.usedBytes, capacity_bytes: r.capacity, records: r.records } };
  });
  const d = pool.dispatcher.stats;
  const producers = edge.ws.producers();
  return {
    status: 'ok',
    version: VERSION,
    uptime_s: Math.round((Date.now() - p.startedAt) / 1000),
    mode: p.config.mode,
    port: edge.port,
    extension: { connected: producers.some((x) => x.client === 'extension'), paired: producers.some((x) => x.client === 'extension' && x.verified), producers },
    pairing: edge.ws.pairingHealth(),
    kinds,
    pool: {
      threads: pool.threads,
      // elastic: workers now against the most it may grow to, and how often it grew and shrank
      workers: { now: pool.threads, max: pool.maxThreads, min: pool.minThreads, starting: pool.startingThreads, grows: pool.grows, shrinks: pool.shrinks, recycles: pool.recycles, recycle_waits_for: pool.recycleWaitsFor(), arena_release_gcs: pool.arenaReleaseGcs, young_settle_gcs: pool.youngSettleGcs, malloc_trim: { ...pool.mallocTrimSupport, trims: pool.mallocTrims, released_bytes: pool.mallocTrimReleasedBytes, last_ms: Math.round(pool.mallocTrimLastMs * 100) / 100 }, each: pool.workerStats() },
      // the periodic checks that watch ingest, each stopped (null) while the pool is quiet
      checks: pool.checks(),
      queue_depth: d.queuedItems,
      queued_bytes: d.queuedBytes,
      inflight_tasks: d.inflightTasks,
      inflight_items: d.inflightItems,
      utilization: Math.round(pool.utilization * 1000) / 1000,
      arena_used_bytes: pool.arena.used,
      arena_capacity_bytes: pool.arena.capacity,
      overloaded: pool.overloaded(),
      tasks: d.tasks,
      retried: d.retried,
      poisoned: d.poisoned,
      worker_crashes: pool.crashes,
      // pool.worker_nice: each worker's thread id and nice (Linux), or why it kept main's
      priority: pool.workerPriority,
      // pool.helper_threads: V8's and Node's own threads at SCHED_IDLE (how many), or why not
      helper_threads: p.helperThreads ?? { policy: 'normal', reason: 'not set at start' },
      // pool.worker_policy: the workers kept when quiet at SCHED_IDLE while they keep up; those replaced because they did not
      worker_policy: { policy: p.config.pool.worker_policy, idle_now: pool.workerStats().filter((w) => w.policy === 'idle').length, promotions: pool.promotions, draining: pool.drainingThreads, ...(pool.idleRefused ? { refused: pool.idleRefused } : {}) },
      // quiet producers' frames any worker took between items; taken_early is what it sped up
      ...(pool.express ? { express: { ...pool.express.stats } } : {}),
    },
    // observe's folded reads: refused = over the queue bound, failed = crash or timeout (replaced)
    // running: false until the first folded read starts the thread
    scan_worker: { running: scans.running, in_flight: scans.inFlight, ...scans.counts },
    edge: edge.stats.snapshot(),
    redaction: { redacted: { ...pool.redacted }, redaction_failed: pool.redactionFailed, rules_version: pool.redaction.version, builtin_rules: BUILTIN_RULES.length, user_rules: pool.redaction.rules.length },
    sessions: edge.ws.sessions.size,
    commands: { pending: commands.pendingCount, ...commands.stats },
    ci_results: ci.list().length,
    // per client: sessions, when seen, unread records still buffered (registry.ts ClientInfo)
    clients: p.clients.list(reader),
    // unpublished: raised in a worker but too large for an alert slot (a drop, so it is said)
    alerts: { ...alerts.stats, suppressed_at_source: detect.alertsSuppressed, detector_lock_skips: detect.lockSkips, unpublished: pool.alertsUnpublished },
  };
}
