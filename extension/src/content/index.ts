/**
 * ISOLATED-world relay: page hook ⇄ service worker. Receives the page's private MessagePort,
 * tells the page whether this tab is tracked (the worker decides), and forwards records to the
 * worker in small groups. The worker may be asleep or restarting, so sends are retried and the
 * buffer is bounded.
 */
import { HANDSHAKE_MARK, type CaptureConfig, type CaptureReply, type PageCapture, type RecordsByKind, type ToWorker } from '../shared/protocol.js';

const FLUSH_MS = 50;
const MAX_BUFFERED = 5000;
const RETRY_MS = [100, 250, 500, 1000, 2000];

let port: MessagePort | null = null;
let config: CaptureConfig | null = null;
let buffered: RecordsByKind = {};
let bufferedCount = 0;
let bufferedUrl = location.href;
let timer: ReturnType<typeof setTimeout> | undefined;
let sending = false;
let chunkNo = 0;
// Lets the worker recognise a chunk it already took when our retry crosses its reply.
const frameNonce = Math.random().toString(36).slice(2, 10);

function send(msg: ToWorker): Promise<unknown> {
  return chrome.runtime.sendMessage(msg);
}

function applyConfig(c: CaptureConfig): void {
  config = c;
  if (!c.on) {
    buffered = {};
    bufferedCount = 0;
  }
  port?.postMessage(c);
}

async function hello(): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      const c = (await send({ t: 'page_hello', url: location.href })) as CaptureConfig | undefined;
      if (c && c.t === 'config') applyConfig(c);
      return;
    } catch {
      if (!isAlive()) return;
      await sleep(RETRY_MS[Math.min(i, RETRY_MS.length - 1)]!);
    }
  }
}

function onPageMessage(e: MessageEvent): void {
  const m = e.data as PageCapture | null;
  if (m?.t !== 'records' || !Array.isArray(m.items)) return;
  if (config && !config.on) return;
  if (m.page_url !== bufferedUrl && bufferedCount > 0) void flush();
  bufferedUrl = m.page_url;
  for (const [kind, rec] of m.items) {
    if (bufferedCount >= MAX_BUFFERED) break;
    (buffered[kind] ??= []).push(rec);
    bufferedCount++;
  }
  timer ??= setTimeout(() => void flush(), FLUSH_MS);
}

async function flush(): Promise<void> {
  clearTimeout(timer);
  timer = undefined;
  if (sending || bufferedCount === 0) return;
  sending = true;
  const msg: ToWorker = { t: 'capture', id: `${frameNonce}:${chunkNo++}`, page_url: bufferedUrl, records: buffered };
  buffered = {};
  bufferedCount = 0;
  try {
    for (let i = 0; ; i++) {
      try {
        const r = (await send(msg)) as CaptureReply | undefined;
        if (r && !r.tracked && config?.on) void hello();
        break;
      } catch {
        // The worker is restarting (or the extension was reloaded, then we are orphaned for good).
        if (!isAlive() || i >= 20) break;
        await sleep(RETRY_MS[Math.min(i, RETRY_MS.length - 1)]!);
      }
    }
  } finally {
    sending = false;
    if (bufferedCount > 0) timer ??= setTimeout(() => void flush(), FLUSH_MS);
  }
}

function isAlive(): boolean {
  // chrome.runtime.id disappears when the extension that injected us is reloaded or removed.
  try {
    return Boolean(chrome.runtime?.id);
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// One relay per frame: a second copy (programmatic injection on install) stands down unless the
// first belongs to an extension instance that was reloaded away.
const SELF = Symbol.for('gasoline.content.v1');
const holder = globalThis as unknown as Record<symbol, { alive: () => boolean } | undefined>;
const previous = holder[SELF];
if (!previous?.alive()) {
  holder[SELF] = { alive: isAlive };
  start();
}

function start(): void {
  addEventListener('message', (e) => {
    if (e.source !== window || !e.data || (e.data as Record<string, unknown>)[HANDSHAKE_MARK] !== true) return;
    const p = e.ports[0];
    if (!p) return;
    port?.close();
    port = p;
    port.onmessage = onPageMessage;
    if (config) port.postMessage(config);
  });

  chrome.runtime.onMessage.addListener((msg: unknown) => {
    const m = msg as CaptureConfig | null;
    if (m && m.t === 'config') applyConfig(m);
    return false;
  });

  addEventListener('pagehide', () => void flush(), { capture: true });

  void hello();
}
