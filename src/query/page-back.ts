/**
 * Paging back from a cursor: the matching records just before it, per kind a bounded distance
 * back, newest first so the caller fills its budget from the cursor outwards.
 */
import type { StoreReader } from '../shm/index.js';
import { matcher, prefilter, type FilterArgs } from './filter.js';
import { scan, type Hit, type Rec } from './scan.js';
import type { TabScope } from './tab-scope.js';

export interface BackSpec {
  kinds: number[];
  /** per kind: the exclusive end ordinal (the cursor) */
  end: number[];
  filter: FilterArgs;
  /** records hidden (noise) are skipped */
  hide?: (rec: Rec) => boolean;
  tab?: number | undefined;
  scope?: TabScope | undefined;
  /** records examined at most, for all kinds together (split evenly) */
  maxScan: number;
  /** wall-clock bound for the whole read, split evenly over the kinds */
  budgetMs: number;
}

export function hitsBefore(reader: StoreReader, s: BackSpec): Hit[] {
  const match = matcher(s.filter);
  const pre = prefilter(s.filter);
  const back = Math.floor(s.maxScan / s.kinds.length);
  const hits: Hit[] = [];
  s.kinds.forEach((id, i) => {
    const end = s.end[i]!;
    const from = Math.max(reader.tailOrd(id), end - back);
    const r = scan(reader, { kind: id, from, limit: back, maxScan: back, budgetMs: s.budgetMs / s.kinds.length, ...pre, match: (rec, h) => h.ord < end && match(rec), ...(s.hide ? { hide: s.hide } : {}), tab: s.tab, scope: s.scope });
    hits.push(...r.hits);
  });
  return hits.sort((x, y) => y.seq - x.seq);
}
