/** Failed requests per endpoint ("GET /api/users/<n> → 500"), read in slices over a range. */
import { kindId } from '../domain/kinds.js';
import { pathTemplate } from '../domain/signals/signature.js';
import type { StoreReader } from '../shm/index.js';
import { isFailing, prefilter } from './filter.js';
import type { Hit } from './scan.js';
import { ScanBudget, scanSliced } from './sliced-scan.js';
import type { TabScope } from './tab-scope.js';

/** Counts per endpoint of the failed requests in [from, to); the main thread keeps emitting pushes meanwhile. */
export async function failingEndpoints(reader: StoreReader, from: number, to: number, maxScan: number, wallMs: number, scope?: TabScope): Promise<Map<string, number>> {
  const m = new Map<string, number>();
  const sink = (h: Hit): boolean => {
    const key = `${h.rec.method} ${pathTemplate(h.rec.url ?? '')} → ${h.rec.status}`;
    m.set(key, (m.get(key) ?? 0) + 1);
    return true;
  };
  // summary's filter for failed requests: the byte pre-filter skips the JSON.parse of the rest
  await scanSliced(reader, { kind: kindId('network'), from, to, limit: 0, maxScan, ...prefilter({ what: 'failing' }), match: isFailing, scope, sink }, new ScanBudget(wallMs));
  return m;
}
