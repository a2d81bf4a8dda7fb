/**
 * Detection in the workers: every stored record passes `see()` once, after redaction (so an
 * alert is built from redacted text only). `see()` does the record's own work (classify, hash)
 * and queues what touches the shared DetectState; `take()`, called once the batch committed, runs
 * those checks in order, each O(1), and hands over the alerts aggregated by dedup key. Nothing of
 * an uncommitted batch is marked in the shared state, so its retry finds its errors still new.
 */
import type { IngestedRecord, IngestedRecordOf } from '../wire/schemas.js';
import { errorSignature, pathTemplate, topFrame } from '../signals/signature.js';
import { signatureHash } from '../signals/signature-hash.js';
import { regressions, type Metric } from '../signals/vitals.js';
import { headerFindings, type RequestSeen, urlFindings, type FindingSeverity } from '../signals/security.js';
import { hash32, PERF_METRICS, type DetectState } from '../../shm/index.js';
import { correlationId, FRUSTRATION_SOURCE, SECURITY_SOURCE, type Alert, type AlertEnvelope, type Severity } from './alert.js';
import { CheckQueue } from './check-queue.js';
import { HeldTallies, hostOf, scopeLabel } from './held.js';
import { NoiseCounts } from './noise-count.js';

/** A signature not seen for this long is "new". */
export const NEW_ERROR_WINDOW_S = 30;
/** Repeats of the same server-error or close title within this window are counted, not re-sent. */
const REPEAT_WINDOW_S = 1;
const SPIKE_RECENT_S = 10;
const SPIKE_BASE_S = 60;
const SPIKE_FACTOR = 3;
/** a "spike" of 2 errors against 0 is not one */
const SPIKE_MIN = 10;
/** a console message repeated this often within NOISE_WINDOW_S is noise */
const NOISE_MIN = 50;
const NOISE_WINDOW_S = 30;
/** noise keys a worker counts at once; a new key past this many starts the count over */
const NOISE_KEYS = 4096;
const NOISE_REALERT_S = 600;
/**
 * A failed request is described twice by the extension: a network record (held up to 1.5 s for
 * its sizes) and a console line. Within this window the n-th of one kind and the n-th of the
 * other with the same method, URL, outcome and duration are one request, counted once (#20 item 9).
 */
const PAIR_WINDOW_S = 10;
const PAIR_SALT = { network: 0x0e6546b6, console: 0x1b873593 } as const;
/**
 * While a worker keeps holding alerts back it reports its tally at most this often; a batch that
 * held nothing back reports what is left at once, so the end of a flood is not kept (#20 item 2).
 */
const HELD_REPORT_MS = 250;
/** a security finding on a host is raised once in this window (the record is stored every time) */
const SECURITY_REALERT_S = 600;
/** rage: this many clicks on one element within RAGE_SPAN_MS (the spec's R3: ≥ 3 within 1 s) */
const RAGE_CLICKS = 3;
const RAGE_SPAN_MS = 1000;
/** rage clicks use the keyed table's time words in these units: a click's own time, not a second */
const RAGE_TICK_MS = 10;
/**
 * Ticks wrap below every epoch second the table holds (2^30 < 1.7e9), so a rage entry always
 * looks older than any other detector's and is the one evicted when slots are short.
 */
const RAGE_TICK_WRAP = 2 ** 30;
/** a rage or dead click on one element is raised once in this window; the rest count */
const FRUSTRATION_REALERT_S = 10;
const FINDING_SEVERITY: Record<FindingSeverity, Severity> = { high: 'error', medium: 'warning', low: 'info' };

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function parsedPath(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname || '/';
  } catch {
    return url.replace(/\?.*$/, '');
  }
}

/**
 * A URL's path. Clicks ask it for every click, and a batch's clicks are mostly on one page: the
 * last answer is kept (a URL parse is ~1 µs, most of a click's cost).
 */
let lastPathOf: string | undefined;
let lastPath = '';
function path(url: string): string {
  if (url !== lastPathOf) {
    lastPath = parsedPath(url);
    lastPathOf = url;
  }
  return lastPath;
}

export interface DetectorStats {
  alerts: number;
  lock_skips: number;
}

// what a queued check is
const ERROR = 0;
const NOISE = 1;
const NETWORK = 2;
const WS = 3;
const PERF = 4;
const SECURITY = 5;
const CLICK = 6;

type Queued = IngestedRecordOf<'logs'> | IngestedRecordOf<'ws_events'> | IngestedRecordOf<'perf'> | NetworkSeen | Finding | ClickSeen;

export class Detector {
  private pending = new Map<string, AlertEnvelope>();
  private readonly queue = new CheckQueue<Queued>();
  /** alerts over the caps, per scope, until reported to main */
  private readonly held = new HeldTallies();
  private heldReportedAt = Number.NEGATIVE_INFINITY;
  private heldThisBatch = false;
  /** the second this batch is seen in (see `sec`), or -1 until its first record asks */
  private batchSec = -1;
  /** what `addFinding` files a security finding under: the request being checked */
  private findingUrl = '';
  private findingPage: string | undefined = undefined;
  private findingEdgeAt = 0;

  constructor(
    private readonly state: DetectState,
    private readonly now: () => number = Date.now,
  ) {}

  /** One stored (redacted) record. `edgeAt`: when its frame reached the edge (epoch ms, high-res). */
  see(r: IngestedRecord, edgeAt: number, pageUrl?: string): void {
    switch (r.kind) {
      case 'logs':
        this.log(r.rec, edgeAt, pageUrl);
        break;
      case 'network': {
        const rec = r.rec;
        if (failedOr5xx(rec.status, rec.error)) this.queue.push(NETWORK, { via: 'network', url: rec.url, status: rec.status, error: rec.error, method: rec.method, duration: rec.duration, response: undefined }, 0, this.sec(), edgeAt, pageUrl);
        this.findingUrl = rec.url;
        this.findingPage = rec.page_url ?? pageUrl;
        this.findingEdgeAt = edgeAt;
        urlFindings(rec.url, this.findingPage, this.addFinding);
        break;
      }
      case 'network_bodies': {
        // only what the response shows (headers, the extension's cookie and document descriptions):
        // the URL's own findings came with its network record
        const rec = r.rec;
        if (rec.response_headers || rec.cookies?.length || rec.document) this.security({ url: rec.url, responseHeaders: rec.response_headers ?? {}, contentType: rec.content_type, cookies: rec.cookies, document: rec.document }, edgeAt);
        break;
      }
      case 'actions': {
        const rec = r.rec;
        // the agent's own clicks are not the user's frustration
        if (rec.type !== 'click' || rec.source === 'agent') break;
        const target = clickTarget(rec.selectors);
        const url = rec.url ?? pageUrl ?? '';
        // one element of one page: the same selector on another page is another button
        if (target) this.queue.push(CLICK, { ts: rec.ts, url, target: `${hostOf(url)}${path(url)} ${target.key}`, label: target.label, dead: rec.effect === 'none' }, 0, this.sec(), edgeAt, undefined);
        break;
      }
      case 'ws_events': {
        const rec = r.rec;
        const code = rec.code;
        const abnormal = rec.event === 'error' || (rec.event === 'close' && code !== undefined && code !== 1000 && code !== 1001);
        if (abnormal) this.queue.push(WS, rec, 0, this.sec(), edgeAt, undefined);
        break;
      }
      case 'perf':
        this.queue.push(PERF, r.rec, 0, this.sec(), edgeAt, undefined);
        break;
      default:
    }
  }

  /** occurrences of a noise key in this worker's current window (bounded, reset when full) */
  private readonly noise = new NoiseCounts(NOISE_KEYS, NOISE_WINDOW_S);

  /**
   * The batch committed: its checks mark the shared state now, in the order its records came, so
   * a batch still sees its own earlier records (a second copy of a new error is not new). Two
   * workers committing the same new signature race on the state's lock: the first marks it and
   * alerts, the second finds it seen. Returns what the batch raised, one envelope per dedup key.
   */
  take(): AlertEnvelope[] {
    const q = this.queue;
    for (let i = 0; i < q.length; i++) {
      const rec = q.rec[i]!;
      const sec = q.sec[i]!;
      const edgeAt = q.edgeAt[i]!;
      switch (q.kind[i]) {
        case ERROR:
          this.newError(rec as IngestedRecordOf<'logs'>, q.key[i]!, sec, edgeAt, q.pageUrl[i]);
          break;
        case NOISE:
          this.noiseGate(rec as IngestedRecordOf<'logs'>, q.key[i]!, sec, edgeAt);
          break;
        case NETWORK:
          this.network(rec as NetworkSeen, sec, edgeAt, q.pageUrl[i]);
          break;
        case WS:
          this.wsEvent(rec as IngestedRecordOf<'ws_events'>, sec, edgeAt);
          break;
        case PERF:
          this.perf(rec as IngestedRecordOf<'perf'>, sec, edgeAt);
          break;
        case SECURITY:
          this.finding(rec as Finding, sec, edgeAt);
          break;
        case CLICK:
          this.click(rec as ClickSeen, sec, edgeAt);
          break;
        default:
      }
    }
    q.clear();
    this.batchSec = -1;
    const report = this.heldReport();
    if (this.pending.size === 0) return report ? [report] : [];
    const out = [...this.pending.values()];
    this.pending.clear();
    if (report) out.push(report);
    return out;
  }

  /** The tally of alerts held back, when it is due (see HELD_REPORT_MS). */
  private heldReport(): AlertEnvelope | undefined {
    const held = this.heldThisBatch;
    this.heldThisBatch = false;
    if (this.held.size === 0) return undefined;
    const now = this.now();
    if (held && now - this.heldReportedAt < HELD_REPORT_MS) return undefined;
    this.heldReportedAt = now;
    return { alert: this.held.report(now), edgeTime: 0 };
  }

  /** An alert over the caps: counted for its scope, to be reported instead of sent. */
  private hold(source: string, url: string | undefined): void {
    this.held.hold(source, url, this.now());
    this.heldThisBatch = true;
  }

  /** The batch did not commit: forget what it raised, and mark nothing of it. */
  discard(): void {
    this.queue.clear();
    this.pending.clear();
    this.batchSec = -1;
  }

  /**
   * The second this batch is seen in: the clock is read once, at the batch's first record that
   * needs it, and again after its take() or discard(). A batch is seen in well under a
   * millisecond, and a clock read cost ~55 ns here, as much as the rest of a record's detection.
   */
  private sec(): number {
    if (this.batchSec < 0) this.batchSec = Math.floor(this.now() / 1000);
    return this.batchSec;
  }

  private raise(a: Omit<Alert, 'timestamp' | 'correlation_id'>, sec: number, edgeAt: number, claimed = false): void {
    const prior = this.pending.get(a.dedup_key);
    if (prior) {
      prior.alert.count = (prior.alert.count ?? 1) + (a.count ?? 1);
      return;
    }
    // spikes and performance are rare by construction; the per-event sources share a cap
    if (!claimed && a.source !== 'spike_detector' && a.source !== 'performance_monitor' && !this.state.claimAlert(sec, scopeOf(a.source, a.url))) return this.hold(a.source, a.url);
    const alert: Alert = { ...a, timestamp: new Date(this.now()).toISOString(), correlation_id: correlationId(a.source.slice(0, 3)) };
    this.pending.set(a.dedup_key, { alert, edgeTime: edgeAt });
  }

  private log(rec: IngestedRecordOf<'logs'>, edgeAt: number, pageUrl?: string): void {
    const sec = this.sec();
    if (rec.type === 'network') {
      if (failedOr5xx(rec.status, rec.error)) {
        const req: NetworkSeen = { via: 'console', url: rec.request_url ?? '', status: rec.status, error: rec.error, method: rec.method ?? 'GET', duration: rec.duration, response: rec.response };
        this.queue.push(NETWORK, req, 0, sec, edgeAt, rec.url ?? pageUrl ?? '');
      }
      return;
    }
    const isError = rec.level === 'error' || rec.type === 'exception';
    if (!isError) {
      // noise: the same non-error message over and over. Most records are console chatter, so
      // this is one hashing pass and a count in this worker's own map, no lock; the shared table
      // only makes sure one worker alerts
      const noiseKey = digitFoldedHash(rec.message ?? '');
      if (this.noise.add(noiseKey, sec) === NOISE_MIN) this.queue.push(NOISE, rec, noiseKey, sec, edgeAt, undefined);
      return;
    }
    // one pass over the message (and the top frame of an exception), not the six regexes of
    // errorSignature: this runs for every error ingested
    const top = rec.stack ? topFrame(rec.stack) : '';
    const sigHash = signatureHash(top, signatureHash(rec.message ?? ''));
    // stored with the record: observe folds errors by it without normalizing them again on main
    rec._sig = sigHash;
    this.queue.push(ERROR, rec, sigHash, sec, edgeAt, pageUrl);
  }

  /** At commit: the console message hit the noise threshold here; the shared gate makes one worker alert. */
  private noiseGate(rec: IngestedRecordOf<'logs'>, noiseKey: number, sec: number, edgeAt: number): void {
    const gate = this.state.touch(noiseKey ^ 0x5bd1e995, sec, NOISE_REALERT_S);
    if (gate?.countInWindow !== 1) return;
    const sig = errorSignature(rec);
    this.raise(
      {
        severity: 'info',
        category: 'noise',
        title: `Noise: a console ${rec.level} repeats (${NOISE_MIN}× in ${NOISE_WINDOW_S} s)`,
        detail: `${cut(sig, 300)} — hide it with configure({action:"noise_rule", ...}) if it does not matter`,
        source: 'noise_detector',
        dedup_key: `noise:${noiseKey}`,
        context: { pattern: cut(sig, 300) },
      },
      sec,
      edgeAt,
    );
  }

  /** At commit: an error counts toward the spike buckets, and alerts when its signature is new. */
  private newError(rec: IngestedRecordOf<'logs'>, sigHash: number, sec: number, edgeAt: number, pageUrl: string | undefined): void {
    this.state.countError(sec);
    this.spike(sec, edgeAt);
    const message = rec.message ?? '';
    const seen = this.state.touch(sigHash ^ 0x27d4eb2f, sec, NEW_ERROR_WINDOW_S);
    if (!seen || (seen.lastSeen >= 0 && sec - seen.lastSeen < NEW_ERROR_WINDOW_S)) return;
    // the allowance first: in a flood of new errors, building their text is most of the cost
    const url = rec.url ?? pageUrl;
    if (!this.state.claimAlert(sec, scopeOf('error_detector', url))) return this.hold('error_detector', url);
    const sig = errorSignature(rec);
    const where = rec.source !== undefined ? rec.source : rec.filename !== undefined ? `${rec.filename}:${rec.lineno ?? ''}` : '';
    this.raise(
      {
        severity: 'error',
        category: 'anomaly',
        title: cut(`New ${rec.type === 'exception' ? 'exception' : 'console error'}: ${message.split('\n')[0]}`, 200),
        detail: cut(`${message}${where ? ` (at ${where})` : ''}`, 1000),
        source: 'error_detector',
        ...(rec.url !== undefined ? { url: cut(rec.url, 500) } : pageUrl ? { url: cut(pageUrl, 500) } : {}),
        dedup_key: `error:${sigHash}`,
        // the generated top frame: main resolves it with the page's source map (src/sourcemaps/)
        context: { signature: cut(sig, 300), ...frameOf(rec) },
      },
      sec,
      edgeAt,
      true,
    );
  }

  private spike(sec: number, edgeAt: number): void {
    if (!this.state.claimSpikeCheck(sec)) return;
    const recent = this.state.errorsIn(sec, SPIKE_RECENT_S);
    const base = this.state.errorsIn(sec, SPIKE_BASE_S);
    const avgPerWindow = base / (SPIKE_BASE_S / SPIKE_RECENT_S);
    if (recent < SPIKE_MIN || recent <= SPIKE_FACTOR * avgPerWindow) return;
    // the recent window is part of the base, so a spike from silence reads ~6×
    this.raise(
      {
        severity: 'error',
        category: 'anomaly',
        title: 'Error spike',
        detail: `${recent} errors in the last ${SPIKE_RECENT_S} s, ${Math.round((recent / Math.max(avgPerWindow, 0.1)) * 10) / 10}× the ${SPIKE_BASE_S} s average (${Math.round(avgPerWindow * 10) / 10} per ${SPIKE_RECENT_S} s)`,
        source: 'spike_detector',
        dedup_key: 'spike',
        context: { recent, per_window_average: Math.round(avgPerWindow * 10) / 10 },
      },
      sec,
      edgeAt,
    );
  }

  /**
   * At commit, a request from a network record or a console record of type network (the fields
   * both carry) that failed or answered 5xx: the first within the repeat window alerts, the rest count.
   */
  private network(req: NetworkSeen, sec: number, edgeAt: number, pageUrl: string | undefined): void {
    const { url, error, method } = req;
    const code = req.status ?? Number.NaN;
    const failed = (error !== undefined && error !== '') || !(code > 0);
    const outcome = failed && !(code >= 500) ? 'failed' : code;
    if (!this.firstDescription(req, outcome, sec)) return;
    const key0 = `net:${method} ${pathTemplate(url)} ${outcome}`;
    const seen0 = this.state.touch(hash32(key0), sec, REPEAT_WINDOW_S);
    const pendingPrior = this.pending.get(key0);
    if (pendingPrior) {
      pendingPrior.alert.count = (pendingPrior.alert.count ?? 1) + 1;
      return;
    }
    // within the window only the first is sent on
    if (seen0 && seen0.countInWindow > 1) return;
    if (!this.state.claimAlert(sec, scopeOf('anomaly_detector', url))) return this.hold('anomaly_detector', url);
    const title = failed && !(code >= 500) ? cut(`Network failure: ${method} ${path(url)}${error ? ` (${error})` : ''}`, 200) : cut(`Server error: ${method} ${path(url)} → ${code}`, 200);
    const key = key0;
    this.raise(
      {
        severity: 'error',
        category: 'anomaly',
        title,
        detail: cut(`${method} ${url}${code > 0 ? ` → ${code}` : ''}${req.duration !== undefined ? ` in ${req.duration} ms` : ''}${req.response ? `: ${req.response}` : ''}`, 1000),
        source: 'anomaly_detector',
        url: cut(url, 500),
        dedup_key: key,
        context: pageUrl ? { page_url: cut(pageUrl, 500) } : undefined,
      },
      sec,
      edgeAt,
      true,
    );
  }

  /** Whether this record is a request not yet described by a record of the other kind (fails open when the state is busy). */
  private firstDescription(req: NetworkSeen, outcome: string | number, sec: number): boolean {
    const id = hash32(`req:${req.method} ${req.url} ${outcome} ${req.duration ?? ''}`);
    const mine = this.state.touch(id ^ PAIR_SALT[req.via], sec, PAIR_WINDOW_S);
    if (!mine) return true;
    const other = this.state.peek(id ^ PAIR_SALT[req.via === 'network' ? 'console' : 'network'], sec, PAIR_WINDOW_S);
    return other === undefined || mine.countInWindow > other;
  }

  /** At commit: a WebSocket error or abnormal close, once per repeat window. */
  private wsEvent(rec: IngestedRecordOf<'ws_events'>, sec: number, edgeAt: number): void {
    const code = rec.code;
    const url = rec.url ?? '';
    const key = `ws:${pathTemplate(url)}:${rec.event}:${code ?? ''}`;
    const seen = this.state.touch(hash32(key), sec, REPEAT_WINDOW_S);
    if (seen && seen.countInWindow > 1 && !this.pending.has(key)) return;
    this.raise(
      {
        severity: 'warning',
        category: 'anomaly',
        title: cut(rec.event === 'error' ? `WebSocket error: ${path(url)}` : `WebSocket closed abnormally: ${path(url)} (${code})`, 200),
        detail: cut(`${url}${rec.reason ? `: ${rec.reason}` : ''}`, 1000),
        source: 'anomaly_detector',
        url: cut(url, 500),
        dedup_key: key,
      },
      sec,
      edgeAt,
    );
  }

  /**
   * The request's security findings, queued for the commit. A network record's URL (most show
   * nothing); a bodies record's headers only: its URL's findings came with its network record.
   */
  private security(r: RequestSeen, edgeAt: number): void {
    this.findingUrl = r.url;
    this.findingPage = r.pageUrl;
    this.findingEdgeAt = edgeAt;
    if (r.responseHeaders) headerFindings(r, this.addFinding);
    else urlFindings(r.url, r.pageUrl, this.addFinding);
  }

  /** A finding of the request `security` is checking, queued; one bound function, not a closure per request (most show nothing). */
  private readonly addFinding = (severity: FindingSeverity, what: string): void => {
    this.queue.push(SECURITY, { severity, what, url: this.findingUrl, pageUrl: this.findingPage }, 0, this.sec(), this.findingEdgeAt, undefined);
  };

  /** At commit: a finding is raised once per finding and host per SECURITY_REALERT_S; repeats in the batch count. */
  private finding(f: Finding, sec: number, edgeAt: number): void {
    const host = hostOf(f.url);
    const key = `security:${f.what}|${host}`;
    const pendingPrior = this.pending.get(key);
    if (pendingPrior) {
      pendingPrior.alert.count = (pendingPrior.alert.count ?? 1) + 1;
      return;
    }
    const seen = this.state.touch(hash32(key), sec, SECURITY_REALERT_S);
    if (seen && seen.countInWindow > 1) return;
    this.raise(
      {
        severity: FINDING_SEVERITY[f.severity],
        category: 'security',
        title: cut(`Security: ${f.what}${host ? ` (${host})` : ''}`, 200),
        detail: cut(`${f.severity}: ${f.what} — ${pathTemplate(f.url)}${f.pageUrl ? ` from ${f.pageUrl}` : ''}. analyze({target:"security"}) lists every finding`, 1000),
        source: SECURITY_SOURCE,
        url: cut(f.url, 500),
        dedup_key: key,
        context: { finding: f.what, severity: f.severity, endpoint: cut(pathTemplate(f.url), 300) },
      },
      sec,
      edgeAt,
    );
  }

  /**
   * At commit: a click is a rage click when it is the third on its element within RAGE_SPAN_MS,
   * by the clicks' own times (batches from one page may reach different workers, so the last two
   * click times live in the shared table: two keys per element, each touch handing back the time
   * the key held before). A dead click is the extension's verdict (effect "none").
   */
  private click(c: ClickSeen, sec: number, edgeAt: number): void {
    const tick = Math.floor(c.ts / RAGE_TICK_MS) % RAGE_TICK_WRAP;
    const el = hash32(`click:${c.target}`);
    const prev = this.state.touch(el, tick, 1)?.lastSeen ?? -1;
    const before = prev >= 0 ? (this.state.touch(el ^ 0x3c6ef372, prev, 1)?.lastSeen ?? -1) : -1;
    const span = (tick - before) * RAGE_TICK_MS;
    // a negative span is a wrap of the ticks or a click time from another clock: not a rage
    if (before >= 0 && span >= 0 && span <= RAGE_SPAN_MS) this.frustration('rage', c, sec, edgeAt, `${RAGE_CLICKS} clicks within ${span} ms`);
    if (c.dead) this.frustration('dead', c, sec, edgeAt, 'no DOM change, navigation or request within 1 s after the click');
  }

  private frustration(what: 'rage' | 'dead', c: ClickSeen, sec: number, edgeAt: number, evidence: string): void {
    const key = `${what}:${c.target}`;
    const pendingPrior = this.pending.get(key);
    if (pendingPrior) {
      pendingPrior.alert.count = (pendingPrior.alert.count ?? 1) + 1;
      return;
    }
    const seen = this.state.touch(hash32(key), sec, FRUSTRATION_REALERT_S);
    if (seen && seen.countInWindow > 1) return;
    this.raise(
      {
        severity: 'warning',
        category: 'user_frustration',
        title: cut(`${what === 'rage' ? 'Rage click' : 'Dead click'} on ${c.label}`, 200),
        detail: cut(`${evidence} on ${c.label}${c.url ? ` at ${c.url}` : ''}. observe({what:"actions"}) shows the clicks`, 1000),
        source: FRUSTRATION_SOURCE,
        ...(c.url ? { url: cut(c.url, 500) } : {}),
        dedup_key: key,
        context: { kind: what === 'rage' ? 'rage_click' : 'dead_click', target: cut(c.target, 300) },
      },
      sec,
      edgeAt,
    );
  }

  /** At commit: the snapshot against its URL's baseline, folded in when it is not a regression. */
  private perf(rec: IngestedRecordOf<'perf'>, sec: number, edgeAt: number): void {
    const url = rec.url;
    const timing = rec.timing;
    const current: Partial<Record<Metric, number>> = {};
    for (const m of PERF_METRICS) {
      const v = timing[m];
      if (typeof v === 'number') current[m] = v;
    }
    const key = hash32(`perf:${pathTemplate(url)}`);
    let found: ReturnType<typeof regressions> = [];
    const r = this.state.comparePerf(key, current, (baseline) => (found = regressions(baseline, current)).length > 0);
    if (!r?.baseline) return;
    if (r.regressed) {
      this.raise(
        {
          severity: 'warning',
          category: 'regression',
          title: cut(`Performance regression: ${path(url)}`, 200),
          detail: cut(found.map((f) => `${f.metric.toUpperCase()} ${fmt(f.metric, f.current)} vs baseline ${fmt(f.metric, f.baseline)} (${f.change})`).join('; '), 1000),
          source: 'performance_monitor',
          url: cut(url, 500),
          dedup_key: `perf:${key}`,
          context: { regressions: found.map((f) => ({ metric: f.metric, baseline: round(f.baseline), current: round(f.current), change: f.change })) },
        },
        sec,
        edgeAt,
      );
    } else if (r.wasRegressed) {
      this.raise(
        {
          severity: 'info',
          category: 'regression',
          title: cut(`Performance recovered: ${path(url)}`, 200),
          detail: 'the latest snapshot is back within 20 % of the baseline (CLS within 0.1)',
          source: 'performance_monitor',
          url: cut(url, 500),
          dedup_key: `perf-ok:${key}`,
        },
        sec,
        edgeAt,
      );
    }
  }
}

/** Whether a request goes to the network check; no status: it never got an answer (counts as a failure). */
function failedOr5xx(status: number | undefined, error: string | undefined): boolean {
  return (error !== undefined && error !== '') || !(status !== undefined && status > 0) || status >= 500;
}

/** What the network check needs of a request, from either record kind that describes one. */
interface NetworkSeen {
  /** which record kind described it: the network record or its console line */
  via: 'network' | 'console';
  url: string;
  status: number | undefined;
  error: string | undefined;
  method: string;
  duration: number | undefined;
  response: string | undefined;
}

/** A security finding a request showed, until the commit raises it. */
interface Finding {
  severity: FindingSeverity;
  what: string;
  url: string;
  pageUrl: string | undefined;
}

/** What the click check needs of a click record. */
interface ClickSeen {
  ts: number;
  /** the page it was on */
  url: string;
  /** what "one element" means: the page's path and the most specific selector the record has */
  target: string;
  /** the element as the agent should read it */
  label: string;
  /** the extension saw no DOM change, navigation or request within 1 s */
  dead: boolean;
}

/** One element of one page, from the selectors the extension recorded; undefined when it named none. */
function clickTarget(sel: IngestedRecordOf<'actions'>['selectors']): { key: string; label: string } | undefined {
  if (!sel) return undefined;
  const key = sel.css_path ?? (sel.test_id !== undefined ? `[data-testid="${sel.test_id}"]` : sel.id !== undefined ? `#${sel.id}` : undefined) ?? (sel.aria_label !== undefined ? `aria:${sel.aria_label}` : sel.text !== undefined ? `text:${sel.text}` : undefined);
  if (key === undefined) return undefined;
  const name = sel.text ?? sel.aria_label;
  const label = name ? `${sel.role ?? 'element'} "${cut(name.replace(/\s+/g, ' ').trim(), 60)}"` : cut(key, 120);
  return { key: cut(key, 300), label };
}

/** What shares an alert allowance: a source on one host ("https://api.x:8443/a" → api.x:8443). */
function scopeOf(source: string, url: string | undefined): number {
  return hash32(scopeLabel(source, hostOf(url)));
}

/**
 * FNV-1a over the first 300 characters, every run of digits folded to one '#': the cheapest "same
 * line again". Exported for its tests. The basis is written as the int32 it is: as 0x811c9dc5 (a
 * double) the loop's hash could be kept as a double, and ran ~2× slower.
 */
export function digitFoldedHash(s: string): number {
  let h = -2128831035; // 0x811c9dc5
  const n = Math.min(s.length, 300);
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i++);
    // not a digit: one unsigned compare (two compares cost ~30 % more here)
    if ((c - 48) >>> 0 >= 10) {
      h = Math.imul(h ^ c, 0x01000193);
      // then two at a time while neither is a digit: half the loop's tests, the multiplications
      // left as the only chain (~15 % less)
      while (i + 1 < n) {
        const a = s.charCodeAt(i);
        const b = s.charCodeAt(i + 1);
        if ((a - 48) >>> 0 < 10 || (b - 48) >>> 0 < 10) break;
        h = Math.imul(Math.imul(h ^ a, 0x01000193) ^ b, 0x01000193);
        i += 2;
      }
      continue;
    }
    h = Math.imul(h ^ 35, 0x01000193);
    while (i < n && (s.charCodeAt(i) - 48) >>> 0 < 10) i++;
  }
  return h === 0 ? 1 : h;
}

const round = (v: number): number => Math.round(v * 1000) / 1000;
const fmt = (m: Metric, v: number): string => (m === 'cls' ? v.toFixed(2) : `${Math.round(v)} ms`);

/** `fn (URL:line:col)`: the stack's top frame outside our extension, else the console call site, else the error event's position. */
function frameOf(rec: IngestedRecordOf<'logs'>): { frame?: string } {
  const positioned = (s: string): boolean => /:\d+:\d+\)?$/.test(s);
  if (typeof rec.stack === 'string') {
    for (const l of rec.stack.split('\n', 16)) {
      const t = l.trim();
      if (t.startsWith('at ') && !t.includes('chrome-extension://') && positioned(t)) return { frame: cut(t.slice(3), 300) };
    }
  }
  if (typeof rec.source === 'string' && positioned(rec.source)) return { frame: cut(rec.source, 300) };
  if (typeof rec.filename === 'string' && rec.lineno !== undefined && rec.colno !== undefined) return { frame: cut(`${rec.filename}:${rec.lineno}:${rec.colno}`, 300) };
  return {};
}
