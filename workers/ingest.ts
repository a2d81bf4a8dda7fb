/**
 * The ingest worker: a thin piscina entry point. All per-record logic lives in src/ as pure
 * functions; this file wires them to the shared input arena, the item slots and the rings.
 */
import './stdout-guard.js';
import { workerData, threadId } from 'node:worker_threads';
import type { IngestTask, ItemResult, TaskItem, WarmupResult, WorkerInit, WorkerTask, WorkerResult } from '../src/pool/messages.js';
import { SlotView, SLOT_APPLIED, SLOT_DUPLICATE, SLOT_EMPTY } from '../src/pool/item-slots.js';
import { StoreWriter } from '../src/shm/index.js';
import { decodeFrame, processBatchFrame, processHttpBody, type BatchFrame } from '../src/domain/ingest/api.js';
import { compileRedaction } from '../src/domain/redaction/index.js';
import { warmupFrames } from './warmup.js';
import { AlertRingWriter } from '../src/shm/alert-ring.js';
import { allocateDetectState, DetectState } from '../src/shm/detect-state.js';
import { Detector } from '../src/domain/alerts/detect.js';
import { ExpressTaker } from '../src/pool/express.js';

const init = workerData as WorkerInit;
const arena = new Uint8Array(init.arena);
const slots = new SlotView(init.slots);
const writer = new StoreWriter(init.store, threadId);
const chaos = new Int32Array(init.chaos);
const alertRing = new AlertRingWriter(init.alerts);
const detector = new Detector(new DetectState(init.detect));
const express = init.express ? new ExpressTaker(init.express, threadId) : undefined;
let alertsUnpublished = 0;
/** when this worker began the item being processed: the end of its wait in the queues */
let itemStartedAt = 0;
// Fail closed: a rule set that does not compile throws here and the pool never starts.
let redactor = compileRedaction(init.redaction);
let redactionVersion = 0;
let reported: Record<string, number> = {};
let failedSinceReport = 0;
const scanLimits = { maxDepth: init.limits.maxDepth, maxElements: init.limits.maxElements };
const limits = { max_events_per_batch: init.limits.maxEventsPerBatch, max_errors_per_ack: init.limits.maxErrorsPerAck };

export default function run(task: WorkerTask): WorkerResult {
  if (task.kind === 'warmup') return warmup(task.batches);
  return ingest(task);
}

function ingest(task: IngestTask): WorkerResult {
  if (task.redaction && task.redaction.version !== redactionVersion) {
    // main validated these rules before bumping the version; compile the same set here
    redactor = compileRedaction({ rules: task.redaction.rules, allowlist: task.redaction.allowlist });
    redactionVersion = task.redaction.version;
    reported = {};
  }
  // Within one task a session's items are in arrival order; track applied seqs as we go.
  const applied = new Map<string, number>();
  const results: ItemResult[] = new Array(task.items.length);
  for (let i = 0; i < task.items.length; i++) {
    express?.poll(takeExpress);
    const item = task.items[i]!;
    itemStartedAt = performance.timeOrigin + performance.now();
    if (item.src === 'http') results[i] = httpItem(item, task.recvTime);
    else if (item.express !== undefined && express) results[i] = express.own(item.express, () => wsItem(item, task.recvTime, applied));
    else results[i] = wsItem(item, task.recvTime, applied);
  }
  express?.poll(takeExpress);
  const out: WorkerResult = { kind: 'ingest', results };
  // Counts since the last task, so main can add them up across workers.
  const now = redactor.counts();
  let delta: Record<string, number> | undefined;
  for (const [cls, n] of Object.entries(now)) {
    const d = n - (reported[cls] ?? 0);
    if (d > 0) (delta ??= {})[cls] = d;
  }
  if (delta) {
    out.redacted = delta;
    reported = { ...now };
  }
  if (failedSinceReport) {
    out.redactionFailed = failedSinceReport;
    failedSinceReport = 0;
  }
  return out;
}

/**
 * A quiet producer's frame from the express board, taken between two items of this worker's task.
 * Only batches are done here; anything else is declined to the task that names it. The session had
 * nothing else queued or in flight when it was posted, so its own applied seq is the baseline.
 */
function takeExpress(item: Extract<TaskItem, { src: 'ws' }>, recvTime: number): ItemResult | undefined {
  itemStartedAt = performance.timeOrigin + performance.now();
  const prior = slots.read(item.slot);
  if (prior.state !== SLOT_EMPTY) return undefined;
  const decoded = decodeFrame(view(item), scanLimits);
  if (!decoded.ok || decoded.frame.t !== 'batch') return undefined;
  return batchItem(item, decoded.frame, recvTime, new Map());
}

function view(item: TaskItem): Uint8Array {
  return arena.subarray(item.off, item.off + item.len);
}

function wsItem(item: Extract<TaskItem, { src: 'ws' }>, recvTime: number, applied: Map<string, number>): ItemResult {
  // A retried item whose first attempt committed before the worker died: answer, don't redo.
  const prior = slots.read(item.slot);
  if (prior.state === SLOT_APPLIED || prior.state === SLOT_DUPLICATE) {
    if (item.session !== null) applied.set(item.session, Math.max(applied.get(item.session) ?? -1, prior.seq));
    return { t: 'batch', seq: prior.seq, outcome: prior.state === SLOT_DUPLICATE ? 'duplicate' : 'applied', accepted: prior.accepted, rejected: prior.rejected };
  }
  const decoded = decodeFrame(view(item), scanLimits);
  if (!decoded.ok) return { t: 'error', code: decoded.code, message: decoded.message };
  const frame = decoded.frame;
  switch (frame.t) {
    case 'hello':
      if (item.session !== null) return { t: 'error', code: 'duplicate_hello', message: 'hello was already received on this connection; ignored' };
      return {
        t: 'hello',
        v: frame.v,
        client: frame.client,
        version: frame.version,
        session: frame.session,
        last_acked_seq: frame.last_acked_seq,
        token: frame.token,
      };
    case 'ping':
      return { t: 'ping', ts: frame.ts };
    case 'pong':
      return { t: 'pong', ts: frame.ts };
    case 'result':
      return { t: 'result', id: frame.id, status: frame.status, result: frame.result, error: frame.error };
    case 'batch':
      return batchItem(item, frame, recvTime, applied);
    default:
      return { t: 'error', code: 'unknown_frame_type', message: `frame type ${JSON.stringify((frame as { t: unknown }).t)} is not accepted from producers` };
  }
}

function batchItem(item: Extract<TaskItem, { src: 'ws' }>, frame: BatchFrame, recvTime: number, applied: Map<string, number>): ItemResult {
  if (item.session === null) return { t: 'error', code: 'hello_required', message: 'the first frame must be hello' };
  const seq = frame.seq;
  slots.noteSeq(item.slot, seq);
  const last = applied.get(item.session) ?? item.applied;
  if (item.shed) return { t: 'batch', seq, outcome: 'nack', code: 'overloaded', accepted: 0, rejected: 0 };
  if (last >= 0 && seq <= last) {
    // At most once per (session, seq): acknowledge again, store nothing.
    const counts = countArrays(frame);
    writer.commit(
      { recvTime, records: [], received: counts, rejected: zeros(), dropped: dropList(counts, 'duplicate') },
      () => slots.write(item.slot, SLOT_DUPLICATE, 0, 0, seq),
    );
    return { t: 'batch', seq, outcome: 'duplicate', accepted: 0, rejected: 0 };
  }
  if (nackOnce(item.session, frame)) return { t: 'batch', seq, outcome: 'nack', code: 'overloaded', accepted: 0, rejected: 0 };
  if (last >= 0 && seq !== last + 1) {
    return { t: 'batch', seq, outcome: 'nack', code: 'out_of_order', accepted: 0, rejected: 0 };
  }
  maybeCrash(frame);
  const edgeAt = item.edgeAt ?? recvTime;
  detector.discard();
  const out = processBatchFrame(frame, { recvTime, redactor, limits, detect: (k, r, pageUrl) => detector.see(k, r, edgeAt, pageUrl) });
  failedSinceReport += sum(out.redactionFailed);
  const dropped: Array<[number, 'redaction_failed', number]> = [];
  const accepted = out.records.length;
  const rejected = sum(out.rejected);
  const res = writer.commit(
    { recvTime, records: out.records, received: out.received, rejected: out.rejected, dropped: [...dropped] },
    () => slots.write(item.slot, SLOT_APPLIED, accepted, rejected, seq),
  );
  applied.set(item.session, seq);
  publishAlerts();
  const errors = out.errors.length ? out.errors : undefined;
  const tooLarge = res.tooLarge;
  return {
    t: 'batch',
    seq,
    outcome: 'applied',
    accepted: accepted - tooLarge,
    rejected: rejected + tooLarge,
    ...(errors ? { errors } : {}),
  };
}

function httpItem(item: Extract<TaskItem, { src: 'http' }>, recvTime: number): ItemResult {
  const prior = slots.read(item.slot);
  if (prior.state === SLOT_APPLIED) {
    return { t: 'http', status: 200, body: { received: prior.accepted + prior.rejected, accepted: prior.accepted, rejected: prior.rejected } };
  }
  if (item.shed) {
    return { t: 'http', status: 503, body: { error: 'overloaded', message: 'server is overloaded; retry after the delay', retry_after_ms: init.retryAfterMs } };
  }
  const edgeAt = item.edgeAt ?? recvTime;
  detector.discard();
  const out = processHttpBody(item.route, view(item), { recvTime, redactor, limits, detect: (k, r, pageUrl) => detector.see(k, r, edgeAt, pageUrl) });
  if (out.ok) failedSinceReport += sum(out.redactionFailed);
  if (!out.ok) return { t: 'http', status: 400, body: { error: out.code, message: out.message } };
  const accepted = out.records.length;
  const rejected = sum(out.rejected);
  const res = writer.commit(
    { recvTime, records: out.records, received: out.received, rejected: out.rejected, dropped: [] },
    () => slots.write(item.slot, SLOT_APPLIED, accepted, rejected, -1),
  );
  publishAlerts();
  const total = accepted + rejected;
  const body: Record<string, unknown> = { received: total, accepted: accepted - res.tooLarge, rejected: rejected + res.tooLarge };
  if (out.errors.length) body.errors = out.errors;
  // All records refused: the request as a whole was invalid.
  return { t: 'http', status: total > 0 && accepted === 0 ? 400 : 200, body };
}

/** After the commit: the batch's alerts go to main (an alert for data that was not stored would mislead). */
function publishAlerts(): void {
  for (const env of detector.take()) {
    // the stage stamp that splits "edge → worker done" from "ring → main" in streaming status
    env.startTime = itemStartedAt;
    env.publishTime = performance.timeOrigin + performance.now();
    if (!alertRing.publish(env)) alertsUnpublished++;
  }
}

function maybeCrash(frame: BatchFrame): void {
  if (!init.faultInjection) return;
  if (frame.page_url === 'gasoline:crash') process.exit(70);
  if (frame.page_url === 'gasoline:crash-once' && Atomics.compareExchange(chaos, 0, 0, 1) === 0) process.exit(70);
}

/** Fault injection (tests only): every batch of a page "gasoline:nack-once" is refused once. */
const nackedOnce = new Set<string>();
function nackOnce(session: string, frame: BatchFrame): boolean {
  if (!init.faultInjection || frame.page_url !== 'gasoline:nack-once') return false;
  const key = `${session}:${frame.seq}`;
  if (nackedOnce.has(key)) return false;
  nackedOnce.add(key);
  return true;
}

const BATCH_KEYS = ['logs', 'network', 'network_bodies', 'ws_events', 'actions', 'perf', 'ext_logs'] as const;

function countArrays(frame: BatchFrame): number[] {
  return BATCH_KEYS.map((k) => {
    const a = (frame as Record<string, unknown>)[k];
    return Array.isArray(a) ? a.length : 0;
  });
}

function zeros(): number[] {
  return BATCH_KEYS.map(() => 0);
}

function dropList(counts: number[], reason: 'duplicate'): Array<[number, 'duplicate', number]> {
  const out: Array<[number, 'duplicate', number]> = [];
  counts.forEach((n, k) => {
    if (n > 0) out.push([k, reason, n]);
  });
  return out;
}

function sum(a: number[]): number {
  let s = 0;
  for (const n of a) s += n;
  return s;
}

function warmup(batches: number): WarmupResult {
  const t0 = performance.now();
  // the detectors get warm too, against a scratch memory: synthetic errors are not the user's
  const scratch = new Detector(new DetectState(allocateDetectState()));
  for (const bytes of warmupFrames(batches)) {
    const d = decodeFrame(bytes, scanLimits);
    if (d.ok && d.frame.t === 'batch') processBatchFrame(d.frame, { recvTime: Date.now(), redactor, limits, detect: (k, r, u) => scratch.see(k, r, 0, u) });
    scratch.take();
  }
  // warm-up traffic is synthetic: its redactions are not the user's
  reported = { ...redactor.counts() };
  return { kind: 'warmup', batches, micros: Math.round((performance.now() - t0) * 1000) };
}
