/**
 * A client's tab filter as the read engine sees it: plain data that crosses to the scan worker
 * like noise specs. A record is in scope when its tab (the record header's tab id) is one of
 * `tabs`, or — with a URL pattern — when the page it was captured on matches it. The client side
 * resolves a URL pattern to the tabs currently showing a matching page (tab-pages.ts), so the
 * kinds that name no page (WebSocket events, bodies) follow their tab.
 */
import { KINDS, PAGE_FIELD } from '../domain/kinds.js';
import { compileUserPattern, type UserPattern } from '../domain/patterns/user-pattern.js';
/** a decoded record of any kind (scan.ts Rec); typed loosely so this module needs nothing of the scan */
type AnyRec = { readonly [field: string]: unknown };

export interface TabScope {
  /** tab ids whose records are in scope */
  tabs: number[];
  /** a linear-time pattern (user-pattern.ts, case-insensitive) tested on a record's page URL */
  url?: string | undefined;
}

/** The page a record was captured on: the kind's page field (kinds.ts), perf's url, a navigation's target. */
export function pageUrlOf(kind: number, rec: AnyRec): string | undefined {
  const name = KINDS[kind];
  if (name === 'actions' && rec.type === 'navigate' && typeof rec.to_url === 'string') return rec.to_url;
  const field = name === 'perf' ? 'url' : name ? PAGE_FIELD[name] : undefined;
  const v = field ? rec[field] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** Whether the header alone decides (no URL pattern): then the scan skips other tabs before decoding. */
export function headerOnly(s: TabScope): boolean {
  return s.url === undefined;
}

export function inScope(s: TabScope, kind: number, tab: number, rec: AnyRec): boolean {
  if (tab >= 0 && s.tabs.includes(tab)) return true;
  if (s.url === undefined) return false;
  const page = pageUrlOf(kind, rec);
  return page !== undefined && compileTabPattern(s.url).test(page);
}

/** page URL patterns, at most this long (as noise rules) */
export const MAX_TAB_PATTERN = 200;
const compiled = new Map<string, UserPattern>();

/** A tab filter's URL pattern on the linear-time engine (user-pattern.ts); throws pattern_refused. Kept across reads. */
export function compileTabPattern(pattern: string): UserPattern {
  let re = compiled.get(pattern);
  if (!re) {
    re = compileUserPattern(pattern, 'noise', MAX_TAB_PATTERN);
    if (compiled.size >= 64) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}
