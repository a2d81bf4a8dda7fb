/**
 * The protocol between the main thread and the ingest workers: task and result shapes,
 * and nothing else. Both sides import this module.
 *
 * Bulk bytes never travel in these messages: the edge copies each frame once into the shared
 * input arena, and a task names (offset, length) slices of it. Control travels here.
 */
import type { AlertRingBuffers } from '../shm/alert-ring.js';
import type { DetectStateBuffers } from '../shm/detect-state.js';
import type { StoreBuffers } from '../shm/index.js';
import type { ItemOutcome } from '../domain/ingest/outcome.js';
import type { TaskItem } from '../domain/ingest/item.js';
import type { ThreadPriority } from './thread-priority.js';

// The item and outcome shapes are the ingest core's; this protocol carries them unchanged.
export { HTTP_ROUTES, type HttpRoute } from '../domain/kinds.js';
export type { HttpItem, SessionId, TaskItem, WsItem } from '../domain/ingest/item.js';
export type { ItemOutcome, RecordError } from '../domain/ingest/outcome.js';

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

export interface IngestResult {
  kind: 'ingest';
  results: ItemOutcome[];
  /** secrets redacted per class during this task (counts, never values) */
  redacted?: Record<string, number>;
  /** records whose redaction threw: free text dropped, metadata kept */
  redactionFailed?: number;
  /** alerts the detectors raised that could not be published (too large for an alert slot) */
  alertsUnpublished?: number;
  /** on a thread's first result only: its priority as its start left it (thread-priority.ts) */
  priority?: ThreadPriority;
}

export interface WarmupResult {
  kind: 'warmup';
  batches: number;
  micros: number;
  /** as IngestResult's */
  priority?: ThreadPriority;
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
  /** added to the worker thread's nice value at its start (thread-priority.ts); absent: 0 */
  nice?: number;
}
