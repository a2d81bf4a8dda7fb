/**
 * Pre-encoded PROTOCOL v1 frames for the load producers. The producer must never be the
 * bottleneck, so every batch frame is encoded once and only its `seq` and `sent_at` are patched in
 * place before each send. msgpackr's record extension, as the extension packs its batches (the
 * worker stores such records as their own bytes, with their structures' definitions spliced in):
 *
 *   d4 72 .. [record def: t, seq, sent_at, tab_id, page_url, logs, network, ws_events, actions]
 *   a5 "batch"  ce <seq: u32 BE>  cb <sent_at: f64 BE>  ...records...
 *               ^ seqOffset       ^ sentAtOffset
 *
 * Seqs start at 1_000_000 so they always fit the fixed-width uint32 form (0xce) msgpackr picks
 * for values in [65536, 2^32); every frame has the same top-level keys, so the offsets are the
 * same in every frame of the pool (asserted) and the ceiling server can read the seq without
 * decoding.
 */
import { Packr } from 'msgpackr';

export const FIRST_SEQ = 1_000_000;
export const RECORDS_PER_BATCH = 100;
export const POOL_FRAMES = 64;

const SEQ_MARK = 0xcafef00d;
/** an exactly representable placeholder whose 8 bytes are unlikely to occur elsewhere */
const SENT_AT_MARK = 1_234_567_890_123.25;

/** mulberry32: small, fast, seeded; every run generates the same bytes */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'request failed timeout user session cache render component mounted update fetch token ' +
  'widget checkout cart payment retry socket handler invalid undefined property reading null ' +
  'promise rejected layout shift image loaded script module chunk hydrate route params'
).split(' ');
const HOSTS = ['api.example.test', 'cdn.example.test', 'auth.example.test', 'static.example.test'];
const PATHS = ['/v1/users', '/v1/orders', '/v2/search', '/assets/app', '/graphql', '/v1/cart/items', '/telemetry'];
const LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;

function pick<T>(r: () => number, a: readonly T[]): T {
  return a[Math.floor(r() * a.length)]!;
}

function words(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(r, WORDS));
  return out.join(' ');
}

function url(r: () => number): string {
  return `https://${pick(r, HOSTS)}${pick(r, PATHS)}/${Math.floor(r() * 1e6).toString(36)}?page=${Math.floor(r() * 50)}`;
}

type Rec = Record<string, unknown>;

/** Record shapes of PROTOCOL §2, each around 300 bytes as JSON. */
export function logRecord(r: () => number, ts: number): Rec {
  const level = pick(r, LEVELS);
  const rec: Rec = {
    ts,
    level,
    type: 'console',
    message: `[${pick(r, ['App', 'Store', 'Router', 'Api'])}] ${words(r, 10 + Math.floor(r() * 8))}`,
    args: [words(r, 3), Math.floor(r() * 10_000), { id: Math.floor(r() * 1e6), ok: r() < 0.8 }],
    url: 'https://app.example.test/dashboard',
    source: `https://app.example.test/assets/index-${Math.floor(r() * 1e6).toString(16)}.js:${Math.floor(r() * 9000)}`,
  };
  if (level === 'error') rec.stack = `Error: ${words(r, 4)}\n    at ${pick(r, WORDS)} (index.js:${Math.floor(r() * 900)}:${Math.floor(r() * 80)})`;
  return rec;
}

function networkRecord(r: () => number, ts: number, forceStatus?: number): Rec {
  const status = forceStatus ?? (r() < 0.9 ? 200 : pick(r, [201, 304, 404, 500, 502]));
  const size = Math.floor(r() * 50_000);
  return {
    ts,
    method: r() < 0.7 ? 'GET' : 'POST',
    url: url(r),
    status,
    duration: Math.round(r() * 80_000) / 100,
    initiator_type: pick(r, ['fetch', 'xmlhttprequest', 'script', 'img']),
    transfer_size: size + 300,
    encoded_body_size: size,
    decoded_body_size: size * 3,
    page_url: 'https://app.example.test/dashboard',
  };
}

function wsEventRecord(r: () => number, ts: number): Rec {
  const data = JSON.stringify({ type: pick(r, ['tick', 'update', 'presence']), payload: words(r, 8), n: Math.floor(r() * 1e6) });
  return { ts, event: 'message', id: `ws-${Math.floor(r() * 8)}`, url: 'wss://rt.example.test/socket', direction: r() < 0.5 ? 'incoming' : 'outgoing', data, size: data.length };
}

function actionRecord(r: () => number, ts: number): Rec {
  return {
    ts,
    type: pick(r, ['click', 'input', 'navigate', 'scroll']),
    url: 'https://app.example.test/dashboard',
    selectors: {
      test_id: `btn-${pick(r, WORDS)}`,
      role: 'button',
      text: words(r, 3),
      css_path: `main > div.panel:nth-child(${Math.floor(r() * 9)}) > button.${pick(r, WORDS)}`,
    },
  };
}

const PINNED = [0.01, 0.6, 0.9, 0.95];

export interface BatchMix {
  logs: Rec[];
  network: Rec[];
  ws_events: Rec[];
  actions: Rec[];
}

/** 100 records: ~50 % logs, ~35 % network, ~8 % ws_events, ~7 % actions; every kind present. */
export function batchRecords(r: () => number, n = RECORDS_PER_BATCH): BatchMix {
  const mix: BatchMix = { logs: [], network: [], ws_events: [], actions: [] };
  const ts0 = 1_732_280_000_000 + Math.floor(r() * 1e6);
  for (let i = 0; i < n; i++) {
    const ts = ts0 + i * 3;
    // the first four slots pin one record of each kind, so the top-level keys never vary
    const x = i < PINNED.length ? PINNED[i]! : r();
    if (x < 0.5) mix.logs.push(logRecord(r, ts));
    else if (x < 0.85) mix.network.push(networkRecord(r, ts));
    else if (x < 0.93) mix.ws_events.push(wsEventRecord(r, ts));
    else mix.actions.push(actionRecord(r, ts));
  }
  return mix;
}

/**
 * What a batch holds. `mixed` is the default above; `heavy` is a busy SPA (1 network record per 3
 * console lines, issue 7's heavy profile); `errors5xx` is an outage: every record a 5xx response.
 */
export type Mix = 'mixed' | 'heavy' | 'errors5xx';

function heavyRecords(r: () => number, n = RECORDS_PER_BATCH): BatchMix {
  const mix: BatchMix = { logs: [], network: [], ws_events: [], actions: [] };
  const ts0 = 1_732_280_000_000 + Math.floor(r() * 1e6);
  for (let i = 0; i < n; i++) {
    // every 4th record a request, the rest console noise; slot 0 pins a log, slot 3 a request
    if (i % 4 === 3) mix.network.push(networkRecord(r, ts0 + i));
    else mix.logs.push(logRecord(r, ts0 + i));
  }
  return mix;
}

function errorRecords(r: () => number, n = RECORDS_PER_BATCH): BatchMix {
  const mix: BatchMix = { logs: [], network: [], ws_events: [], actions: [] };
  const ts0 = 1_732_280_000_000 + Math.floor(r() * 1e6);
  for (let i = 0; i < n; i++) mix.network.push(networkRecord(r, ts0 + i, pick(r, [500, 502, 503, 504])));
  return mix;
}

function recordsFor(mix: Mix, r: () => number): Partial<BatchMix> {
  const m = mix === 'heavy' ? heavyRecords(r) : mix === 'errors5xx' ? errorRecords(r) : batchRecords(r);
  // empty arrays are left out, so a mix's frames all share one key set (fixed patch offsets)
  return Object.fromEntries(Object.entries(m).filter(([, v]) => (v as Rec[]).length > 0)) as Partial<BatchMix>;
}

export interface FramePool {
  /** each frame is a private copy; patch with `stamp` before sending */
  frames: Buffer[];
  seqOffset: number;
  sentAtOffset: number;
  recordsPerFrame: number;
  /** mean bytes per frame and per record (msgpack) and per record as JSON, for reporting */
  frameBytes: number;
  recordJsonBytes: number;
}

function findUnique(buf: Uint8Array, needle: Uint8Array): number {
  let at = -1;
  outer: for (let i = 0; i + needle.length <= buf.length; i++) {
    for (let j = 0; j < needle.length; j++) if (buf[i + j] !== needle[j]) continue outer;
    if (at !== -1) throw new Error('frame marker occurs twice; change SEQ_MARK/SENT_AT_MARK');
    at = i;
  }
  if (at === -1) throw new Error('frame marker not found: msgpackr did not emit the fixed-width form');
  return at;
}

export function buildFramePool(seed = 42, count = POOL_FRAMES, mixKind: Mix = 'mixed'): FramePool {
  const r = prng(seed);
  const packr = new Packr({ useRecords: true });
  const seqNeedle = Buffer.alloc(5);
  seqNeedle[0] = 0xce;
  seqNeedle.writeUInt32BE(SEQ_MARK, 1);
  const sentNeedle = Buffer.alloc(9);
  sentNeedle[0] = 0xcb;
  sentNeedle.writeDoubleBE(SENT_AT_MARK, 1);
  const frames: Buffer[] = [];
  let seqOffset = -1;
  let sentAtOffset = -1;
  let jsonBytes = 0;
  for (let i = 0; i < count; i++) {
    const mix = recordsFor(mixKind, r);
    jsonBytes += JSON.stringify(Object.values(mix).flat()).length;
    const frame = Buffer.from(
      packr.pack({ t: 'batch', seq: SEQ_MARK, sent_at: SENT_AT_MARK, tab_id: 7, page_url: 'https://app.example.test/dashboard', ...mix }),
    );
    const so = findUnique(frame, seqNeedle) + 1;
    const sa = findUnique(frame, sentNeedle) + 1;
    if (seqOffset === -1) [seqOffset, sentAtOffset] = [so, sa];
    if (so !== seqOffset || sa !== sentAtOffset) throw new Error(`frame ${i}: seq/sent_at offsets differ (${so}/${sa} vs ${seqOffset}/${sentAtOffset})`);
    frames.push(frame);
  }
  const total = frames.reduce((s, f) => s + f.length, 0);
  return {
    frames,
    seqOffset,
    sentAtOffset,
    recordsPerFrame: RECORDS_PER_BATCH,
    frameBytes: Math.round(total / count),
    recordJsonBytes: Math.round(jsonBytes / count / RECORDS_PER_BATCH),
  };
}

/** Writes seq (u32 BE) and sent_at (f64 BE) in place; returns the frame. */
export function stamp(pool: FramePool, seq: number, sentAt: number): Buffer {
  const f = pool.frames[seq % pool.frames.length]!;
  f.writeUInt32BE(seq >>> 0, pool.seqOffset);
  f.writeDoubleBE(sentAt, pool.sentAtOffset);
  return f;
}

export function helloFrame(session: string, version: string): Buffer {
  return Buffer.from(new Packr({ useRecords: true }).pack({ t: 'hello', v: 1, client: 'bench', version, session }));
}
