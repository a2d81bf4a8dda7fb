/** Which tab showed which page lately: how a tab filter's URL pattern becomes tab ids. */
import { KINDS, PAGE_FIELD } from '../domain/kinds.js';
import type { StoreReader } from '../shm/index.js';
import { scan } from './scan.js';
import { pageUrlOf } from './tab-scope.js';

/** records per page-naming kind looked at to learn which tab shows which page */
const RECENT = 200;
const MAX_TABS = 64;
const MAX_URLS_PER_TAB = 16;

/**
 * Which pages each tab showed lately, from the newest records of the kinds that name a page.
 * Bounded (RECENT records per kind, 64 tabs, 16 URLs each): a tab that has been quiet for longer
 * than that is not resolved by a URL pattern any more, though its records that name a matching
 * page still are.
 */
export function recentTabPages(reader: StoreReader): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (let k = 0; k < KINDS.length; k++) {
    const name = KINDS[k]!;
    if (PAGE_FIELD[name] === undefined && name !== 'perf') continue;
    const from = Math.max(reader.tailOrd(k), reader.latestOrd(k) - RECENT);
    for (const h of scan(reader, { kind: k, from, limit: RECENT, maxScan: RECENT }).hits) {
      if (h.tab < 0) continue;
      const page = pageUrlOf(k, h.rec);
      if (page === undefined) continue;
      let urls = out.get(h.tab);
      if (!urls) {
        if (out.size >= MAX_TABS) continue;
        urls = new Set();
        out.set(h.tab, urls);
      }
      if (urls.size < MAX_URLS_PER_TAB) urls.add(page);
    }
  }
  return out;
}
