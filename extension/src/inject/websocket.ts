/**
 * The page's WebSockets → ws_events. The constructor is replaced by a subclass (instanceof,
 * constants and prototype stay the page's), and `send` is wrapped on the original prototype, which
 * is also how sockets created before the hook was installed get adopted: the first time one sends.
 */
import { cfg, decidedYet, emit, whenDecided } from './channel.js';
import { isOwnServer } from './network.js';
import { absoluteUrl, guard, now } from './util.js';
import type { Json } from '../shared/protocol.js';

/** open connections followed at once; past it the oldest is let go, and a record says so (#20 item 6) */
const MAX_TRACKED = 20;
const MAX_DATA = 4 * 1024;

interface Tracked {
  id: string;
  url: string;
  /** let go for a newer connection: its events are no longer recorded */
  evicted: boolean;
}

const tracked = new WeakMap<WebSocket, Tracked | null>();
/** the connections followed now, oldest first (a Set keeps insertion order) */
const live = new Set<Tracked>();
let nextId = 1;

/** The oldest followed connection makes room for a new one; its last record says it is no longer followed. */
function evictOldest(): void {
  const oldest = live.values().next().value;
  if (!oldest) return;
  live.delete(oldest);
  oldest.evicted = true;
  if (cfg.on && cfg.ws) emit('ws_events', { ts: now(), id: oldest.id, url: oldest.url, event: 'untracked', reason: `more than ${MAX_TRACKED} open connections: only the newest ${MAX_TRACKED} are followed` });
}

function describe(data: unknown): { data: string; size: number; truncated?: boolean } {
  if (typeof data === 'string') {
    return data.length > MAX_DATA ? { data: data.slice(0, MAX_DATA), size: data.length, truncated: true } : { data, size: data.length };
  }
  const size = data instanceof Blob ? data.size : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? data.byteLength : 0;
  return { data: `[Binary: ${size} bytes]`, size };
}

function track(ws: WebSocket, url: string): Tracked | null {
  const known = tracked.get(ws);
  if (known !== undefined) return known;
  const abs = absoluteUrl(url);
  // our own server's socket is never followed; null = seen, not tracked
  if (isOwnServer(abs)) {
    tracked.set(ws, null);
    return null;
  }
  // The cap bounds our records on pages that churn sockets: the newest are what is being debugged
  if (live.size >= MAX_TRACKED) evictOldest();
  const t: Tracked = { id: `ws-${nextId++}-${Math.random().toString(36).slice(2, 8)}`, url: abs, evicted: false };
  tracked.set(ws, t);
  live.add(t);
  // Opened before the settings arrived, it was judged against the default port: judge it again
  // (what it recorded meanwhile is filtered from the held queue by the channel).
  if (!decidedYet()) {
    whenDecided(() => {
      if (!isOwnServer(abs)) return;
      live.delete(t);
      t.evicted = true;
    });
  }
  const rec = (extra: Record<string, Json>): void => {
    if (cfg.on && cfg.ws && !t.evicted) emit('ws_events', { ts: now(), id: t.id, url: t.url, ...extra });
  };
  ws.addEventListener('open', () => guard(() => rec({ event: 'open' })));
  ws.addEventListener('message', (e) => guard(() => rec({ event: 'message', direction: 'incoming', ...describe((e as MessageEvent).data) })));
  ws.addEventListener('error', () => guard(() => rec({ event: 'error' })));
  ws.addEventListener('close', (e) =>
    guard(() => {
      live.delete(t);
      rec({ event: 'close', code: e.code, reason: e.reason.slice(0, 256) });
    }),
  );
  // An adopted socket is already open: say so, so the connection has a start.
  if (ws.readyState === WebSocket.OPEN) rec({ event: 'open', adopted: true });
  return t;
}

export function installWebSocket(): void {
  const Original = window.WebSocket;
  if (typeof Original !== 'function') return;
  const proto = Original.prototype;
  const send = proto.send;
  proto.send = function (this: WebSocket, data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
    if (cfg.on && cfg.ws) {
      guard(() => {
        const t = track(this, this.url);
        if (t && !t.evicted) emit('ws_events', { ts: now(), id: t.id, url: t.url, event: 'message', direction: 'outgoing', ...describe(data) });
      });
    }
    return send.call(this, data);
  };

  const Wrapped = class WebSocket extends Original {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      if (cfg.on && cfg.ws) guard(() => track(this, this.url));
    }
  };
  Object.defineProperty(window, 'WebSocket', { value: Wrapped, writable: true, configurable: true, enumerable: false });
}
