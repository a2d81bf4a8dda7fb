/**
 * Alerts held back over the rate caps (20 a second per source and host, then 200 overall: see
 * src/shm/detect-state.ts) are counted per scope and surfaced, never only dropped (#20 item 2):
 * an agent told of 20 failing endpoints on a host must learn there were more.
 *
 * A worker tallies what it held back per scope and hands the tally over as one alert of source
 * HELD_SOURCE (the ring carries alerts only). Main keeps a ledger of those tallies: the next alert
 * of a scope carries "+N more … in the last N s", and what no alert of its scope picked up within
 * HELD_SUMMARY_MS goes out as one summary alert for every scope.
 */
import { correlationId, type Alert } from './alert.js';

/** the source of a worker's tally (never fanned out) and of main's summary alert */
export const HELD_SOURCE = 'alert_cap';
/** scopes a tally names; beyond them the rest are counted under one '*' scope */
export const HELD_SCOPES = 16;
/** what no alert of its scope picked up goes out in a summary this long after it reached main */
export const HELD_SUMMARY_MS = 2000;

export interface HeldTally {
  source: string;
  /** the URL's host ('' when the alert names no URL, '*' for scopes past HELD_SCOPES) */
  host: string;
  n: number;
  /** epoch ms of the first one held back */
  since: number;
}

/** "https://api.x:8443/a" → "api.x:8443": what shares an allowance with the source */
export function hostOf(url: string | undefined): string {
  if (!url) return '';
  const at = url.indexOf('://');
  const from = at >= 0 ? at + 3 : 0;
  let end = url.indexOf('/', from);
  if (end < 0) end = url.length;
  return url.slice(from, Math.min(end, from + 255));
}

export const scopeLabel = (source: string, host: string): string => `${source}|${host}`;

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** What a worker held back since its last report, per scope, bounded. */
export class HeldTallies {
  private readonly by = new Map<string, HeldTally>();

  hold(source: string, url: string | undefined, now: number): void {
    let host = hostOf(url);
    let key = scopeLabel(source, host);
    if (!this.by.has(key) && this.by.size >= HELD_SCOPES - 1) {
      source = '*';
      host = '*';
      key = scopeLabel(source, host);
    }
    const t = this.by.get(key);
    if (t) t.n++;
    else this.by.set(key, { source, host: cut(host, 100), n: 1, since: now });
  }

  get size(): number {
    return this.by.size;
  }

  /** The tally as the alert that carries it to main; empties the tally. */
  report(now: number): Alert {
    const held = [...this.by.values()];
    this.by.clear();
    const n = held.reduce((s, t) => s + t.n, 0);
    return {
      severity: 'warning',
      category: 'threshold',
      title: `${n} alerts held back over the rate caps`,
      detail: held.map((t) => `${t.source} ${t.host}: ${t.n}`).join('; ').slice(0, 2000),
      timestamp: new Date(now).toISOString(),
      source: HELD_SOURCE,
      dedup_key: 'held',
      correlation_id: correlationId('cap'),
      context: { held },
    };
  }
}

/** the tallies a HELD_SOURCE alert from a worker carries (anything else in it is ignored) */
export function talliesOf(a: Alert): HeldTally[] {
  const held = a.context?.held;
  if (!Array.isArray(held)) return [];
  return held.filter((t): t is HeldTally => t && typeof t === 'object' && typeof t.source === 'string' && typeof t.host === 'string' && Number.isInteger(t.n) && t.n > 0 && typeof t.since === 'number');
}

interface Pending extends HeldTally {
  /** main's clock when the first of these reached it */
  arrived: number;
}

export interface HeldStats {
  /** held back by the workers and reported to main */
  total: number;
  /** named by the next alert of their scope */
  in_alerts: number;
  /** named by a summary alert */
  in_summaries: number;
  /** reported, not yet named (waiting for an alert of their scope or the summary) */
  pending: number;
}

/** Main's side: what the workers held back, until an alert or the summary names it. */
export class HeldLedger {
  private readonly pending = new Map<string, Pending>();
  private readonly s: HeldStats = { total: 0, in_alerts: 0, in_summaries: 0, pending: 0 };
  /**
   * Held back in the workers (their shared counter says so) but not reported for HELD_SUMMARY_MS:
   * a worker keeps its tally until its next batch, and none may come. A summary names these
   * without a host; the tallies that report them later are not named twice.
   */
  private unreported = { since: 0, named: 0 };

  add(tallies: readonly HeldTally[], now: number): void {
    for (const t0 of tallies) {
      const absorbed = Math.min(t0.n, this.unreported.named);
      this.unreported.named -= absorbed;
      this.s.total += absorbed;
      const t = { ...t0, n: t0.n - absorbed };
      if (t.n === 0) continue;
      this.s.total += t.n;
      this.s.pending += t.n;
      const key = scopeLabel(t.source, t.host);
      const p = this.pending.get(key);
      if (p) {
        p.n += t.n;
        p.since = Math.min(p.since, t.since);
      } else {
        // bounded like a tally: a flood of hosts folds into '*'
        const over = this.pending.size >= HELD_SCOPES * 4;
        const k = over ? scopeLabel('*', '*') : key;
        const q = this.pending.get(k);
        if (q) q.n += t.n;
        else this.pending.set(k, { ...(over ? { source: '*', host: '*' } : t), n: t.n, since: t.since, arrived: now });
      }
    }
  }

  /** An alert about to go out: with "+N more" when its scope has some waiting (they are then named). */
  annotate(a: Alert, now: number): Alert {
    if (this.pending.size === 0 || a.source === HELD_SOURCE) return a;
    const key = scopeLabel(a.source, hostOf(a.url));
    const p = this.pending.get(key);
    if (!p) return a;
    this.pending.delete(key);
    this.s.pending -= p.n;
    this.s.in_alerts += p.n;
    const note = ` (+${p.n} more ${a.source} alert${p.n === 1 ? '' : 's'}${p.host ? ` on ${p.host}` : ''} held back over the rate caps in the last ${secs(now - p.since)} s)`;
    return { ...a, detail: `${cut(a.detail, 2000 - note.length)}${note}`, context: { ...a.context, held_back: p.n } };
  }

  /**
   * The summary of what waited HELD_SUMMARY_MS without an alert of its scope, or undefined.
   * `heldAtSource`: the workers' shared count of alerts held back, to catch what none reported.
   */
  summary(now: number, heldAtSource?: number): Alert | undefined {
    const gap = heldAtSource === undefined ? 0 : heldAtSource - this.s.total - this.unreported.named;
    if (gap <= 0) this.unreported.since = 0;
    else if (this.unreported.since === 0) this.unreported.since = now;
    const gapDue = gap > 0 && now - this.unreported.since >= HELD_SUMMARY_MS;
    let due = gapDue;
    for (const p of this.pending.values()) if (now - p.arrived >= HELD_SUMMARY_MS) due = true;
    if (!due) return undefined;
    const all = [...this.pending.values()].sort((x, y) => y.n - x.n);
    this.pending.clear();
    if (gapDue) {
      all.push({ source: 'not yet reported by a worker', host: '', n: gap, since: this.unreported.since, arrived: now });
      this.unreported = { since: 0, named: this.unreported.named + gap };
    }
    const n = all.reduce((s, p) => s + p.n, 0);
    this.s.pending -= n - (gapDue ? gap : 0);
    this.s.in_summaries += n;
    const oldest = Math.min(...all.map((p) => p.since));
    const per = all.slice(0, 10).map((p) => `+${p.n} ${p.source}${p.host ? ` on ${p.host}` : ''}`);
    const rest = all.length > 10 ? `; +${all.slice(10).reduce((s, p) => s + p.n, 0)} more on ${all.length - 10} other scopes` : '';
    return {
      severity: 'warning',
      category: 'threshold',
      title: `+${n} more alert${n === 1 ? '' : 's'} held back over the rate caps in the last ${secs(now - oldest)} s`,
      detail: cut(`${per.join('; ')}${rest}. Caps: 20 a second per source and host, 200 overall; the records themselves are stored: observe({what:"summary"}) counts them`, 2000),
      timestamp: new Date(now).toISOString(),
      source: HELD_SOURCE,
      dedup_key: `held:${now}`,
      correlation_id: correlationId('cap'),
      context: { held_back: n, scopes: all.slice(0, 10).map(({ source, host, n: k }) => ({ source, host, n: k })) },
    };
  }

  get stats(): HeldStats {
    return { ...this.s };
  }

  /** something held back waits for its summary (summary() must be called again) */
  get waiting(): boolean {
    return this.pending.size > 0 || this.unreported.since !== 0;
  }
}

const secs = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
