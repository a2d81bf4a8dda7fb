/**
 * Context streaming: the active delivery path of alerts, as MCP `notifications/message`.
 *
 * Pure logic and timers; its only way out is the injected `emit` (the stdout writer). A flood in
 * the browser must not become a flood in the agent's context or in our heap, so everything is
 * bounded: one notification per throttle window, 12 per rolling minute, 100 alerts waiting,
 * 500 dedup keys, every stored alert ≤ MAX_ALERT_JSON characters of wire text.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type Alert, type AlertEnvelope, type Category, type Severity, SEVERITIES, SEVERITY_RANK, urlMeaningful } from '../alerts/alert.js';
import { LatencyReservoir, type LatencySummary } from './latency.js';

/** per stage: the recent past is enough to see which stage a slow p99 comes from */
const STAGE_SAMPLES = 512;

/** ours first, then the context-streaming spec's names (R3), each mapped onto what the detectors file */
export const STREAM_EVENTS = ['all', 'errors', 'network_errors', 'performance', 'ci', 'noise', 'threshold', 'regression', 'anomaly', 'security', 'user_frustration'] as const;
export type StreamEvent = (typeof STREAM_EVENTS)[number];
export const STREAMING_ACTIONS = ['enable', 'disable', 'status'] as const;
export type StreamingAction = (typeof STREAMING_ACTIONS)[number];

export const STREAM_LIMITS = {
  maxEvents: 10,
  maxUrlFilter: 500,
  throttleMinS: 1,
  throttleMaxS: 60,
  dedupMs: 30_000,
  dedupEntries: 500,
  pendingAlerts: 100,
  perMinute: 12,
} as const;

/**
 * What each event name selects. A rule matches when every list it has contains the alert's
 * value; `all` has no lists, so it matches everything.
 */
export const EVENT_RULES: Readonly<Record<StreamEvent, { readonly categories?: readonly Category[]; readonly sources?: readonly string[] }>> = {
  all: {},
  // New errors are filed by error_detector, bursts by spike_detector; a spike is an error event
  // whatever category it is filed under, so the rule keys on the source alone.
  errors: { sources: ['error_detector', 'spike_detector'] },
  network_errors: { categories: ['anomaly'], sources: ['anomaly_detector'] },
  performance: { categories: ['regression'] },
  ci: { categories: ['ci'] },
  noise: { categories: ['noise'] },
  threshold: { categories: ['threshold'] },
  // The spec's names. Regressions are the performance monitor's against its per-URL baseline
  // (and their recovery): the same alerts as `performance`, under the spec's name.
  regression: { categories: ['regression'] },
  // every anomaly the workers detect: new errors, spikes, failing requests, abnormal WebSocket closes
  anomaly: { categories: ['anomaly'] },
  security: { categories: ['security'] },
  user_frustration: { categories: ['user_frustration'] },
};

export function eventMatches(events: readonly StreamEvent[], a: Pick<Alert, 'category' | 'source'>): boolean {
  return events.some((e) => {
    const rule = EVENT_RULES[e];
    return (!rule.categories || rule.categories.includes(a.category)) && (!rule.sources || rule.sources.includes(a.source));
  });
}

export const StreamingArgs = z.object({
  events: z.array(z.enum(STREAM_EVENTS)).min(1).max(STREAM_LIMITS.maxEvents).optional(),
  throttle_seconds: z.number().int().min(STREAM_LIMITS.throttleMinS).max(STREAM_LIMITS.throttleMaxS).optional(),
  url_filter: z.string().max(STREAM_LIMITS.maxUrlFilter).optional(),
  severity_min: z.enum(SEVERITIES).optional(),
});
export type StreamingArgs = z.infer<typeof StreamingArgs>;

/** Not strict: these fields ride inside the configure tool's arguments next to its others. */
export const StreamingConfigureArgs = StreamingArgs.extend({ streaming_action: z.enum(STREAMING_ACTIONS) });
export type StreamingConfigureArgs = z.infer<typeof StreamingConfigureArgs>;

export interface StreamConfig {
  events: StreamEvent[];
  throttle_seconds: number;
  /** null: no filter */
  url_filter: string | null;
  severity_min: Severity;
}

export interface StreamDrops {
  /** arrived while 100 were already waiting */
  throttled_overflow: number;
  /** delayed past their throttle window by the 12-per-minute cap (still delivered unless they overflow) */
  rate_limited: number;
  /** in a notification the stdout writer refused under pressure */
  stdout: number;
  deduped: number;
  filtered: number;
}

export interface StreamStatus {
  status: 'enabled' | 'disabled';
  config: StreamConfig;
  /** notifications the stdout writer accepted */
  notify_count: number;
  pending: number;
  dropped: StreamDrops;
  latency_ms: LatencySummary;
  /**
   * The same samples split where the alert changed threads (worker alerts only): edge → a worker
   * begins its frame (the dispatcher's and the worker's queues), → published to the alert ring
   * (decode, validate, redact, detect, commit), → read by main (the wake), → line written
   * (fan-out, throttle, egress redaction, stdout).
   */
  latency_stages_ms: { queue: LatencySummary; worker: LatencySummary; wake: LatencySummary; emit: LatencySummary };
}

export type StreamingResult =
  | { status: 'enabled'; config: StreamConfig }
  | { status: 'disabled'; pending_cleared: number }
  | StreamStatus
  | StreamingError;

export interface StreamingError {
  error: { code: 'invalid_argument' | 'shutting_down'; message: string };
}

export interface StreamNotification {
  method: 'notifications/message';
  params: { level: Severity; logger: 'gasoline'; data: unknown };
}

export interface StreamStateOptions {
  /** Resolves true when the line was written, false when the stdout writer dropped it. */
  emit: (notification: StreamNotification) => Promise<boolean>;
  /**
   * Epoch ms, high resolution: the clock AlertEnvelope.edgeTime is taken on (edge threads stamp
   * performance.timeOrigin + performance.now()), and monotonic, so windows never run backwards.
   */
  now?: () => number;
  /** each written alert's edge → written latency, as recorded for latency_ms (metrics feed on it) */
  onLatency?: (ms: number) => void;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

const DEFAULTS: Readonly<StreamConfig> = Object.freeze<StreamConfig>({ events: ['all'], throttle_seconds: 5, url_filter: null, severity_min: 'warning' });

interface Pending {
  /** The alert as its compacted wire text: its memory is then exactly its length, which is what makes the budget provable. */
  json: string;
  rank: number;
  edgeTime: number;
  startTime: number;
  publishTime: number;
  readTime: number;
}

export class StreamState {
  private readonly emit: StreamStateOptions['emit'];
  private readonly now: () => number;
  private readonly onLatency: ((ms: number) => void) | undefined;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  private on = false;
  private closed = false;
  private cfg: StreamConfig = { ...DEFAULTS };
  /**
   * Bumped whenever what came before must stop mattering. A timer or an emit result from an
   * older generation (clearTimeout lost a race, a write settled after disable) walks away.
   */
  private gen = 0;
  private pending: Pending[] = [];
  /** how many leading pending alerts are already counted in rate_limited */
  private heldByCap = 0;
  /** key → first seen. Never refreshed, so insertion order is expiry order: prune from the front. */
  private readonly dedup = new Map<string, number>();
  private lastSendAt = -Infinity;
  /** start times of the last ≤ perMinute notifications, oldest first */
  private sends: number[] = [];
  private timer: unknown = undefined;
  private timerAt = 0;
  private notifyCount = 0;
  private drops: StreamDrops = zeroDrops();
  private readonly latency = new LatencyReservoir();
  private readonly stages = { queue: new LatencyReservoir(STAGE_SAMPLES), worker: new LatencyReservoir(STAGE_SAMPLES), wake: new LatencyReservoir(STAGE_SAMPLES), emit: new LatencyReservoir(STAGE_SAMPLES) };

  constructor(opts: StreamStateOptions) {
    this.emit = opts.emit;
    this.now = opts.now ?? (() => performance.timeOrigin + performance.now());
    this.onLatency = opts.onLatency;
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = opts.clearTimer ?? ((h) => clearTimeout(h as NodeJS.Timeout));
  }

  get enabled(): boolean {
    return this.on;
  }

  configure(args: unknown): StreamingResult {
    const parsed = StreamingConfigureArgs.safeParse(args);
    if (!parsed.success) return { error: { code: 'invalid_argument', message: describeIssues(parsed.error.issues, args) } };
    const a = parsed.data;
    switch (a.streaming_action) {
      case 'enable':
        return this.enable(a);
      case 'disable': {
        const cleared = this.pending.length;
        this.reset();
        return { status: 'disabled', pending_cleared: cleared };
      }
      case 'status':
        return this.status();
    }
  }

  /** A new MCP initialize: a new client has not asked for streaming. */
  reset(): void {
    this.gen++;
    this.cancelTimer();
    this.on = false;
    this.cfg = { ...DEFAULTS };
    this.pending = [];
    this.heldByCap = 0;
    this.dedup.clear();
    this.lastSendAt = -Infinity;
    this.sends = [];
    this.notifyCount = 0;
    this.drops = zeroDrops();
    this.latency.clear();
    for (const r of Object.values(this.stages)) r.clear();
  }

  /** stdin closed: nobody is listening any more. Idempotent. */
  close(): void {
    this.closed = true;
    this.reset();
  }

  offer(env: AlertEnvelope): void {
    if (!this.on) return;
    const a = env.alert;
    if (!this.wanted(a)) {
      this.drops.filtered++;
      return;
    }
    const t = this.now();
    const key = dedupKey(a);
    const seen = this.dedup.get(key);
    if (seen !== undefined && t - seen < STREAM_LIMITS.dedupMs) {
      this.drops.deduped++;
      return;
    }
    if (this.pending.length >= STREAM_LIMITS.pendingAlerts) {
      // Not remembered for dedup: the agent never saw it, so its next occurrence deserves a chance.
      this.drops.throttled_overflow++;
      return;
    }
    this.remember(key, t);
    this.pending.push({ json: wireAlert(a), rank: SEVERITY_RANK[a.severity], edgeTime: env.edgeTime, startTime: env.startTime ?? 0, publishTime: env.publishTime ?? 0, readTime: env.readTime ?? 0 });
    this.pump(t);
  }

  status(): StreamStatus {
    return {
      status: this.on ? 'enabled' : 'disabled',
      config: this.config(),
      notify_count: this.notifyCount,
      pending: this.pending.length,
      dropped: { ...this.drops },
      latency_ms: this.latency.summary(),
      latency_stages_ms: { queue: this.stages.queue.summary(), worker: this.stages.worker.summary(), wake: this.stages.wake.summary(), emit: this.stages.emit.summary() },
    };
  }

  /**
   * A deterministic model of what this instance holds, from the strings actually stored:
   * 2 bytes per UTF-16 code unit (V8's two-byte worst case) plus ENTRY_OVERHEAD per entry for
   * object header, slots, Map bucket and boxed numbers. Checked once against heapUsed with
   * worst-case two-byte alerts (full cache, full batch): model 408.6 kB, heap 408.0 kB.
   */
  footprint(): { pending: number; dedup_entries: number; bytes: number } {
    let bytes = BASE_OVERHEAD + this.latency.bytes + Object.values(this.stages).reduce((n, r) => n + r.bytes, 0) + this.sends.length * 8;
    bytes += (this.cfg.url_filter?.length ?? 0) * 2 + this.cfg.events.length * ENTRY_OVERHEAD;
    for (const p of this.pending) bytes += p.json.length * 2 + ENTRY_OVERHEAD;
    for (const k of this.dedup.keys()) bytes += k.length * 2 + ENTRY_OVERHEAD;
    return { pending: this.pending.length, dedup_entries: this.dedup.size, bytes };
  }

  private enable(a: StreamingConfigureArgs): StreamingResult {
    if (this.closed) return { error: { code: 'shutting_down', message: 'streaming is closed: the MCP connection has ended' } };
    // Enabling while enabled restates the config and opens a fresh window: the throttle and the
    // per-minute cap start over (an agent re-enabling asks to hear now), while alerts already
    // queued were accepted under the old config and are still delivered — at once.
    this.on = true;
    this.lastSendAt = -Infinity;
    this.sends = [];
    this.heldByCap = 0;
    this.cfg = {
      events: [...new Set(a.events ?? DEFAULTS.events)],
      throttle_seconds: a.throttle_seconds ?? DEFAULTS.throttle_seconds,
      url_filter: a.url_filter ? a.url_filter : null,
      severity_min: a.severity_min ?? DEFAULTS.severity_min,
    };
    this.pump(this.now());
    return { status: 'enabled', config: this.config() };
  }

  private config(): StreamConfig {
    return { ...this.cfg, events: [...this.cfg.events] };
  }

  private wanted(a: Alert): boolean {
    if (!eventMatches(this.cfg.events, a)) return false;
    if (!(SEVERITY_RANK[a.severity] >= SEVERITY_RANK[this.cfg.severity_min])) return false;
    // Only some sources carry a URL that says where the problem is; the rest must not be hidden by a filter they cannot answer.
    const f = this.cfg.url_filter;
    return f === null || !urlMeaningful(a) || a.url!.includes(f);
  }

  private remember(key: string, t: number): void {
    this.dedup.delete(key); // an expired key goes to the back again, keeping the order = expiry order
    for (const [k, at] of this.dedup) {
      if (t - at < STREAM_LIMITS.dedupMs && this.dedup.size < STREAM_LIMITS.dedupEntries) break;
      this.dedup.delete(k);
    }
    this.dedup.set(key, t);
  }

  /** Send now if both the throttle and the per-minute cap allow it, else wake up when they will. */
  private pump(t: number): void {
    if (!this.on || this.pending.length === 0) return;
    const throttleFree = this.lastSendAt + this.cfg.throttle_seconds * 1000;
    const capFree = this.sends.length < STREAM_LIMITS.perMinute ? -Infinity : this.sends[0]! + 60_000;
    if (t >= throttleFree && t >= capFree) {
      this.cancelTimer();
      this.send(t);
      return;
    }
    if (capFree > Math.max(t, throttleFree)) {
      this.drops.rate_limited += this.pending.length - this.heldByCap;
      this.heldByCap = this.pending.length;
    }
    this.schedule(Math.max(throttleFree, capFree));
  }

  private send(t: number): void {
    const batch = this.pending;
    this.pending = [];
    this.heldByCap = 0;
    this.lastSendAt = t;
    this.sends.push(t);
    if (this.sends.length > STREAM_LIMITS.perMinute) this.sends.shift();

    const gen = this.gen;
    const count = batch.length;
    // Only what settling needs outlives the send: a write stuck behind stdout must not pin 100 alerts.
    const stamped = batch.filter((p) => p.edgeTime > 0).map((p) => [p.edgeTime, p.startTime, p.publishTime, p.readTime] as const);
    const settle = (ok: boolean): void => {
      if (gen !== this.gen) return; // disabled or reset since: these counters are not ours any more
      if (!ok) {
        this.drops.stdout += count;
        return;
      }
      this.notifyCount++;
      const done = this.now();
      for (const [edge, started, published, read] of stamped) {
        this.latency.record(done - edge);
        this.onLatency?.(done - edge);
        if (started > 0 && published > 0 && read > 0) {
          this.stages.queue.record(started - edge);
          this.stages.worker.record(published - started);
          this.stages.wake.record(read - published);
          this.stages.emit.record(done - read);
        }
      }
    };
    let written: Promise<boolean>;
    try {
      written = Promise.resolve(this.emit(toNotification(batch)));
    } catch {
      settle(false);
      return;
    }
    written.then(settle, () => settle(false));
  }

  private schedule(at: number): void {
    if (this.timer !== undefined && this.timerAt === at) return;
    this.cancelTimer();
    const gen = this.gen;
    // ceil: a timer that fires a fraction early would only find the window still shut and re-arm.
    const handle = this.setTimer(
      () => {
        if (gen !== this.gen || this.timer !== handle) return;
        this.timer = undefined;
        this.pump(this.now());
      },
      Math.max(0, Math.ceil(at - this.now())),
    );
    // A pending batch is no reason to keep the process alive once everything else has ended.
    (handle as { unref?: () => void } | null | undefined)?.unref?.();
    this.timer = handle;
    this.timerAt = at;
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    this.clearTimer(this.timer);
    this.timer = undefined;
  }
}

function zeroDrops(): StreamDrops {
  return { throttled_overflow: 0, rate_limited: 0, stdout: 0, deduped: 0, filtered: 0 };
}

function toNotification(batch: readonly Pending[]): StreamNotification {
  const level = SEVERITIES[Math.max(...batch.map((p) => p.rank))] ?? 'info';
  const alerts = batch.map((p) => JSON.parse(p.json) as unknown);
  const data = alerts.length === 1 ? alerts[0] : { batch: true, count: alerts.length, alerts };
  return { method: 'notifications/message', params: { level, logger: 'gasoline', data } };
}

/**
 * `category:title` hashed to 16 base64url characters (96 bits): a title may be 200 characters,
 * and 500 of those would eat a fifth of the memory budget. Collision odds at 500 keys: ~1e-24.
 */
function dedupKey(a: Alert): string {
  return createHash('sha256').update(`${a.category}:${a.title}`).digest('base64url').slice(0, 16);
}

// --- bounded wire form -------------------------------------------------------------------------

/** Caps in JSON characters, quotes and escapes included. */
const WIRE_CAPS = {
  severity: 16,
  category: 24,
  title: 200,
  detail: 500,
  timestamp: 40,
  source: 40,
  url: 300,
  dedup_key: 160,
  correlation_id: 80,
} as const;
const CONTEXT_CAP = 256;
/** Sum of the caps above plus keys, punctuation and a 24-character count. */
export const MAX_ALERT_JSON = 1800;
const ENTRY_OVERHEAD = 128;
const BASE_OVERHEAD = 2048;

/**
 * The alert as the agent will see it, cut to fit: the full text stays with observe, and a
 * stream notification is read in the agent's context, where every character costs.
 */
export function wireAlert(a: Alert): string {
  const out: Record<string, unknown> = {
    severity: clip(a.severity, WIRE_CAPS.severity),
    category: clip(a.category, WIRE_CAPS.category),
    title: clip(a.title, WIRE_CAPS.title),
    detail: clip(a.detail, WIRE_CAPS.detail),
    timestamp: clip(a.timestamp, WIRE_CAPS.timestamp),
    source: clip(a.source, WIRE_CAPS.source),
  };
  if (a.url !== undefined) out.url = clip(a.url, WIRE_CAPS.url);
  if (typeof a.count === 'number') out.count = a.count;
  out.dedup_key = clip(a.dedup_key, WIRE_CAPS.dedup_key);
  out.correlation_id = clip(a.correlation_id, WIRE_CAPS.correlation_id);
  if (a.context !== undefined) out.context = fitsJson(a.context, CONTEXT_CAP) ? a.context : { truncated: true };
  const json = JSON.stringify(out);
  if (json.length <= MAX_ALERT_JSON) return json;
  // Only a context that serialized differently the second time (a getter, toJSON) can get here.
  out.context = { truncated: true };
  return JSON.stringify(out);
}

function fitsJson(v: unknown, max: number): boolean {
  try {
    const s = JSON.stringify(v);
    return s !== undefined && s.length <= max;
  } catch {
    return false; // cycles, BigInt
  }
}

/**
 * `s` cut so that its JSON form fits `maxJson` characters. Escapes can make a string six times
 * longer on the wire, so characters are the wrong unit; binary search on the encoded length.
 */
export function clip(s: unknown, maxJson: number): string {
  const str = typeof s === 'string' ? s : String(s);
  if (JSON.stringify(str).length <= maxJson) return str;
  const encoded = (n: number): number => JSON.stringify(`${prefix(str, n)}…`).length;
  let lo = 0;
  let hi = Math.min(str.length, maxJson);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (encoded(mid) <= maxJson) lo = mid;
    else hi = mid - 1;
  }
  return `${prefix(str, lo)}…`;
}

/** First n UTF-16 units, never ending on half of a surrogate pair. */
function prefix(s: string, n: number): string {
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

// --- argument errors the model can act on ------------------------------------------------------

function describeIssues(issues: readonly z.core.$ZodIssue[], args: unknown): string {
  // One message per field: zod may report a bad value twice (type and range).
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const issue of issues) {
    const where = issue.path.map(String).join('.');
    if (seen.has(where)) continue;
    seen.add(where);
    parts.push(describeIssue(issue, args));
  }
  return parts.join('; ');
}

function describeIssue(issue: z.core.$ZodIssue, args: unknown): string {
  const [field, index] = issue.path;
  const value = valueAt(args, issue.path);
  const got = `(got ${preview(value)})`;
  switch (field) {
    case undefined:
      return `arguments must be an object ${got}`;
    case 'streaming_action':
      return `streaming_action must be one of: ${STREAMING_ACTIONS.join(', ')} ${got}`;
    case 'throttle_seconds': {
      const whole = typeof value === 'number' && value >= STREAM_LIMITS.throttleMinS && value <= STREAM_LIMITS.throttleMaxS ? 'a whole number ' : '';
      return `throttle_seconds must be ${whole}between ${STREAM_LIMITS.throttleMinS} and ${STREAM_LIMITS.throttleMaxS} ${got}`;
    }
    case 'events':
      return index === undefined
        ? `events must list 1 to ${STREAM_LIMITS.maxEvents} of: ${STREAM_EVENTS.join(', ')} ${got}`
        : `events[${String(index)}] must be one of: ${STREAM_EVENTS.join(', ')} ${got}`;
    case 'url_filter':
      return `url_filter must be a string of at most ${STREAM_LIMITS.maxUrlFilter} characters ${got}`;
    case 'severity_min':
      return `severity_min must be one of: ${SEVERITIES.join(', ')} ${got}`;
    default:
      return `${issue.path.map(String).join('.')}: ${issue.message}`;
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** Short, so a bad argument is never echoed back whole. */
function preview(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') return v.length <= 40 ? JSON.stringify(v) : `a string of ${v.length} characters`;
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (v === null || typeof v !== 'object') return String(v);
  return 'an object';
}
