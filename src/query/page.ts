/** The page the browser last reported: the newest URL among the last records of the kinds that name one. */
import { kindId, type Kind } from '../domain/kinds.js';
import type { StoreReader } from '../shm/index.js';
import { scan } from './scan.js';
import type { TabScope } from './tab-scope.js';

export interface LastPage {
  /** receive time of the record that named it */
  t: number;
  url: string;
  tab: number;
}

export function lastPage(reader: StoreReader, scope?: TabScope): LastPage | undefined {
  let best: LastPage | undefined;
  for (const kind of ['actions', 'perf', 'logs', 'network'] as Kind[]) {
    const k = kindId(kind);
    const from = Math.max(reader.tailOrd(k), reader.latestOrd(k) - 20);
    for (const h of scan(reader, { kind: k, from, limit: 20, maxScan: 20, scope }).hits) {
      const url = (kind === 'actions' && h.rec.type === 'navigate' ? h.rec.to_url : undefined) ?? h.rec.page_url ?? (kind === 'network' ? undefined : h.rec.url);
      if (typeof url === 'string' && (!best || h.recvTime >= best.t)) best = { t: h.recvTime, url, tab: h.tab };
    }
  }
  return best;
}
