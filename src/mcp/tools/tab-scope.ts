/**
 * A client's tab filter, resolved for one read: a tab id filter is used as it is; a URL pattern
 * becomes the tabs that showed a matching page lately (query/tab-pages.ts) plus the pattern
 * itself for records that name their page, and travels to the scan worker as data (TabScope).
 * Resolutions are kept a second per client: a burst of calls and alerts resolves once.
 */
import type { Alert } from '../../domain/alerts/alert.js';
import type { ClientState } from '../../clients/client-state.js';
import { compileTabPattern, recentTabPages, type TabScope } from '../../query/index.js';
import type { StoreReader } from '../../shm/index.js';
import type { McpPort } from '../port.js';

const FRESH_MS = 1000;

interface Resolved {
  at: number;
  filter: ClientState['tabFilter'];
  scope: TabScope;
  /** the pages the filtered tabs showed (for alerts, which name a page, not a tab) */
  pages: Set<string>;
}

const cache = new WeakMap<ClientState, Resolved>();

function resolve(reader: StoreReader, client: ClientState): Resolved | undefined {
  const filter = client.tabFilter;
  if (!filter) return undefined;
  const now = performance.now();
  const hit = cache.get(client);
  if (hit && hit.filter === filter && now - hit.at < FRESH_MS) return hit;
  const byTab = recentTabPages(reader);
  let r: Resolved;
  if ('tab_ids' in filter) {
    const pages = new Set<string>();
    for (const t of filter.tab_ids) for (const u of byTab.get(t) ?? []) pages.add(u);
    r = { at: now, filter, scope: { tabs: [...filter.tab_ids] }, pages };
  } else {
    const re = compileTabPattern(filter.url);
    const tabs = [...byTab].filter(([, urls]) => [...urls].some((u) => re.test(u))).map(([t]) => t);
    r = { at: now, filter, scope: { tabs, url: filter.url }, pages: new Set() };
  }
  cache.set(client, r);
  return r;
}

/** What a read of this client keeps; undefined: every tab. */
export function scopeOf(reader: StoreReader, client: ClientState): TabScope | undefined {
  return resolve(reader, client)?.scope;
}

/** The caller's tab filter for a read (ctx.reader() throws no_ingest first when there is no data). */
export function tabScope(ctx: { reader(): StoreReader; client: ClientState }): TabScope | undefined {
  return scopeOf(ctx.reader(), ctx.client);
}

/** The page an alert is about, when it names one: a log's or load's URL, a request's page. */
function alertPage(a: Alert): string | undefined {
  const page = a.context?.page_url;
  if (typeof page === 'string') return page;
  return a.source === 'error_detector' || a.source === 'performance_monitor' ? a.url : undefined;
}

/**
 * An alert that names no page (thresholds, CI, spikes, WebSocket closes) concerns every tab and
 * is kept; one that does is kept when that page matches the URL pattern or was shown lately by
 * one of the filtered tabs.
 */
export function alertInScope(port: McpPort, client: ClientState, a: Alert): boolean {
  const filter = client.tabFilter;
  if (!filter) return true;
  const page = alertPage(a);
  if (page === undefined) return true;
  if ('url' in filter) return compileTabPattern(filter.url).test(page);
  let reader: StoreReader;
  try {
    reader = port.reader();
  } catch {
    return true;
  }
  return resolve(reader, client)?.pages.has(page) ?? true;
}
