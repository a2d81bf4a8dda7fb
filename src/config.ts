/**
 * One schema holds every option and its default. Configuration is validated once at startup:
 * every problem is reported in one error, then the result is frozen.
 * Precedence: defaults < --config FILE < GASOLINE_* environment < command-line flags.
 */
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defaultStateDir, LOG_LEVELS, parseDuration } from './cli-options.js';
import { CLIENT_ID_RE } from './daemon/contract.js';
import { EXTENSION_ORIGIN } from './domain/extension-id.js';
import { compileRedaction, RedactionConfigSchema } from './domain/redaction/index.js';
import { APPROVAL_POLICIES } from './domain/approvals/book.js';
import { ModelConfigSchema } from './model/schema.js';

const MiB = 1024 * 1024;
const KiB = 1024;

const ringBytes = (def: number) => z.number().int().min(64 * KiB).max(4096 * MiB).default(def);

export const RingsSchema = z
  .object({
    logs: ringBytes(48 * MiB),
    network: ringBytes(48 * MiB),
    network_bodies: ringBytes(96 * MiB),
    ws_events: ringBytes(32 * MiB),
    actions: ringBytes(16 * MiB),
    perf: ringBytes(4 * MiB),
    ext_logs: ringBytes(4 * MiB),
  })
  .strict()
  .describe('ring capacity in bytes per telemetry kind; the oldest records are overwritten when full');

export const LimitsSchema = z
  .object({
    max_frame: z.number().int().min(1024).max(64 * MiB).default(1 * MiB),
    max_events_per_batch: z.number().int().min(1).max(100_000).default(1000),
    max_http_body: z.number().int().min(1024).max(64 * MiB).default(8 * MiB),
    max_ci_body: z.number().int().min(1024).max(16 * MiB).default(1 * MiB),
    hello_timeout_ms: z.number().int().min(100).max(60_000).default(5000),
    max_connections: z.number().int().min(1).max(10_000).default(1024),
    /**
     * Open connections that are not an authenticated producer (today: our extension's Origin and a
     * hello; later: pairing), all peers together and per peer address. Past either cap the oldest
     * such connection is shed, so a local flood churns its own sockets and never fills the slots
     * an authenticated producer needs (issue #18). Every local process shares the peer
     * 127.0.0.1, so per peer matters only for other loopback addresses; the defaults leave a
     * quarter of max_connections to authenticated producers and room for 500 SDK/bench sockets.
     */
    max_unauthenticated: z.number().int().min(1).max(10_000).default(768),
    max_unauthenticated_per_peer: z.number().int().min(1).max(10_000).default(768),
    /**
     * A connection must complete a frame (or answer our ping) within this. uWS resets its idle
     * timer on every byte, so a frame trickled a byte at a time would otherwise hold its buffer
     * for ever; a quiet connection is pinged at half the deadline.
     */
    frame_deadline_ms: z.number().int().min(500).max(600_000).default(30_000),
    max_sessions: z.number().int().min(1).max(100_000).default(4096),
    max_depth: z.number().int().min(4).max(256).default(32),
    max_elements: z.number().int().min(16).max(10_000_000).default(500_000),
    max_errors_per_ack: z.number().int().min(0).max(1000).default(20),
    ws_max_backpressure: z.number().int().min(64 * KiB).max(256 * MiB).default(4 * MiB),
    idle_timeout_s: z.number().int().min(0).max(3600).default(120),
    /** how long startup waits for a port still held by a previous run's closed connections */
    rebind_wait_ms: z.number().int().min(0).max(300_000).default(65_000),
  })
  .strict();

export const PoolSchema = z
  .object({
    /** the most ingest workers the pool grows to (cores − 1 by default, so main keeps a core) */
    threads: z.number().int().min(1).max(64).default(Math.max(1, availableParallelism() - 1)),
    /**
     * Workers kept when idle (clamped to `threads`). Each costs ~10–35 MB of RSS, so an idle
     * daemon keeps one whatever the core count; the pool grows under sustained queueing.
     */
    min_threads: z.number().int().min(1).max(64).default(1),
    /** how often the pool samples its queue and its workers' busy time to grow or shrink */
    scale_check_ms: z.number().int().min(5).max(10_000).default(100),
    /**
     * a worker is added once work has waited for one in every sample for this long (not one
     * spike), or at once in a sample in which the edge refused work as overloaded. 200, not 500:
     * a daemon met by 300 000 events/s on one worker acked its first seconds' batches in up to
     * 345–440 ms at p99 with 500, 195–202 ms with 200 (a worker takes ~0.3 s more to start)
     */
    grow_after_ms: z.number().int().min(10).max(60_000).default(200),
    /**
     * A worker is removed once, over this long, nothing waited and the busy time would have fit in
     * one worker fewer at half load. Below the 30 s the idle-RSS bench waits, so a burst's workers
     * are gone by then.
     */
    shrink_after_ms: z.number().int().min(20).max(3_600_000).default(10_000),
    /**
     * After this long with no task and an empty input arena, a pool that ingested anything since
     * its workers started replaces them with fresh ones on a fresh arena: a worker's heap and JIT
     * code grown by a burst, and the arena pages the burst touched, are given back (a
     * SharedArrayBuffer's pages only go when no thread holds it). 0: never.
     */
    recycle_after_idle_ms: z.number().int().min(0).max(86_400_000).default(15_000),
    /** tasks a worker holds at once, so it never idles while main prepares the next one */
    concurrent_tasks_per_worker: z.number().int().min(1).max(64).default(2),
    /** frames (or HTTP bodies) combined into one piscina task */
    max_items_per_task: z.number().int().min(1).max(10_000).default(64),
    max_bytes_per_task: z.number().int().min(1024).max(256 * MiB).default(2 * MiB),
    /**
     * Latency bound: WebSocket frame bytes per task, and in flight beyond one task per worker
     * (~1 ms of work). Work handed to a worker cannot be overtaken; beyond this, frames wait in the
     * dispatcher, where a quiet producer's frame can still go first. 0: no bound.
     */
    latency_bound_bytes: z.number().int().min(0).max(256 * MiB).default(16 * KiB),
    /** a group of frames up to this size from a producer that was idle goes ahead of backlogs (0: off) */
    sparse_group_bytes: z.number().int().min(0).max(MiB).default(8 * KiB),
    /** entries on the express board: a sparse single frame any worker takes between items (0: off) */
    express_entries: z.number().int().min(0).max(64).default(8),
    /** shared input arena: the edge copies each frame here exactly once */
    input_bytes: z.number().int().min(256 * KiB).max(1024 * MiB).default(64 * MiB),
    /** admission control: queued bytes above this are refused (nack / 503) before workers saturate */
    shed_queue_bytes: z.number().int().min(64 * KiB).max(1024 * MiB).default(16 * MiB),
    retry_after_ms: z.number().int().min(1).max(60_000).default(250),
    /** synthetic batches each worker present at start processes before the port opens (JIT warm-up) */
    warmup_batches: z.number().int().min(0).max(100_000).default(200),
    shutdown_drain_ms: z.number().int().min(0).max(60_000).default(5000),
    /** admission control: a batch that would wait longer than this for a worker is refused */
    max_queue_delay_ms: z.number().int().min(10).max(60_000).default(250),
    /** V8 young-generation cap per ingest worker (MB): their objects live one batch */
    worker_young_generation_mb: z.number().int().min(4).max(256).default(16),
    /**
     * Added to each ingest worker thread's nice value at its start (Linux; capped at 19; 0: left
     * as main's). Ingest is throughput work and reads are latency work: a worker that yields the
     * core when main or the scan worker wakes keeps a read from waiting behind a batch. Nice ranks
     * threads within the daemon (the kernel groups CPU by session), so it takes nothing from the
     * rest of the machine's share; where the kernel does not group (autogroup off) the workers also
     * yield to other busy processes. Default 0: on a 6.18 kernel any offset (2, 5 or 10 alike) cut
     * paced ingest by a quarter to two thirds with cores left idle, against a few ms off observe's
     * tail at half the maximum on the machine of 2026-11-25 (PERFORMANCE.md "Fifth pass"; "The machine of 2026-12-01").
     */
    worker_nice: z.number().int().min(0).max(19).default(0),
    /**
     * Node's and V8's own helper threads (TurboFan's compiles, the collector's helpers) at start:
     * `idle` puts them at SCHED_IDLE (Linux; no privilege needed), so main and the workers never
     * wait behind them for a core; `normal` leaves them as they start. They still run whenever a
     * core has nothing else to do (src/pool/helper-threads.ts; PERFORMANCE.md "Eighteenth pass").
     */
    helper_threads: z.enum(['idle', 'normal']).default('idle'),
    /**
     * `idle`: the workers kept when quiet (min_threads, at start and after each recycle) run at
     * SCHED_IDLE once warm (Linux; no privilege needed), so an agent's read never waits behind a
     * batch for a core — while they keep up. One whose thread is starved of a core (it held work
     * for grow_after_ms and ran for under a tenth of it: beside CPU hogs of its own session, or of
     * the machine where the kernel does not group by session) is replaced at once by a worker at
     * the normal policy, kept until the next recycle; workers added under load are normal.
     * Default `normal`: at 20 000 events/s on two cores `idle` took observe's p95 from 8.0 to
     * 6.9 ms, but put ~1 ms on every push's p99 (8 pairs of 8; 4.3 → 5.4 ms median): alerts are
     * raised in the worker, and a SCHED_IDLE thread that wakes waits for the core's normal thread
     * to yield (ingest-pool.ts; PERFORMANCE.md "Nineteenth pass").
     */
    worker_policy: z.enum(['idle', 'normal']).default('normal'),
  })
  .strict();

export const CommandsSchema = z
  .object({
    /** how long a tool call waits for the extension before it answers with a query id instead */
    wait_ms: z.number().int().min(100).max(60_000).default(5000),
    /** commands waiting for the extension at once, all clients together */
    max_pending: z.number().int().min(1).max(1024).default(64),
  })
  .strict();

/**
 * Source-mapped stacks (docs/ARCHITECTURE.md, "Source maps"): a page's maps are fetched from its
 * own origin when that is this machine or a private network, in a worker of their own, never on
 * the hot path. Every bound is here.
 */
export const SourceMapsSchema = z
  .object({
    /** fetch the page's source maps (only ever from its own local or private origin); off: stacks stay as generated */
    enabled: z.boolean().default(true),
    /** per request: the script, then its map */
    fetch_timeout_ms: z.number().int().min(100).max(60_000).default(3000),
    max_script_bytes: z.number().int().min(1024).max(256 * MiB).default(16 * MiB),
    max_map_bytes: z.number().int().min(1024).max(256 * MiB).default(32 * MiB),
    /** parsed maps kept, by count and by their text's bytes (least recently used go first) */
    cache_maps: z.number().int().min(1).max(1000).default(32),
    cache_bytes: z.number().int().min(64 * KiB).max(1024 * MiB).default(96 * MiB),
    /** a script without a usable map is not asked again for this long */
    miss_ttl_ms: z.number().int().min(0).max(3_600_000).default(30_000),
    /** a map is fetched again after this long: a dev server rebuilds the bundle under the same URL */
    max_age_ms: z.number().int().min(1000).max(86_400_000).default(120_000),
    /** maps loading at once, and waiting (more are dropped and counted) */
    concurrency: z.number().int().min(1).max(16).default(2),
    max_queue: z.number().int().min(0).max(1000).default(32),
    /** how long observe errors and error_bundles wait for maps they lack before answering with what is resolved */
    wait_ms: z.number().int().min(0).max(10_000).default(1500),
  })
  .strict();

/**
 * What this process is. bridge (the default, what agents' MCP configs run): MCP on stdio, forwarded
 * to the daemon on the port, which it starts when none runs. connect: a bridge that never starts
 * one. server: the daemon in the foreground. standalone: MCP on stdio and ingest in one process.
 * stop / status: one-shot commands for people, about the daemon on the port.
 */
export const MODES = ['bridge', 'connect', 'server', 'standalone', 'stop', 'status'] as const;
export type Mode = (typeof MODES)[number];

const approvalPolicy = z.enum(APPROVAL_POLICIES);

/**
 * Approvals (issue 19 item 4; docs/ARCHITECTURE.md §10): which classes of tool action
 * (src/domain/actions/classes.ts) ask the user in the browser first. ask: each call waits for a
 * decision in the extension (popup or notification); allow: runs as before approvals existed (the
 * popup's "Allow agent control" switch still gates interact); deny: never runs. Only the config
 * file (or a flag) sets this: no environment variable, since an agent can set those for the
 * process it starts.
 */
export const ApprovalsSchema = z
  .object({
    policy: z
      .object({ mutating: approvalPolicy.default('ask'), destructive: approvalPolicy.default('ask') })
      .strict()
      .default({ mutating: 'ask', destructive: 'ask' }),
    /** watch mode: the agent observes; no mutating or destructive action runs, approved or not */
    watch: z.boolean().default(false),
    /** an approval not used within this long expires (single use) */
    token_ttl_ms: z.number().int().min(1000).max(600_000).default(60_000),
    /** how long a request stays open in the browser for the user to decide */
    request_ttl_ms: z.number().int().min(1000).max(600_000).default(120_000),
  })
  .strict();

/** The MCP session table (src/clients/sessions.ts): closed sessions stay listed this long. */
export const SessionsSchema = z
  .object({
    closed_ttl_s: z.number().int().min(0).max(86_400).default(600),
    /** command results that finished after their asker's wait, kept per client for its next call */
    results_per_client: z.number().int().min(1).max(256).default(16),
  })
  .strict();

export const ClientsSchema = z
  .object({
    /** client identities the daemon keeps at once */
    max: z.number().int().min(1).max(10_000).default(32),
    /** a client unseen this long is purged, its durable state with it */
    ttl_s: z.number().int().min(1).max(365 * 86_400).default(3600),
  })
  .strict();

/**
 * Pairing (docs/SECURITY.md). `unpaired`: what happens to records of a producer that did not prove
 * the pairing secret — "mark" stores them and counts them as unverified (bench producers, SDKs and
 * older extensions keep working; they never get commands), "refuse" closes such a producer at its
 * first batch. `tofu`: pair the first extension that asks without a code, once its user accepts in
 * the popup — off by default, since whatever holds the port first would be trusted.
 */
export const PairingSchema = z
  .object({
    unpaired: z.enum(['mark', 'refuse']).default('mark'),
    tofu: z.boolean().default(false),
    /** how long a `gasoline pair` code is valid */
    window_s: z.number().int().min(10).max(3600).default(120),
    /** wrong codes per window before it closes */
    max_attempts: z.number().int().min(1).max(20).default(5),
  })
  .strict();

export const ConfigSchema = z
  .object({
    port: z.number().int().min(0).max(65535).default(7890),
    mode: z.enum(MODES).default('bridge'),
    /** the client a bridge (or standalone) speaks for; else derived from the working directory */
    client_id: z.string().regex(CLIENT_ID_RE, 'letters, digits, . _ - only, 1 to 64 of them').optional(),
    clients: ClientsSchema.default(ClientsSchema.parse({})),
    approvals: ApprovalsSchema.default(ApprovalsSchema.parse({})),
    sessions: SessionsSchema.default(SessionsSchema.parse({})),
    state_dir: z.string().min(1).default(defaultStateDir()),
    allowed_origins: z.array(z.string().min(1)).default([EXTENSION_ORIGIN]),
    rings: RingsSchema.default(RingsSchema.parse({})),
    limits: LimitsSchema.default(LimitsSchema.parse({})),
    pool: PoolSchema.default(PoolSchema.parse({})),
    commands: CommandsSchema.default(CommandsSchema.parse({})),
    pairing: PairingSchema.default(PairingSchema.parse({})),
    log_level: z.enum(LOG_LEVELS).default('info'),
    /** user redaction rules and allowlist, added to the built-in rule set */
    redaction: RedactionConfigSchema.default(RedactionConfigSchema.parse({})),
    source_maps: SourceMapsSchema.default(SourceMapsSchema.parse({})),
    /** the model analyze triage asks (offline by default): src/model/schema.ts; the key only from this file */
    model: ModelConfigSchema.default(ModelConfigSchema.parse({})),
  })
  .strict();

export { defaultStateDir, parseDuration };

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Json = Record<string, unknown>;

function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Json, v as Json)
        : v;
  }
  return out;
}

/**
 * Environment variables: GASOLINE_PORT, GASOLINE_MODE (bridge|connect|server|standalone),
 * GASOLINE_SERVER (true = GASOLINE_MODE=server), GASOLINE_STATE_DIR, GASOLINE_CONFIG,
 * GASOLINE_THREADS, GASOLINE_LOG_LEVEL, GASOLINE_ALLOWED_ORIGINS (comma-separated),
 * GASOLINE_CLIENT_ID, GASOLINE_CLIENT_TTL (seconds, or 30m / 1h / 2d), GASOLINE_SOURCE_MAPS (on|off).
 */
export function envOverrides(env: NodeJS.ProcessEnv, problems: string[]): Json {
  const out: Json = {};
  const num = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n)) {
      problems.push(`${name}: expected a number, got ${JSON.stringify(raw)}`);
      return undefined;
    }
    return n;
  };
  const port = num('GASOLINE_PORT');
  if (port !== undefined) out.port = port;
  const server = env.GASOLINE_SERVER;
  if (server !== undefined && server !== '') {
    if (/^(1|true|yes)$/i.test(server)) out.mode = 'server';
    else if (!/^(0|false|no)$/i.test(server)) problems.push(`GASOLINE_SERVER: expected true/false, got ${JSON.stringify(server)}`);
  }
  const mode = env.GASOLINE_MODE;
  if (mode !== undefined && mode !== '') {
    // stop and status are commands a person types, not a mode to leave set in an environment
    if (['bridge', 'connect', 'server', 'standalone'].includes(mode)) out.mode = mode;
    else problems.push(`GASOLINE_MODE: expected bridge, connect, server or standalone, got ${JSON.stringify(mode)}`);
  }
  if (env.GASOLINE_CLIENT_ID) out.client_id = env.GASOLINE_CLIENT_ID;
  if (env.GASOLINE_CLIENT_TTL) {
    const ttl = parseDuration(env.GASOLINE_CLIENT_TTL);
    if (ttl === undefined) problems.push(`GASOLINE_CLIENT_TTL: expected seconds or 30m/1h/2d, got ${JSON.stringify(env.GASOLINE_CLIENT_TTL)}`);
    else out.clients = { ttl_s: ttl };
  }
  const maps = env.GASOLINE_SOURCE_MAPS;
  if (maps !== undefined && maps !== '') {
    if (/^(1|true|yes|on)$/i.test(maps)) out.source_maps = { enabled: true };
    else if (/^(0|false|no|off)$/i.test(maps)) out.source_maps = { enabled: false };
    else problems.push(`GASOLINE_SOURCE_MAPS: expected on/off, got ${JSON.stringify(maps)}`);
  }
  if (env.GASOLINE_STATE_DIR) out.state_dir = env.GASOLINE_STATE_DIR;
  const threads = num('GASOLINE_THREADS');
  if (threads !== undefined) out.pool = { threads };
  if (env.GASOLINE_LOG_LEVEL) out.log_level = env.GASOLINE_LOG_LEVEL;
  if (env.GASOLINE_ALLOWED_ORIGINS) out.allowed_origins = env.GASOLINE_ALLOWED_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean);
  return out;
}

export interface ConfigSources {
  /** parsed command-line flags, already in schema shape */
  flags?: Json;
  env?: NodeJS.ProcessEnv;
  /** path of a JSON config file (flag --config or GASOLINE_CONFIG) */
  file?: string | undefined;
}

/**
 * A config file that is not JSON, said without its text: V8's message quotes the text around the
 * error, which may be part of model.api_key, and problems reach stderr (a daemon's log file) and
 * `gasoline doctor`. Only where: line and column when V8 gave a position.
 */
function jsonProblem(e: SyntaxError, text: string): string {
  const m = / at position (\d+)/.exec(e.message);
  if (!m) return 'not valid JSON';
  const pos = Math.min(Number(m[1]), text.length);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `not valid JSON at line ${line}, column ${column}`;
}

/** Loads, validates (collecting every problem) and freezes the configuration. Throws ConfigError. */
export function loadConfig(sources: ConfigSources = {}): Readonly<Config> {
  const env = sources.env ?? process.env;
  const problems: string[] = [];
  let fromFile: Json = {};
  const file = sources.file ?? env.GASOLINE_CONFIG;
  if (file) {
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
      const parsed: unknown = JSON.parse(text);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) problems.push(`${file}: top level must be a JSON object`);
      else fromFile = parsed as Json;
    } catch (e) {
      problems.push(e instanceof SyntaxError && text !== undefined ? `${file}: ${jsonProblem(e, text)}` : `${file}: ${(e as Error).message}`);
    }
  }
  const fromEnv = envOverrides(env, problems);
  const merged = deepMerge(deepMerge(fromFile, fromEnv), sources.flags ?? {});
  if (merged.state_dir === undefined) merged.state_dir = defaultStateDir(env);
  const result = ConfigSchema.safeParse(merged);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path.length ? issue.path.join('.') : '(root)';
      problems.push(`${path}: ${issue.message}`);
    }
  }
  if (result.success) {
    // Fail closed: a redaction rule set that does not compile stops startup, naming the rule.
    try {
      compileRedaction(result.data.redaction);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  if (problems.length || !result.success) throw new ConfigError(problems);
  return deepFreeze(result.data);
}

function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

export function totalRingBytes(c: Pick<Config, 'rings'>): number {
  return Object.values(c.rings).reduce((a, b) => a + b, 0);
}
