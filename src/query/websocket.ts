/**
 * WebSocket connections folded from their events: one entry per connection id, bounded, read in
 * slices because a busy socket buffers 20 000 frames and the main thread keeps emitting pushes.
 */
import { kindId } from '../domain/kinds.js';
import type { StoreReader } from '../shm/index.js';
import { scan, type Hit } from './scan.js';
import { ScanBudget, scanSliced } from './sliced-scan.js';
import type { TabScope } from './tab-scope.js';
import { needle } from './needles.js';

export interface WsConnection {
  id: string;
  url: string;
  /** untracked: the extension stopped following it for a newer connection (#20 item 6) */
  state: 'open' | 'closed' | 'error' | 'untracked';
  in: number;
  out: number;
  first: number;
  last: number;
  /** the newest message: direction and its data (up to 120 characters) */
  lastMsg: { outgoing: boolean; data: string } | undefined;
  code?: unknown;
}

/** Connections tracked per call: more than an answer can show, few enough to bound the map. */
export const MAX_CONNS = 1000;

/** Every connection in the buffer (the whole buffer, unlike a list: a status has no cursor to continue from). */
export async function wsConnections(reader: StoreReader, maxScan: number, tab?: number, scope?: TabScope): Promise<Map<string, WsConnection>> {
  const k = kindId('ws_events');
  const conns = new Map<string, WsConnection>();
  const add = (h: Hit): boolean => {
    const e = h.rec;
    const id = String(e.id);
    let c = conns.get(id);
    if (!c) {
      if (conns.size >= MAX_CONNS) return true;
      conns.set(id, (c = { id, url: String(e.url ?? ''), state: 'open', in: 0, out: 0, first: h.clientTime, last: h.clientTime, lastMsg: undefined }));
    }
    if (e.url) c.url = String(e.url);
    c.last = h.clientTime;
    if (e.event === 'close') {
      c.state = 'closed';
      c.code = e.code;
    } else if (e.event === 'error') c.state = 'error';
    else if (e.event === 'untracked') c.state = 'untracked';
    else if (e.event === 'open') c.state = 'open';
    else if (e.event === 'message') {
      if (e.direction === 'outgoing') c.out++;
      else c.in++;
      c.lastMsg = { outgoing: e.direction === 'outgoing', data: String(e.data ?? '').slice(0, 120) };
    }
    return true;
  };
  await scanSliced(reader, { kind: k, from: reader.tailOrd(k), limit: 0, maxScan, tab, scope, sink: add }, new ScanBudget(1000));
  return conns;
}

/** A close that is not 1000 (normal) or 1001 (going away). */
export const abnormalClose = (code: unknown): boolean => code !== 1000 && code !== 1001;

export interface WsTrouble {
  id: string;
  url: string;
  /** up to five events: 'error', 'close(<code>)' with ' normal' for a normal close */
  what: string[];
  bad: boolean;
  last: number;
}

const TROUBLE_BYTES = [needle('"event":"error"', 'error'), needle('"event":"close"', 'close')];

/** Errors and closes since `from`, per connection (at most 200): summary's section. */
export async function wsTroubleSince(reader: StoreReader, work: ScanBudget, from: number, maxScan: number, scope?: TabScope): Promise<{ conns: Map<string, WsTrouble>; next: number; partial: boolean }> {
  const k = kindId('ws_events');
  const conns = new Map<string, WsTrouble>();
  const r = await scanSliced(reader, {
    kind: k,
    from,
    limit: 0,
    maxScan,
    anyOf: TROUBLE_BYTES,
    scope,
    match: (e) => e.event === 'error' || e.event === 'close',
    sink: (h: Hit) => {
      const id = h.rec.id ?? '';
      let c = conns.get(id);
      if (!c) {
        if (conns.size >= 200) return false;
        conns.set(id, (c = { id, url: '', what: [], bad: false, last: 0 }));
      }
      if (typeof h.rec.url === 'string') c.url = h.rec.url;
      c.last = h.clientTime;
      const bad = h.rec.event === 'error' || abnormalClose(h.rec.code);
      c.bad ||= bad;
      if (c.what.length < 5) c.what.push(h.rec.event === 'error' ? 'error' : `close(${h.rec.code ?? ''})${bad ? '' : ' normal'}`);
      return true;
    },
  }, work);
  return { conns, next: r.next, partial: !r.atEnd || r.stopped === true };
}

/** Socket errors and abnormal closes from ordinal `from` on (a checkpoint's), up to `limit`. */
export function wsErrorsSince(reader: StoreReader, from: number, limit: number, maxScan: number, scope?: TabScope): Hit[] {
  const k = kindId('ws_events');
  return scan(reader, { kind: k, from: Math.max(from, reader.tailOrd(k)), limit, maxScan, scope, match: (r) => r.event === 'error' || (r.event === 'close' && abnormalClose(r.code)) }).hits;
}
