/**
 * The page side of the page → content-script relay. Records are queued and posted in small
 * groups over a private MessageChannel, so the page sees one handshake message per load and
 * never our traffic. Until the content script tells us whether this tab is tracked, records are
 * buffered (bounded); an untracked tab drops them and every hook goes quiet.
 */
import { aboutServer } from './server-url.js';
import { HANDSHAKE_MARK, type CaptureConfig, type PageCapture, type RecordKind, type WireRecord } from '../shared/protocol.js';

export const cfg: CaptureConfig = {
  t: 'config',
  // Capture from document_start; the decision arrives a few ms later and may discard it.
  on: true,
  ws: true,
  bodies: false,
  server_port: 7890,
  body_budget_ms: 5,
  perf_delay_ms: 2000,
};

let decided = false;
let port: MessagePort | null = null;
let queue: Array<[RecordKind, WireRecord]> = [];
let timer: ReturnType<typeof setTimeout> | undefined;

/** Before the decision only this many records are held: a page spamming the console must not grow us. */
const MAX_UNDECIDED = 1000;
const MAX_QUEUE = 5000;
const FLUSH_MS = 25;

/** false until the content script said whether (and what) to capture */
export function decidedYet(): boolean {
  return decided;
}

let deferred: Array<() => void> = [];
/** Runs `fn` once the settings are known (at once if they are); bounded while undecided. */
export function whenDecided(fn: () => void): void {
  if (decided) fn();
  else if (deferred.length < 200) deferred.push(fn);
}

export function emit(kind: RecordKind, rec: WireRecord): void {
  if (!cfg.on) return;
  // A request begun before the settings arrived was judged against the default port.
  if (kind !== 'ws_events' && aboutServer(kind, rec, cfg.server_port)) return;
  // Full: the record is lost here, in the page; nothing reads a page-side count today.
  if (queue.length >= (decided ? MAX_QUEUE : MAX_UNDECIDED)) return;
  queue.push([kind, rec]);
  if (port && timer === undefined) timer = setTimeout(flush, FLUSH_MS);
}

export function flush(): void {
  clearTimeout(timer);
  timer = undefined;
  if (!port || !decided || queue.length === 0) return;
  const msg: PageCapture = { t: 'records', page_url: location.href, items: queue };
  queue = [];
  try {
    port.postMessage(msg);
  } catch {
    // an uncloneable value slipped through serialization: lose this group, never throw into the page
  }
}

function onPortMessage(e: MessageEvent): void {
  const m = e.data as CaptureConfig | null;
  if (m?.t !== 'config') return;
  Object.assign(cfg, m);
  decided = true;
  if (!cfg.on) queue = [];
  else queue = queue.filter(([kind, rec]) => !aboutServer(kind, rec, cfg.server_port));
  const waiting = deferred;
  deferred = [];
  for (const fn of waiting) {
    try {
      fn();
    } catch {
      // a listener bug must not stop the others
    }
  }
  flush();
}

/** Opens (or, after an extension reload, re-opens) the private channel to the content script. */
export function handshake(): void {
  const ch = new MessageChannel();
  if (port) port.close();
  port = ch.port1;
  port.onmessage = onPortMessage;
  window.postMessage({ [HANDSHAKE_MARK]: true }, '*', [ch.port2]);
}

addEventListener('pagehide', flush, { capture: true });
