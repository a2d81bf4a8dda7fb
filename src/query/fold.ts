/**
 * Folding repeats in one pass: O(records scanned), one map entry per distinct signature, and the
 * map is bounded — when it is full the scan stops and the cursor continues from that record, so
 * nothing is dropped and memory stays flat however noisy the page.
 */
import { foldKey, severity, type Severity } from './fold-key.js';
import type { Hit } from './scan.js';

/**
 * Distinct lines per call. An 8 000-character answer shows ~40 of them; beyond a few hundred an
 * agent learns nothing more from one call, and each new signature costs a normalization (~3 µs).
 */
export const MAX_GROUPS = 500;

export interface Group {
  key: string;
  count: number;
  firstTime: number;
  lastTime: number;
  lastSeq: number;
  severity: Severity;
  /** the newest occurrence */
  example: Hit;
}

export class Folder {
  private readonly map = new Map<string, Group>();
  records = 0;

  /** fold:false keeps every record as its own group (same bound, same fill order); keyOf replaces the fold key. */
  constructor(
    readonly fold: boolean,
    private readonly max = MAX_GROUPS,
    private readonly keyOf?: (h: Hit) => string,
  ) {}

  /** `known`: the record's fold key and severity, computed once when it was indexed (match-index.ts) */
  add(h: Hit, known?: { key: string; severity: Severity }): boolean {
    const key = !this.fold ? String(h.seq) : this.keyOf ? this.keyOf(h) : known ? known.key : foldKey(h.kind, h.rec);
    const g = this.map.get(key);
    if (g) {
      g.count++;
      if (h.seq > g.lastSeq) {
        g.lastSeq = h.seq;
        g.example = h;
      }
      g.firstTime = Math.min(g.firstTime, h.clientTime);
      g.lastTime = Math.max(g.lastTime, h.clientTime);
      const sev = known ? known.severity : severity(h.kind, h.rec);
      if (sev > g.severity) g.severity = sev;
    } else {
      if (this.map.size >= this.max) return false;
      this.map.set(key, { key, count: 1, firstTime: h.clientTime, lastTime: h.clientTime, lastSeq: h.seq, severity: known ? known.severity : severity(h.kind, h.rec), example: h });
    }
    this.records++;
    return true;
  }

  get size(): number {
    return this.map.size;
  }

  groups(): Group[] {
    return [...this.map.values()];
  }
}

/** Fill order: most severe first, then newest. */
export const bySeverityThenNewest = (x: Group, y: Group): number => y.severity - x.severity || y.lastSeq - x.lastSeq;
