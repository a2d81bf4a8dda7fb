/**
 * Passive delivery: the last 50 alerts wait here and ride on the next `observe` as a second text
 * block. Adding is O(1) (oldest evicted silently — an alert about dropped alerts would only be
 * more noise); draining synthesizes at most 50 entries: repeats folded with their count, a
 * regression and an anomaly within 5 s merged into one compound alert, most severe first then
 * newest, and a one-line summary when there are more than three.
 */
import { SEVERITY_RANK, type Alert } from './alert.js';

export const ALERT_BUFFER_SIZE = 50;
const COMPOUND_WINDOW_MS = 5000;

export interface SynthesizedAlert extends Alert {
  /** the alerts folded into this one (1 for a lone alert) */
  count: number;
  /** for a compound alert: the correlated one */
  related?: Pick<Alert, 'category' | 'title' | 'detail' | 'url'>;
}

export class AlertBuffer {
  private readonly ring: Array<Alert | undefined>;
  private head = 0;
  private size = 0;
  evicted = 0;

  constructor(private readonly capacity = ALERT_BUFFER_SIZE) {
    this.ring = new Array<Alert | undefined>(capacity);
  }

  add(a: Alert): void {
    this.ring[(this.head + this.size) % this.capacity] = a;
    if (this.size < this.capacity) this.size++;
    else {
      this.head = (this.head + 1) % this.capacity;
      this.evicted++;
    }
  }

  get pending(): number {
    return this.size;
  }

  /** Oldest first, without taking them. */
  peek(): Alert[] {
    const out: Alert[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.ring[(this.head + i) % this.capacity]!);
    return out;
  }

  /** Oldest first; empties the buffer. */
  drain(): Alert[] {
    const out: Alert[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.ring[(this.head + i) % this.capacity]!);
    this.ring.fill(undefined);
    this.head = 0;
    this.size = 0;
    return out;
  }

  clear(): void {
    this.drain();
  }
}

/** alerts with the same key are one line */
export const foldKey = (a: Pick<Alert, 'category' | 'title'>): string => `${a.category}\u0000${a.title}`;

/**
 * A copy of the alert with its count. Not `{ ...a, count }`: a spread copy that then gets a
 * property its source lacks leaves V8's fast path (Node 20: ~1.3 µs an alert, against ~0.1 µs
 * for Object.assign then the property) — 50 alerts an observe, on main (issue 17).
 */
function counted(a: Alert, count: number): SynthesizedAlert {
  const c = Object.assign({}, a) as SynthesizedAlert;
  c.count = count;
  return c;
}

export function synthesize(alerts: readonly Alert[]): SynthesizedAlert[] {
  // each alert's time parsed once (the sort below meets each one several times)
  const times = new Map<Alert, number>();
  const time = (a: Alert): number => {
    let t = times.get(a);
    if (t === undefined) {
      t = Date.parse(a.timestamp) || 0;
      times.set(a, t);
    }
    return t;
  };
  // fold repeats by (category, title): the newest stands for them, with their total count
  const byKey = new Map<string, SynthesizedAlert>();
  for (const a of alerts) {
    const key = foldKey(a);
    const prior = byKey.get(key);
    const n = a.count ?? 1;
    byKey.set(key, !prior ? counted(a, n) : counted(time(a) >= time(prior) ? a : prior, prior.count + n));
  }
  let list = [...byKey.values()];
  // a regression and an anomaly close together are probably one story: say so once
  const regressions = list.filter((a) => a.category === 'regression' && a.severity !== 'info');
  const used = new Set<SynthesizedAlert>();
  const compounds: SynthesizedAlert[] = [];
  for (const r of regressions) {
    const anomaly = list.find((a) => a.category === 'anomaly' && !used.has(a) && Math.abs(time(a) - time(r)) <= COMPOUND_WINDOW_MS);
    if (!anomaly) continue;
    used.add(anomaly);
    used.add(r);
    const lead = SEVERITY_RANK[anomaly.severity] >= SEVERITY_RANK[r.severity] ? anomaly : r;
    const other = lead === anomaly ? r : anomaly;
    compounds.push({
      ...lead,
      title: `${lead.title} + ${other.title}`.slice(0, 200),
      count: lead.count + other.count,
      related: { category: other.category, title: other.title, detail: other.detail, ...(other.url ? { url: other.url } : {}) },
    });
  }
  list = [...list.filter((a) => !used.has(a)), ...compounds];
  list.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || time(b) - time(a));
  return list;
}

/** The one line other tools add while alerts wait; '' when none do. */
export function pendingNote(n: number): string {
  return n > 0 ? `${n} alert${n === 1 ? '' : 's'} pending — call observe to see ${n === 1 ? 'it' : 'them'}` : '';
}
