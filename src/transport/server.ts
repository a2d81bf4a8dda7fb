/**
 * The ingest server: shared store, worker pool, uWS app with /ws and the HTTP routes, bound to
 * 127.0.0.1 only. Workers are warmed up before the port opens.
 */
import { connect } from 'node:net';
import type { Config } from '../config.js';
import { KINDS } from '../domain/kinds.js';
import { CiResults, CiResultSchema, type CiResult } from '../domain/ci-results.js';
import { AlertHub } from '../domain/alerts/hub.js';
import { ThresholdTracker } from '../domain/alerts/thresholds.js';
import { ciAlert } from '../domain/alerts/ci-alert.js';
import { AlertRingReader } from '../shm/alert-ring.js';
import { DetectState } from '../shm/detect-state.js';
import { IngestPool } from '../pool/ingest-pool.js';
import { allocateStore, StoreReader, type StoreBuffers } from '../shm/index.js';
import { ScanWorker } from '../pool/scan-worker.js';
import { log } from '../log.js';
import { VERSION } from '../version.js';
import { EdgeStats } from './edge-stats.js';
import { createGuard } from './guard.js';
import { HttpEdge } from './http.js';
import { uws, type us_listen_socket } from './uws.js';
import { WsEdge, type WsEdgeOptions } from './ws.js';
import { CommandRouter } from '../clients/commands.js';

/**
 * uWS listens with SO_REUSEPORT, so a second server on the same port would silently share it
 * (and its exclusive mode drops SO_REUSEADDR, so it cannot rebind while old connections
 * linger). So before listening we knock: if something accepts a connection, the port is taken.
 */
function someoneListens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    const done = (taken: boolean): void => {
      sock.destroy();
      resolve(taken);
    };
    sock.setTimeout(1000, () => done(true)); // a listener too busy to accept is still a listener
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

export class PortInUseError extends Error {
  override name = 'PortInUseError';
  constructor(readonly port: number) {
    super(`port ${port} on 127.0.0.1 is already in use (another gasoline?); pick another with --port or GASOLINE_PORT`);
  }
}

export interface IngestServerOptions {
  config: Readonly<Config>;
  /** testing only: lets a batch with page_url "gasoline:crash" kill its worker */
  faultInjection?: boolean;
  onResult?: WsEdgeOptions['onResult'];
  onProducerChange?: WsEdgeOptions['onProducerChange'];
}

export interface IngestServer {
  readonly port: number;
  readonly store: StoreBuffers;
  readonly reader: StoreReader;
  readonly pool: IngestPool;
  /** observe's folded reads, off the main thread */
  readonly scans: ScanWorker;
  readonly ws: WsEdge;
  readonly stats: EdgeStats;
  readonly ci: CiResults;
  /** every alert, from the workers and from main, fanned out to the MCP sessions */
  readonly alerts: AlertHub;
  /** on-demand commands to the extension, routed back to the MCP client that asked */
  readonly commands: CommandRouter;
  health(): Record<string, unknown>;
  /** stop intake → drain in flight (bounded) → close sockets 1001 → close workers; idempotent */
  close(): Promise<void>;
}

export async function startIngestServer(o: IngestServerOptions): Promise<IngestServer> {
  const config = o.config;
  const startedAt = Date.now();
  if (config.port !== 0 && (await someoneListens(config.port))) throw new PortInUseError(config.port);
  const store = allocateStore(KINDS.map((k) => config.rings[k]));
  const reader = new StoreReader(store);
  const pool = new IngestPool({ config, store, reader, faultInjection: o.faultInjection ?? false });
  const scans = new ScanWorker({ store, youngGenerationMb: config.pool.worker_young_generation_mb, faultInjection: o.faultInjection ?? false });
  const warm = await pool.warmup();
  log.debug('workers warmed up', warm);

  const stats = new EdgeStats();
  const ci = new CiResults(10);
  let port = config.port;
  const guard = createGuard(() => port, config.allowed_origins);
  const alerts = new AlertHub();
  const detectView = new DetectState(pool.detectBuffers);
  const thresholds = new ThresholdTracker();
  // The router and the edge point at each other; the closures resolve once both exist.
  let commands: CommandRouter | null = null;
  const ws = new WsEdge({
    config,
    pool,
    guard,
    stats,
    onResult: (conn, r) => {
      commands?.onResult(conn.id, r);
      o.onResult?.(conn, r);
    },
    onProducerChange: (event, p) => {
      if (event === 'disconnected') commands?.onDisconnect(p.id);
      if (p.client === 'extension') alerts.publish({ alert: thresholds.extension(event, p.session, p.version), edgeTime: 0 });
      o.onProducerChange?.(event, p);
    },
  });
  commands = new CommandRouter({ target: () => ws.commandTarget(), send: (id, f) => ws.sendTo(id, f) }, { maxPending: config.commands.max_pending });
  const router = commands;
  // worker alerts arrive through the alert ring; main never blocks on it (Atomics.waitAsync)
  const alertReader = new AlertRingReader(pool.alertRing);
  alertReader.listen((b) => alerts.fromWorkers(b.records, b.missed));
  // server-state transitions are sampled: cheap reads, and only a change raises an alert
  const thresholdTimer = setInterval(() => {
    for (const alert of thresholds.update(pool.arena.used / pool.arena.capacity, pool.overloaded())) alerts.publish({ alert, edgeTime: 0 });
  }, 250);
  thresholdTimer.unref();

  // egress uses the rule set in force, including rules added at run time
  const health = (): Record<string, unknown> => pool.redaction.engine.redactValue(rawHealth()) as Record<string, unknown>;
  const rawHealth = (): Record<string, unknown> => {
    const counters = reader.counters();
    const kinds: Record<string, unknown> = {};
    KINDS.forEach((k, id) => {
      const c = counters[id]!;
      const r = reader.ringStats(id);
      kinds[k] = { ...c, ring: { used_bytes: r.usedBytes, capacity_bytes: r.capacity, records: r.records } };
    });
    const d = pool.dispatcher.stats;
    const producers = ws.producers();
    return {
      status: 'ok',
      version: VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      mode: config.mode,
      port,
      extension: { connected: producers.some((p) => p.client === 'extension'), producers },
      kinds,
      pool: {
        threads: pool.threads,
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
        // quiet producers' frames any worker took between items; taken_early is what it sped up
        ...(pool.express ? { express: { ...pool.express.stats } } : {}),
      },
      // observe's folded reads: refused = over the queue bound, failed = crash or timeout (replaced)
      scan_worker: { in_flight: scans.inFlight, ...scans.counts },
      edge: stats.snapshot(),
      redaction: { redacted: { ...pool.redacted }, redaction_failed: pool.redactionFailed, rules_version: pool.redaction.version, user_rules: pool.redaction.rules.length },
      sessions: ws.sessions.size,
      commands: { pending: router.pendingCount, ...router.stats },
      ci_results: ci.list().length,
      // unpublished: raised in a worker but too large for an alert slot (a drop, so it is said)
      alerts: { ...alerts.stats, suppressed_at_source: detectView.alertsSuppressed, detector_lock_skips: detectView.lockSkips, unpublished: pool.alertsUnpublished },
    };
  };

  const http = new HttpEdge({
    config,
    pool,
    guard,
    stats,
    health,
    ciResult: (body) => {
      const parsed = CiResultSchema.safeParse(body);
      if (!parsed.success) {
        return { status: 400, body: { error: 'invalid_body', message: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') } };
      }
      // secrets in CI output are redacted before the result is kept or becomes an alert
      const clean = pool.redaction.engine.redactValue(parsed.data) as CiResult;
      const { created } = ci.add(clean);
      if (created) alerts.publish({ alert: ciAlert(clean), edgeTime: performance.timeOrigin + performance.now() });
      return { status: 200, body: { ok: true, updated: !created } };
    },
  });

  const app = uws.App();
  ws.attach(app);
  http.attach(app);

  const listenOnce = (): Promise<us_listen_socket | false> =>
    new Promise((resolve) => {
      app.listen('127.0.0.1', config.port, (s) => resolve(s));
    });
  let listenSocket = await listenOnce();
  // uSockets sets no SO_REUSEADDR, so connections a previous run closed hold the port in
  // TIME_WAIT for up to 60 s even though nobody listens. Wait for them (bounded), saying so.
  const waitUntil = Date.now() + config.limits.rebind_wait_ms;
  if (!listenSocket && config.port !== 0) log.warn('port is held by closed connections of a previous run (TIME_WAIT); waiting for it', { port: config.port, max_wait_ms: config.limits.rebind_wait_ms });
  while (!listenSocket && config.port !== 0 && Date.now() < waitUntil) {
    await new Promise((r) => setTimeout(r, 250));
    if (await someoneListens(config.port)) break;
    listenSocket = await listenOnce();
  }
  if (!listenSocket) {
    clearInterval(thresholdTimer);
    alertReader.close();
    await scans.close();
    await pool.close(0);
    throw new PortInUseError(config.port);
  }
  port = uws.us_socket_local_port(listenSocket as never);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(thresholdTimer);
      alertReader.close();
      ws.stopAccepting();
      http.stopAccepting();
      uws.us_listen_socket_close(listenSocket);
      const drainMs = config.pool.shutdown_drain_ms;
      await Promise.race([pool.dispatcher.whenIdle(), new Promise((r) => setTimeout(r, drainMs).unref())]);
      ws.closeAll('shutting_down');
      router.close();
      await scans.close();
      await pool.close(0);
    })();
    return closing;
  };

  return { port, store, reader, pool, scans, ws, stats, ci, alerts, commands: router, health, close };
}
