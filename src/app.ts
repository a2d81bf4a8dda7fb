/**
 * The composition root: every long-lived part is built here, once, in dependency order —
 * store, ingest pool, scan worker, alert hub, CI results, client registry, command router,
 * the edge — and torn down by one idempotent, ordered, time-boxed path. MCP sees none of it
 * directly: it gets the narrow port (`app.mcp`, src/mcp/port.ts), one per app, shared by every
 * client session whatever its transport.
 */
import type { Config } from './config.js';
import { join } from 'node:path';
import { ClientRegistry } from './clients/registry.js';
import { TrailBook } from './clients/trail.js';
import { CommandRouter } from './clients/commands.js';
import { bearerMatches, MCP_PATH, writeDaemonToken } from './daemon/contract.js';
import { PanelTokens, Pairing } from './pairing/index.js';
import { ciAlert } from './domain/alerts/ci-alert.js';
import { AlertHub } from './domain/alerts/hub.js';
import { ThresholdTracker } from './domain/alerts/thresholds.js';
import { CiResults, CiResultSchema, type CiResult } from './domain/ci-results.js';
import { HTTP_ROUTES, KINDS } from './domain/kinds.js';
import type { LiveRedaction } from './domain/redaction/index.js';
import { createHealth } from './health.js';
import { createModel } from './model/index.js';
import { approvalBook, ingestPort } from './app-port.js';
import { SessionTable } from './clients/sessions.js';
import { log } from './log.js';
import type { McpObserver, McpPort } from './mcp/port.js';
import { Metrics } from './metrics.js';
import type { McpHttpDoor, McpHttpLimits } from './mcp/http/index.js';
import { idleHelperThreads, type HelperThreads } from './pool/helper-threads.js';
import { IngestPool } from './pool/ingest-pool.js';
import { ScanWorker } from './pool/scan-worker.js';
import { bindReadRules } from './query/index.js';
import { AlertRingReader } from './shm/alert-ring.js';
import { Cadence } from './cadence.js';
import { DetectState } from './shm/detect-state.js';
import { allocateStore, StoreReader } from './shm/index.js';
import { SourceMaps } from './sourcemaps/index.js';
import { assertPortFree, Edge, type EdgeOptions } from './transport/edge.js';
import type { EdgeStats } from './transport/edge-stats.js';
import type { WsEdge } from './transport/ws.js';

/** how often main samples the input arena's fill and admission control while ingest is active */
const THRESHOLD_CHECK_MS = 250;

export interface AppOptions {
  config: Readonly<Config>;
  /** testing only: lets a batch with page_url "gasoline:crash" kill its worker */
  faultInjection?: boolean;
  /** taps for tests and tools that watch the edge; the app's own handling runs first */
  onResult?: EdgeOptions['onResult'];
  onProducerChange?: EdgeOptions['onProducerChange'];
  /**
   * serve MCP on /mcp (streamable HTTP): true for bridges and the side panel (bearer token written to
   * the state dir; the daemon's mode), 'panel' for the side panel only (panel tokens, no bearer token
   * exists: a standalone)
   */
  mcpHttp?: boolean | 'panel';
  /** testing: smaller bounds for the /mcp sessions */
  mcpHttpLimits?: Partial<McpHttpLimits>;
  /** testing: fewer PBKDF2 rounds for the pairing code (the real count costs ~50 ms per attempt) */
  pairingKdfIterations?: number;
  /**
   * the process's threads when bin/gasoline began (src/pool/thread-ids.ts): with pool.helper_threads
   * `idle` they are put at SCHED_IDLE before any worker starts; absent (tests, embedders), nothing is
   */
  threadsAtStart?: readonly number[];
  /** testing: a shorter life for panel tokens (15 min) */
  panelTokenTtlMs?: number;
}

/** The running app, as main and the tests hold it. */
export interface App {
  readonly port: number;
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
  /** one state per MCP client identity, shared by that client's sessions */
  readonly clients: ClientRegistry;
  /** what the MCP tools may ask of this app */
  readonly mcp: McpPort;
  /** GET /metrics; parts built later register their gauges here (`metrics.gauge(…)`) */
  readonly metrics: Metrics;
  /** per-client trails of tool calls, <state_dir>/clients/<id>.jsonl */
  readonly trails: TrailBook;
  /** the bridges' MCP sessions on /mcp; null unless started with mcpHttp */
  readonly mcpHttp: McpHttpDoor | null;
  /** the bearer token /mcp asks for (also in the state dir's daemon-<port>.token); null unless mcpHttp is true */
  readonly token: string | null;
  /** the side panel's /mcp tokens, issued over /ws to producers that proved pairing (memory only) */
  readonly panelTokens: PanelTokens;
  /** the pairing secret, the `gasoline pair` window and trust on first use (docs/SECURITY.md) */
  readonly pairing: Pairing;
  health(): Record<string, unknown>;
  /** stop intake → drain in flight (bounded) → close sockets 1001 → close workers; idempotent */
  close(): Promise<void>;
}

/** Builds and starts everything; throws PortInUseError (with nothing left running) when the port is taken. */
export async function startApp(o: AppOptions): Promise<App> {
  const config = o.config;
  const startedAt = Date.now();
  await assertPortFree(config.port);
  const faultInjection = o.faultInjection ?? false;
  // before the first worker: threads started from here on keep the normal policy
  const helperThreads: HelperThreads = config.pool.helper_threads === 'idle' ? idleHelperThreads(o.threadsAtStart) : { policy: 'normal', reason: 'pool.helper_threads is normal' };
  if (helperThreads.policy === 'normal' && o.threadsAtStart && config.pool.helper_threads === 'idle') log.debug('helper threads keep the normal policy', { reason: helperThreads.reason });
  const store = allocateStore(KINDS.map((k) => config.rings[k]));
  const reader = new StoreReader(store);
  // the daemon idles far more than it ingests: its worker's thread starts on the first batch
  const pool = new IngestPool({ config, store, reader, faultInjection, lazyWorkers: config.mode === 'server' });
  // reads on main apply the user rules added at run time to records stored before them
  bindReadRules(reader, () => pool.redaction.reads);
  const scans = new ScanWorker({ store, youngGenerationMb: config.pool.worker_young_generation_mb, faultInjection });
  try {
    // The daemon does not warm up at start: it starts before any producer (a bridge spawns it),
    // and a warm-up's JIT code and young generation cost ~15 MB of its idle RSS. Its worker warms
    // up when a producer says hello (pool.wake), and an idle pool recycles it again.
    if (config.mode !== 'server') log.debug('workers warmed up', await pool.warmup());
  } catch (e) {
    // a start that fails leaves no thread behind
    await scans.close();
    await pool.close(0);
    throw e;
  }

  const ci = new CiResults(10);
  const alerts = new AlertHub();
  const stacks = sourceMaps(config);
  // a new error's alert names its top frame: its map is fetched now, in the background, so the
  // read that follows (and the alert block that carries it) finds the original position
  alerts.subscribe((env) => {
    const frame = env.alert.source === 'error_detector' ? env.alert.context?.frame : undefined;
    if (typeof frame === 'string') stacks.warm({ source: frame, ...(env.alert.url !== undefined ? { url: env.alert.url } : {}) });
  });
  const thresholds = new ThresholdTracker();
  // one per daemon start: its rings are new, so ordinals saved by an earlier one are reset on load
  const clients = new ClientRegistry({ dir: config.state_dir, max: config.clients.max, ttlMs: config.clients.ttl_s * 1000 });
  // every agent session, whatever carries it (stdio, a bridge's /mcp session): /health lists them
  const sessionTable = new SessionTable({ closedTtlMs: config.sessions.closed_ttl_s * 1000 });
  // who may run mutating and destructive actions: one book, every session's calls pass it
  const approvals = approvalBook(config);
  // the model triage asks, behind the redaction gateway: every payload passes the rules in force
  // (user rules added at run time included); a provider's failure is an answer, never a health state
  const model = createModel(config.model, () => ({ version: pool.redaction.version, redactText: (s: string) => pool.redaction.engine.redactText(s) }));
  // loaded only when bridges are served; the SDK's HTTP transport and the tool dispatcher behind the
  // door load on the first /mcp request (an idle daemon does not hold them)
  const httpMcp = o.mcpHttp ? await import('./mcp/http/index.js') : null;
  let sessions: McpHttpDoor | null = null;
  const fetchRoute: EdgeOptions['fetchRoute'] = httpMcp
    ? {
        path: MCP_PATH,
        maxBody: o.mcpHttpLimits?.maxBody ?? httpMcp.MCP_HTTP_LIMITS.maxBody,
        // the SDK's transport takes the body parsed (sessions.ts): no web stream for bytes already whole
        bodyOnExchange: true,
        // the sessions exist from the moment the port (and so the token file's name) is known
        handler: (req, ex) => (sessions ? sessions.handle(req, ex) : Promise.resolve(new Response(null, { status: 503 }))),
      }
    : undefined;
  // The edge, the router and the health report point at each other. The edge calls back only
  // once it listens, and every part below exists by then.
  const pairing = new Pairing({ stateDir: config.state_dir, unpaired: config.pairing.unpaired, tofu: config.pairing.tofu, windowMs: config.pairing.window_s * 1000, maxAttempts: config.pairing.max_attempts, ...(o.pairingKdfIterations ? { kdfIterations: o.pairingKdfIterations } : {}) });
  // the side panel's tokens: issued by the edge to verified producers, checked by the /mcp door
  const panelTokens = new PanelTokens(o.panelTokenTtlMs ? { ttlMs: o.panelTokenTtlMs } : {});
  const edge = new Edge({
    config,
    pairing,
    panelTokens,
    // `gasoline pair`: only a holder of the daemon's bearer token opens a window or rotates the secret
    pairingRoute: (authorization, query) => {
      if (!token || !bearerMatches(authorization, token)) return { status: 401, body: { error: 'unauthorized', message: 'missing or wrong bearer token' } };
      try {
        if (new URLSearchParams(query).get('reset') === '1') {
          pairing.rotate();
          edge.ws.dropVerified();
          return { status: 200, body: { reset: true, ...pairing.open() } };
        }
        return { status: 200, body: { ...pairing.open() } };
      } catch (e) {
        // the new secret could not be written: the old one stays in force
        return { status: 500, body: { error: 'internal', message: `the pairing secret could not be written to the state dir: ${String(e)}` } };
      }
    },
    pool,
    health: () => healthAll(),
    metrics: (): Promise<string> => metrics.text(),
    ...(fetchRoute ? { fetchRoute } : {}),
    ciResult: ciIntake(pool.redaction, ci, alerts),
    onResult: (conn, r) => {
      router.onResult(conn.id, r);
      o.onResult?.(conn, r);
    },
    onProducerChange: (event, p) => {
      if (event === 'disconnected') router.onDisconnect(p.id);
      // a producer is here: the daemon's worker, not started while idle, loads and warms up now
      else pool.wake();
      if (p.client === 'extension') alerts.publish({ alert: thresholds.extension(event, p.session, p.version, (s) => pool.redaction.engine.redactText(s)), edgeTime: 0 });
      o.onProducerChange?.(event, p);
    },
  });
  const router = new CommandRouter({ route: () => edge.ws.commandRoute(), send: (id, f) => edge.ws.sendTo(id, f) }, { maxPending: config.commands.max_pending, maxKeptPerClient: config.sessions.results_per_client });
  const detect = new DetectState(pool.detectBuffers);
  const health = createHealth({ config, startedAt, reader, pool, scans, edge, commands: router, ci, alerts, clients, detect, helperThreads });
  const metrics: Metrics = new Metrics({ reader, pool, scans, stats: edge.stats, alerts, producerSessions: () => edge.ws.sessions.size });
  metrics.gauge('gasoline_clients_connected', 'MCP clients with a session open', () => clients.list().filter((c) => c.sessions > 0).length);
  const trails = new TrailBook(join(config.state_dir, 'clients'));
  // every MCP session's calls and pushes, whatever transport carries it, land in one place
  const observer: McpObserver = {
    call: (c) => {
      metrics.toolCall(c.tool, c.ms, c.isError);
      trails.append(c.clientId, { tool: c.tool, args: c.args, resultChars: c.resultChars, ms: c.ms, ...(c.code ? { code: c.code } : {}) });
    },
    push: (ms) => metrics.push(ms),
  };
  // which doors are open: producers on /ws and the HTTP routes always; agents over stdio (standalone)
  // or over /mcp (the daemon's bridges)
  const transports = (): Record<string, unknown> => ({
    ws: { path: '/ws', producers: edge.ws.sessions.size },
    http: { routes: [...HTTP_ROUTES, '/ci-result', '/health', '/metrics'] },
    mcp: sessions && o.mcpHttp === true ? { type: 'streamable-http', path: MCP_PATH, sessions: sessions.size } : { type: 'stdio', ...(sessions ? { panel: { type: 'streamable-http', path: MCP_PATH, sessions: sessions.size } } : {}) },
  });
  const healthAll = (): Record<string, unknown> => ({
    ...health(),
    pid: process.pid,
    transports: transports(),
    source_maps: stacks.stats(),
    ...(sessions ? { mcp_http: sessions.health() } : {}),
    // egress like the rest of the report: a client's name is the client's own words
    mcp_sessions: pool.redaction.engine.redactValue(sessionTable.list()),
    panel_tokens: panelTokens.health(),
    approvals: approvalsHealth(),
    model: model.health(),
  });
  const approvalsHealth = (): Record<string, unknown> => ({
    policy: config.approvals.policy,
    watch: config.approvals.watch,
    pending: approvals.pendingCount(),
    windows: approvals.activeWindows().map((w) => ({ client_id: w.clientId, action: w.label, tab: w.tab, until: new Date(w.until).toISOString() })),
    ...approvals.stats,
  });

  // worker alerts arrive through the alert ring; main never blocks on it (Atomics.waitAsync)
  const alertReader = new AlertRingReader(pool.alertRing);
  alertReader.listen((b) => alerts.fromWorkers(b.records, b.missed));
  // server-state transitions are sampled: cheap reads, and only a change raises an alert. Only
  // ingest moves them, so the sampling stops once the pool is quiet, every reading is back to
  // normal and no held-back alert waits for its summary; the pool's next task wakes it.
  const thresholdCheck = new Cadence(() => {
    for (const alert of thresholds.update(pool.arena.used / pool.arena.capacity, pool.overloaded())) alerts.publish({ alert, edgeTime: 0 });
    // alerts held back over the rate caps that no alert of their scope named: one summary
    alerts.tick(detect.alertsSuppressed);
    return pool.quiet && thresholds.settled && !alerts.holding ? null : THRESHOLD_CHECK_MS;
  }, THRESHOLD_CHECK_MS);
  pool.watch('thresholds', thresholdCheck);

  let port: number;
  try {
    port = await edge.listen();
  } catch (e) {
    thresholdCheck.close();
    alertReader.close();
    clients.shutdown();
    await stacks.close();
    await scans.close();
    await pool.close(0);
    throw e;
  }

  const mcp = ingestPort({ reader, scans, ws: edge.ws, health: healthAll, redaction: pool.redaction, commands: router, alerts, ci, clients, observer, stacks, sessions: sessionTable, approvals, model });
  let token: string | null = null;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // the bridges' sessions first: they stop answering and detach before intake stops
      await sessions?.close();
      panelTokens.close();
      thresholdCheck.close();
      alertReader.close();
      edge.stopAccepting();
      const drainMs = config.pool.shutdown_drain_ms;
      await Promise.race([pool.dispatcher.whenIdle(), new Promise((r) => setTimeout(r, drainMs).unref())]);
      edge.closeSockets();
      router.close();
      clients.shutdown();
      await stacks.close();
      await scans.close();
      await pool.close(0);
      // the calls answered before the close are on disk
      await trails.close();
    })();
    return closing;
  };

  if (httpMcp) {
    // a standalone serves no bridges: its door takes panel tokens only, and no token file is written
    if (o.mcpHttp === true) {
      try {
        // after listen: the token file is named by the bound port (0 in tests picks one)
        token = writeDaemonToken(config.state_dir, port);
      } catch (e) {
        await close();
        throw e;
      }
    }
    sessions = new httpMcp.McpHttpDoor({ port: mcp, config, token, panelTokens, ...(o.mcpHttpLimits ? { limits: o.mcpHttpLimits } : {}) });
    const live = sessions;
    metrics.gauge('gasoline_mcp_sessions', 'MCP sessions of bridges on /mcp', () => live.size);
    // the scan worker starts on the first read that needs it: an idle daemon does not pay its RSS
  }
  return { port, reader, pool, scans, ws: edge.ws, stats: edge.stats, ci, alerts, commands: router, clients, mcp, metrics, trails, mcpHttp: sessions, token, panelTokens, pairing, health: healthAll, close };
}

function sourceMaps(config: Readonly<Config>): SourceMaps {
  const m = config.source_maps;
  return new SourceMaps({
    enabled: m.enabled,
    waitMs: m.wait_ms,
    limits: {
      timeoutMs: m.fetch_timeout_ms,
      maxScriptBytes: m.max_script_bytes,
      maxMapBytes: m.max_map_bytes,
      cacheMaps: m.cache_maps,
      cacheBytes: m.cache_bytes,
      missTtlMs: m.miss_ttl_ms,
      maxAgeMs: m.max_age_ms,
      concurrency: m.concurrency,
      maxQueue: m.max_queue,
    },
  });
}

/** POST /ci-result: validated, redacted, kept (newest 10), and a new result raises an alert. */
function ciIntake(redaction: LiveRedaction, ci: CiResults, alerts: AlertHub): EdgeOptions['ciResult'] {
  return (body) => {
    const parsed = CiResultSchema.safeParse(body);
    if (!parsed.success) {
      return { status: 400, body: { error: 'invalid_body', message: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') } };
    }
    // secrets in CI output are redacted before the result is kept or becomes an alert
    const clean = redaction.engine.redactValue(parsed.data) as CiResult;
    const { created } = ci.add(clean);
    if (created) alerts.publish({ alert: ciAlert(clean), edgeTime: performance.timeOrigin + performance.now() });
    return { status: 200, body: { ok: true, updated: !created } };
  };
}
