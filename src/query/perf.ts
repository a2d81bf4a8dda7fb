/**
 * Page-load snapshots per URL, oldest first: the input of the vitals ratings (observe) and of the
 * baseline regressions (analyze, summary). Perf records are rare, one per load, so a bounded read
 * of the whole ring is cheap.
 */
import { kindId } from '../domain/kinds.js';
import type { Metric } from '../domain/signals/vitals.js';
import type { StoreReader } from '../shm/index.js';
import { scan } from './scan.js';
import type { ScanBudget } from './sliced-scan.js';
import { scanSliced } from './sliced-scan.js';
import type { TabScope } from './tab-scope.js';

export type Timing = Partial<Record<Metric, number | null>>;

export interface Load {
  ord: number;
  /** client time of the snapshot */
  t: number;
  timing: Timing;
}

/** Records read for the loads of every URL: a perf ring holds far fewer. */
export const PERF_MAX_SCAN = 20_000;

/** Every load buffered, per URL (up to maxScan records). */
export function perfByUrl(reader: StoreReader, maxScan = PERF_MAX_SCAN, scope?: TabScope): Map<string, Load[]> {
  const k = kindId('perf');
  const r = scan(reader, { kind: k, from: reader.tailOrd(k), limit: maxScan, maxScan, scope });
  const by = new Map<string, Load[]>();
  for (const h of r.hits) {
    const url = h.rec.url ?? '';
    let arr = by.get(url);
    if (!arr) by.set(url, (arr = []));
    arr.push({ ord: h.ord, t: h.clientTime, timing: (h.rec.timing ?? {}) as Timing });
  }
  return by;
}

/** The same read in slices, for a caller that shares the main thread with pushes; at most maxUrls URLs. */
export async function perfByUrlSliced(reader: StoreReader, work: ScanBudget, maxScan: number, maxUrls: number, scope?: TabScope): Promise<Map<string, Load[]>> {
  const k = kindId('perf');
  const by = new Map<string, Load[]>();
  await scanSliced(reader, {
    kind: k,
    from: reader.tailOrd(k),
    limit: 0,
    maxScan,
    scope,
    sink: (h) => {
      const url = h.rec.url ?? '';
      let arr = by.get(url);
      if (!arr) {
        if (by.size >= maxUrls) return false;
        by.set(url, (arr = []));
      }
      arr.push({ ord: h.ord, t: h.clientTime, timing: (h.rec.timing ?? {}) as Timing });
      return true;
    },
  }, work);
  return by;
}

/** A URL's loads from ordinal `from` on (a checkpoint's), oldest first. */
export function loadsSince(reader: StoreReader, url: string, from: number, maxScan: number, scope?: TabScope): Load[] {
  const k = kindId('perf');
  return scan(reader, { kind: k, from: Math.max(from, reader.tailOrd(k)), limit: 1000, maxScan, scope, match: (r) => r.url === url }).hits.map((h) => ({ ord: h.ord, t: h.clientTime, timing: (h.rec.timing ?? {}) as Timing }));
}
