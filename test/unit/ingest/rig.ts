/**
 * The ingest core in-process, on the parts a worker builds (workers/ingest.ts) over real shared
 * memory: the store and its writer, item slots, the detector's shared state, the alert ring and the
 * input arena. Only the clock is the test's. A "worker" is one IngestCore over those buffers, so a
 * replacement worker after a crash is simply another one over the same buffers.
 */
import { pack } from 'msgpackr';
import { Detector } from '../../../src/domain/alerts/detect.js';
import type { AlertEnvelope } from '../../../src/domain/alerts/alert.js';
import { IngestCore, type IngestFaults } from '../../../src/domain/ingest/core.js';
import { sessionId, type HttpItem, type SessionId, type WsItem } from '../../../src/domain/ingest/item.js';
import { WorkerRedaction } from '../../../src/domain/ingest/worker-redaction.js';
import { KINDS, kindId, type HttpRoute, type Kind } from '../../../src/domain/kinds.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { allocateSlots, SlotAllocator, SlotView } from '../../../src/pool/item-slots.js';
import { allocateAlertRing, AlertRingReader, AlertRingWriter } from '../../../src/shm/alert-ring.js';
import { allocateDetectState, DetectState } from '../../../src/shm/detect-state.js';
import { allocateStore, StoreReader, StoreWriter, type KindCounters, type StoreWriterOptions } from '../../../src/shm/index.js';
import { readStoredRecord } from '../../../src/domain/wire/stored-record.js';

export interface RigOptions {
  /** ring bytes per kind; 64 KiB unless named (a tiny ring makes records too large for it) */
  ringBytes?: Partial<Record<Kind, number>>;
  maxEventsPerBatch?: number;
  maxErrorsPerAck?: number;
}

export interface WorkerOptions {
  faults?: IngestFaults;
  writer?: StoreWriterOptions;
}

export const T0 = 1_700_000_000_000;

export const S1 = sessionId('tab-session-1');
export const S2 = sessionId('tab-session-2');

/** A console log record as the extension sends it. */
export const log = (message: string, level = 'log') => ({ ts: T0, level, type: 'console', message });
/** An uncaught exception: the detector raises a "new error" alert for its first sighting. */
export const exception = (message: string) => ({ ts: T0, level: 'error', type: 'exception', message, stack: `Error: ${message}\n    at f (https://app.test/main.js:10:5)`, url: 'https://app.test/' });

export type Rig = ReturnType<typeof rig>;

export function rig(o: RigOptions = {}) {
  const store = allocateStore(KINDS.map((k) => o.ringBytes?.[k] ?? 64 * 1024));
  const slotsBuf = allocateSlots(64);
  const slotAlloc = new SlotAllocator(new SlotView(slotsBuf));
  const detectBuf = allocateDetectState();
  const alertBuf = allocateAlertRing(64, 8192);
  const arena = new Uint8Array(new SharedArrayBuffer(1 << 20));
  const reader = new StoreReader(store);
  const alertReader = new AlertRingReader(alertBuf);
  const limits = { maxDepth: 32, maxElements: 500_000, events: { max_events_per_batch: o.maxEventsPerBatch ?? 1000, max_errors_per_ack: o.maxErrorsPerAck ?? 20 } };
  let arenaPos = 0;
  let now = T0;
  // a worker's store-lock holder id is its threadId: each replacement gets a new one
  let nextHolder = 1;

  function worker(w: WorkerOptions = {}): IngestCore {
    return new IngestCore({
      input: arena,
      slots: new SlotView(slotsBuf),
      writer: new StoreWriter(store, nextHolder++, w.writer),
      detector: new Detector(new DetectState(detectBuf), () => now),
      alerts: new AlertRingWriter(alertBuf),
      redaction: new WorkerRedaction(compileRedaction, { rules: [], allowlist: [] }),
      clock: () => now,
      limits,
      ...(w.faults ? { faults: w.faults } : {}),
    });
  }

  function place(bytes: Uint8Array): { off: number; len: number } {
    if (arenaPos + bytes.length > arena.length) throw new RangeError('test arena full');
    arena.set(bytes, arenaPos);
    const at = { off: arenaPos, len: bytes.length };
    arenaPos += bytes.length;
    return at;
  }

  function slot(): number {
    const s = slotAlloc.alloc();
    if (s === undefined) throw new RangeError('test slots exhausted');
    return s;
  }

  /** Any client frame (msgpack) from a connection whose hello named `session` (null: no hello yet). */
  function frame(f: Record<string, unknown>, session: SessionId | null, applied = -1, shed = false): WsItem {
    return { src: 'ws', ...place(pack(f)), slot: slot(), shed, session, applied, edgeAt: now };
  }

  /** A batch of `session`, main having applied up to `applied` when it was queued. */
  function batch(seq: number, session: SessionId | null, applied: number, arrays: Record<string, unknown> = { logs: [log(`batch ${seq}`)] }, shed = false): WsItem {
    return frame({ t: 'batch', seq, sent_at: now, tab_id: 7, page_url: 'https://app.test/', ...arrays }, session, applied, shed);
  }

  /** An HTTP body for `route`; a string is sent as it is (bad JSON included). */
  function http(route: HttpRoute, body: unknown, shed = false): HttpItem {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return { src: 'http', route, ...place(Buffer.from(text, 'utf8')), slot: slot(), shed, edgeAt: now };
  }

  /** What the store holds for `kind`, parsed back. */
  function stored(kind: Kind = 'logs'): Array<Record<string, unknown>> {
    return reader.read(kindId(kind), 0, 10_000).records.map((r) => readStoredRecord(r.payload) as Record<string, unknown>);
  }

  function counters(kind: Kind = 'logs'): KindCounters {
    return reader.counters()[kindId(kind)]!;
  }

  function alerts(): AlertEnvelope[] {
    return alertReader.read().records as AlertEnvelope[];
  }

  return {
    worker,
    frame,
    batch,
    http,
    stored,
    counters,
    alerts,
    reader,
    slots: new SlotView(slotsBuf),
    advance: (ms: number) => (now += ms),
  };
}
