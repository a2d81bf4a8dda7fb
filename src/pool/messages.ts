/**
 * The protocol between the main thread and the ingest workers: task and result shapes,
 * and nothing else. Both sides import this module.
 *
 * Bulk bytes never travel in these messages: the edge copies each frame once into the shared
 * input arena, and a task names (offset, length) slices of it. Control travels here.
 */
import type { AlertRingBuffers } from '../shm/alert-ring.js';
import type { DetectStateBuffers } from '../shm/detect-state.js';
import type { ErrorCode } from '../errors.js';
import type { StoreBuffers } from '../shm/index.js';

export type HttpRoute =
  | '/logs'
  | '/network'
  | '/network-bodies'
  | '/websocket-events'
  | '/enhanced-actions'
  | '/performance-snapshots';

export const HTTP_ROUTES: readonly HttpRoute[] = [
  '/logs',
  '/network',
  '/network-bodies',
  '/websocket-events',
  '/enhanced-actions',
  '/performance-snapshots',
];

interface ItemBase {
  /** byte offset of the frame/body in the input arena */
  off: number;
  len: number;
  /** index into the item-status slots; lets a retried task skip what a crashed attempt committed */
  slot: number;
  /** admission control said no: decode only enough to answer nack/503, store nothing */
  shed: boolean;
  /** when the frame or body reached the edge: epoch ms, sub-ms precision (alert latency) */
  edgeAt?: number;
}

export interface WsItem extends ItemBase {
  src: 'ws';
  /** null until this connection's hello was processed */
  session: string | null;
  /** last seq applied for the session; -1 when the session has no baseline yet */
  applied: number;
  /** the express board entry this frame is also posted on (see express.ts) */
  express?: number;
}

export interface HttpItem extends ItemBase {
  src: 'http';
  route: HttpRoute;
}

export type TaskItem = WsItem | HttpItem;

export interface IngestTask {
  kind: 'ingest';
  items: TaskItem[];
  /** rule-set version in force; with it, the rules (only once they differ from the start-up set) */
  redaction?: { version: number; rules: Array<{ name: string; pattern: string; replacement?: string | undefined }>; allowlist: string[] };
  /** server receive time of the oldest item, epoch ms */
  recvTime: number;
}

export interface WarmupTask {
  kind: 'warmup';
  batches: number;
}

export type WorkerTask = IngestTask | WarmupTask;

export interface RecordError {
  index: number;
  kind: string;
  code: string;
  message: string;
}

export type ItemResult =
  | { t: 'hello'; v: number; client: string; version: string; session: string; last_acked_seq?: number | undefined; token?: string | undefined }
  | {
      t: 'batch';
      seq: number;
      /** applied: stored now; duplicate: already applied earlier (ack again); nack: not applied, resend */
      outcome: 'applied' | 'duplicate' | 'nack';
      code?: ErrorCode;
      accepted: number;
      rejected: number;
      errors?: RecordError[];
    }
  | { t: 'ping'; ts: number }
  | { t: 'pong'; ts: number }
  | { t: 'result'; id: string; status: string; result?: unknown; error?: unknown }
  | { t: 'error'; code: ErrorCode; message: string; /** the batch's seq when it was decoded before failing */ seq?: number }
  | { t: 'http'; status: number; body: Record<string, unknown> };

export interface IngestResult {
  kind: 'ingest';
  results: ItemResult[];
  /** secrets redacted per class during this task (counts, never values) */
  redacted?: Record<string, number>;
  /** records whose redaction threw: free text dropped, metadata kept */
  redactionFailed?: number;
}

export interface WarmupResult {
  kind: 'warmup';
  batches: number;
  micros: number;
}

export type WorkerResult = IngestResult | WarmupResult;

/** What every worker receives once, as piscina workerData. */
export interface WorkerInit {
  store: StoreBuffers;
  arena: SharedArrayBuffer;
  slots: SharedArrayBuffer;
  limits: {
    maxDepth: number;
    maxElements: number;
    maxEventsPerBatch: number;
    maxErrorsPerAck: number;
    maxFrame: number;
  };
  retryAfterMs: number;
  /** the one rule set; every worker compiles the same engine from it */
  redaction: { rules: Array<{ name: string; pattern: string; replacement?: string | undefined }>; allowlist: string[] };
  faultInjection: boolean;
  /** shared flag words for fault injection ("crash once") */
  chaos: SharedArrayBuffer;
  /** where workers publish alerts, and what their detectors remember together */
  alerts: AlertRingBuffers;
  detect: DetectStateBuffers;
  /** the express board (express.ts); absent when it is off */
  express?: SharedArrayBuffer;
}
