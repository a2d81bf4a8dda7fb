/**
 * Errors with what happened just before each. Both halves stay light on the main thread: the
 * errors are found in 2 ms slices, and each error's context is picked on record headers (time
 * window) and bytes, parsing only the few records it shows.
 */
import { kindId, type Kind } from '../domain/kinds.js';
import type { RecordHeader, StoreReader } from '../shm/index.js';
import { matcher, prefilter, type FilterArgs } from './filter.js';
import { lastMatching } from './last-matching.js';
import type { Hit, Rec } from './scan.js';
import { ScanBudget, scanSliced } from './sliced-scan.js';
import type { TabScope } from './tab-scope.js';
import { needle } from './needles.js';

export interface ErrorsSpec {
  from: number;
  /** errors kept at most; the rest are counted */
  limit: number;
  maxScan: number;
  /** the caller's filters; `what` is forced to errors */
  filter: FilterArgs;
  hide?: (rec: Rec) => boolean;
  tab?: number | undefined;
  scope?: TabScope | undefined;
}

export interface FoundErrors {
  hits: Hit[];
  /** errors matched, kept or not */
  matched: number;
  scanned: number;
  atEnd: boolean;
  /** past the kept errors the cursor resumes after the last of them; otherwise where the scan ended */
  next: number;
}

export async function findErrors(reader: StoreReader, s: ErrorsSpec): Promise<FoundErrors> {
  const filter = { ...s.filter, what: 'errors' };
  const hits: Hit[] = [];
  let afterHits = s.from;
  const r = await scanSliced(reader, {
    kind: kindId('logs'),
    from: s.from,
    limit: 0,
    maxScan: s.maxScan,
    ...prefilter(filter),
    match: matcher(filter),
    ...(s.hide ? { hide: s.hide } : {}),
    tab: s.tab,
    scope: s.scope,
    sink: (h) => {
      if (hits.length < s.limit) {
        hits.push(h);
        afterHits = h.ord + 1;
      }
      return true;
    },
  }, new ScanBudget());
  return { hits, matched: r.matched, scanned: r.scanned, atEnd: r.atEnd, next: r.matched > hits.length ? afterHits : r.next };
}

/** a log record's level as stored: the context of an error shows warnings and errors */
const WARN_OR_ERROR = [needle('"level":"warn"', 'warn'), needle('"level":"error"', 'error')];
/** context records per kind, and how far back each looks */
const PER_KIND = 8;
const LOOK_BACK = 2000;

/** What happened in the `windowMs` before an error: actions, then requests, then warnings and errors. */
export function errorContext(reader: StoreReader, e: Hit, windowMs: number): Hit[] {
  const inWindow = (h: RecordHeader): boolean => h.clientTime <= e.clientTime && h.clientTime >= e.clientTime - windowMs;
  const out: Hit[] = [];
  for (const kind of ['actions', 'network', 'logs'] as Kind[]) {
    const kk = kindId(kind);
    // context lies just before the error; look back a bounded distance from its position
    const back = kind === 'logs' ? e.ord : reader.latestOrd(kk);
    out.push(...lastMatching(reader, {
      kind: kk,
      from: Math.max(reader.tailOrd(kk), back - LOOK_BACK),
      ...(kind === 'logs' ? { to: e.ord, anyOf: WARN_OR_ERROR, verify: (rec: Rec) => rec.level === 'warn' || rec.level === 'error' } : {}),
      n: PER_KIND,
      maxScan: LOOK_BACK,
      where: inWindow,
    }));
  }
  return out;
}
