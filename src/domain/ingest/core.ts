/**
 * The ingest core: what a worker does with each item of a task, as plain code over injected parts
 * (writer, item slots, detector, redactor, alert sink, clock, faults, express board), so it runs in
 * a unit test without threads. workers/ingest.ts (ingest-runner.ts) only builds the parts and calls it.
 *
 * The rules it keeps:
 * - at most once per (session, seq): a batch at or below the applied seq is acknowledged again and
 *   stores nothing; a batch past applied + 1 is nacked out_of_order;
 * - a session's items of one task are in arrival order, so the task tracks what it applied;
 * - the item slot is written inside the commit (under the store lock), so a retry after a crash
 *   finds it and answers what the first run answered instead of storing the batch twice;
 * - alerts are published after the commit (an alert for data that was not stored would mislead),
 *   and detection marks what it saw in the shared state only then (else a retry finds it "seen").
 */
import type { StagedCommit, CommitOutcome } from '../../shm/index.js';
import type { AlertEnvelope } from '../alerts/alert.js';
import { KINDS } from '../kinds.js';
import { decodeFrame } from '../wire/decode.js';
import { RecordSpans } from '../wire/record-spans.js';
import { peekBatchSeq } from '../wire/peek-seq.js';
import type { BatchFrame, IngestedRecord } from '../wire/schemas.js';
import type { HttpItem, TaskItem, WsItem } from './item.js';
import { sessionId, type SessionId } from './item.js';
import { replayed, type CommittedOutcome, type ItemOutcome } from './outcome.js';
import { processBatchFrame, processHttpBody, type IngestContext, type IngestLimits } from './process.js';
import type { Redactor } from './redactor.js';

/** The item-status slots (pool/item-slots.ts), seen as the outcomes they record. */
export interface ItemSlots {
  /** what a committed attempt of this item answered; undefined when none committed */
  committed(slot: number): CommittedOutcome | undefined;
  /** called inside the commit, before it is published */
  record(slot: number, o: CommittedOutcome): void;
  /** the batch seq as soon as it is decoded, so a poisoned frame can still be acknowledged */
  noteSeq(slot: number, seq: number): void;
}

export interface IngestWriter {
  /** `beforePublish` runs under the lock with the number of records too large for their ring */
  commit(c: StagedCommit, beforePublish?: (tooLarge: number) => void): CommitOutcome;
}

export interface IngestDetector {
  see(r: IngestedRecord, edgeAt: number, pageUrl?: string): void;
  /** after the commit: marks the batch in the shared detection state and returns its alerts */
  take(): AlertEnvelope[];
  /** the batch did not commit: nothing of it is marked, so its retry still finds its errors new */
  discard(): void;
}

/** Where alerts go after the commit; false when one could not be published (counted). */
export interface AlertSink {
  publish(env: AlertEnvelope): boolean;
}

/** Fault injection for the chaos tests; production passes none. */
export interface IngestFaults {
  /** true: refuse this batch as overloaded (once per session and seq) */
  nack(session: SessionId, frame: BatchFrame): boolean;
  /** may end the thread: runs after the order checks, before anything is committed */
  beforeApply(frame: BatchFrame): void;
}

/** The express board (pool/express.ts), as the core uses it. */
export interface ExpressBoard {
  /** between two items: run `take` on whatever quiet producers posted; undefined declines one */
  poll(take: (item: WsItem, recvTime: number) => ItemOutcome | undefined): number;
  /** the task's own item `entry`: `run` it unless another worker already answered it */
  own(entry: number, run: () => ItemOutcome): ItemOutcome;
}

export interface RedactionSource {
  /** the redactor in force; `counts` are its running totals per secret class */
  current(): Redactor & { counts(): Record<string, number> };
}

export interface IngestDeps {
  /** the shared input arena the items are slices of */
  input: Uint8Array;
  slots: ItemSlots;
  writer: IngestWriter;
  detector: IngestDetector;
  alerts: AlertSink;
  redaction: RedactionSource;
  /** epoch ms with sub-ms precision (stage stamps of alerts) */
  clock: () => number;
  limits: { maxDepth: number; maxElements: number } & { events: IngestLimits };
  faults?: IngestFaults;
  express?: ExpressBoard;
}

export interface TaskOutcome {
  outcomes: ItemOutcome[];
  /** records whose redaction threw during this task (free text dropped, metadata kept) */
  redactionFailed: number;
  /** alerts that could not be published during this task */
  alertsUnpublished: number;
}

export class IngestCore {
  /** when the item being processed began: the end of its wait in the queues */
  private itemStartedAt = 0;
  private redactionFailed = 0;
  private alertsUnpublished = 0;
  private readonly scan: { maxDepth: number; maxElements: number };
  /** where the pre-scan found the records of the frame in hand (a record left as it came is stored as its bytes) */
  private readonly spans = new RecordSpans();

  constructor(private readonly d: IngestDeps) {
    this.scan = { maxDepth: d.limits.maxDepth, maxElements: d.limits.maxElements };
  }

  /** One task: its items in order, with express frames taken between them. */
  runTask(items: readonly TaskItem[], recvTime: number): TaskOutcome {
    const express = this.d.express;
    const take = (item: WsItem, t: number): ItemOutcome | undefined => this.takeExpress(item, t);
    // Within one task a session's items are in arrival order; track applied seqs as we go.
    const applied = new Map<SessionId, number>();
    const outcomes: ItemOutcome[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      express?.poll(take);
      const item = items[i]!;
      this.itemStartedAt = this.d.clock();
      if (item.src === 'http') outcomes[i] = this.httpItem(item, recvTime);
      else if (item.express !== undefined && express) outcomes[i] = express.own(item.express, () => this.wsItem(item, recvTime, applied));
      else outcomes[i] = this.wsItem(item, recvTime, applied);
    }
    express?.poll(take);
    const out = { outcomes, redactionFailed: this.redactionFailed, alertsUnpublished: this.alertsUnpublished };
    this.redactionFailed = 0;
    this.alertsUnpublished = 0;
    return out;
  }

  /**
   * A quiet producer's frame from the express board, taken between two items of this worker's task.
   * Only batches are done here; anything else is declined to the task that names it. The session had
   * nothing else queued or in flight when it was posted, so its own applied seq is the baseline.
   */
  takeExpress(item: WsItem, recvTime: number): ItemOutcome | undefined {
    this.itemStartedAt = this.d.clock();
    if (this.d.slots.committed(item.slot)) return undefined;
    const decoded = decodeFrame(this.view(item), this.scan, this.spans);
    if (!decoded.ok || decoded.frame.t !== 'batch') return undefined;
    return this.batchItem(item, decoded.frame, recvTime, new Map());
  }

  wsItem(item: WsItem, recvTime: number, applied: Map<SessionId, number>): ItemOutcome {
    // A retried item whose first attempt committed before the worker died: answer, don't redo.
    const prior = this.d.slots.committed(item.slot);
    if (prior) {
      if (item.session !== null && prior.kind !== 'stored') applied.set(item.session, Math.max(applied.get(item.session) ?? -1, prior.seq));
      return replayed(prior);
    }
    if (item.shed && item.session !== null) {
      // refused without the decode when its seq is plain to read (the edge does the same for
      // groups of batches only; this is a batch shed in a group with another kind of frame)
      const seq = peekBatchSeq(this.view(item));
      if (seq !== undefined) {
        this.d.slots.noteSeq(item.slot, seq);
        return { kind: 'nack', seq, code: 'overloaded' };
      }
    }
    const decoded = decodeFrame(this.view(item), this.scan, this.spans);
    if (!decoded.ok) return { kind: 'rejected', code: decoded.code, message: decoded.message };
    const frame = decoded.frame;
    switch (frame.t) {
      case 'hello':
        if (item.session !== null) return { kind: 'rejected', code: 'duplicate_hello', message: 'hello was already received on this connection; ignored' };
        return { kind: 'hello', v: frame.v, client: frame.client, version: frame.version, session: sessionId(frame.session), last_acked_seq: frame.last_acked_seq, token: frame.token, ...(frame.auth ? { auth: frame.auth } : {}) };
      case 'ping':
        return { kind: 'ping', ts: frame.ts };
      case 'pong':
        return { kind: 'pong', ts: frame.ts };
      case 'result':
        return { kind: 'result', id: frame.id, status: frame.status, result: frame.result, error: frame.error };
      case 'panel_token':
        if (item.session === null) return { kind: 'rejected', code: 'hello_required', message: 'the first frame must be hello' };
        return { kind: 'panel_token', id: frame.id };
      case 'batch':
        return this.batchItem(item, frame, recvTime, applied);
      default:
        return { kind: 'rejected', code: 'unknown_frame_type', message: `frame type ${JSON.stringify((frame as { t: unknown }).t)} is not accepted from producers` };
    }
  }

  private batchItem(item: WsItem, frame: BatchFrame, recvTime: number, applied: Map<SessionId, number>): ItemOutcome {
    if (item.session === null) return { kind: 'rejected', code: 'hello_required', message: 'the first frame must be hello' };
    const { slots, writer } = this.d;
    const seq = frame.seq;
    slots.noteSeq(item.slot, seq);
    const last = applied.get(item.session) ?? item.applied;
    if (item.shed) return { kind: 'nack', seq, code: 'overloaded' };
    if (last >= 0 && seq <= last) {
      // At most once per (session, seq): acknowledge again, store nothing; its records count as
      // received and dropped 'duplicate', so the accounting still balances.
      const counts = countArrays(frame);
      const dup: CommittedOutcome = { kind: 'duplicate', seq };
      writer.commit({ recvTime, records: [], received: counts, rejected: zeros(), dropped: dropList(counts) }, () => slots.record(item.slot, dup));
      return dup;
    }
    if (this.d.faults?.nack(item.session, frame)) return { kind: 'nack', seq, code: 'overloaded' };
    if (last >= 0 && seq !== last + 1) return { kind: 'nack', seq, code: 'out_of_order' };
    this.d.faults?.beforeApply(frame);
    const out = processBatchFrame(frame, this.context(item, recvTime), this.spans);
    this.redactionFailed += sum(out.redactionFailed);
    const errors = out.errors.length ? out.errors : undefined;
    let outcome: CommittedOutcome | undefined;
    writer.commit({ recvTime, records: out.records, received: out.received, rejected: out.rejected }, (tooLarge) => {
      // what the answer reports, exactly: a record too large for its ring is a rejected one
      outcome = { kind: 'applied', seq, accepted: out.records.length - tooLarge, rejected: sum(out.rejected) + tooLarge };
      slots.record(item.slot, outcome);
    });
    applied.set(item.session, seq);
    this.publishAlerts();
    return { ...outcome!, ...(errors ? { errors } : {}) };
  }

  httpItem(item: HttpItem, recvTime: number): ItemOutcome {
    const prior = this.d.slots.committed(item.slot);
    if (prior) return replayed(prior);
    if (item.shed) return { kind: 'refused', code: 'overloaded' };
    const out = processHttpBody(item.route, this.view(item), this.context(item, recvTime), this.spans);
    if (!out.ok) return { kind: 'rejected', code: out.code, message: out.message };
    this.redactionFailed += sum(out.redactionFailed);
    const errors = out.errors.length ? out.errors : undefined;
    let outcome: CommittedOutcome | undefined;
    this.d.writer.commit({ recvTime, records: out.records, received: out.received, rejected: out.rejected }, (tooLarge) => {
      outcome = { kind: 'stored', accepted: out.records.length - tooLarge, rejected: sum(out.rejected) + tooLarge };
      this.d.slots.record(item.slot, outcome);
    });
    this.publishAlerts();
    return { ...outcome!, ...(errors ? { errors } : {}) };
  }

  private context(item: TaskItem, recvTime: number): IngestContext {
    const detector = this.d.detector;
    const edgeAt = item.edgeAt ?? recvTime;
    // what an earlier item raised but did not commit (it threw) is not this item's
    detector.discard();
    return { recvTime, redactor: this.d.redaction.current(), limits: this.d.limits.events, detect: (r, pageUrl) => detector.see(r, edgeAt, pageUrl) };
  }

  private view(item: TaskItem): Uint8Array {
    return this.d.input.subarray(item.off, item.off + item.len);
  }

  /** After the commit: the batch's alerts go to main. */
  private publishAlerts(): void {
    for (const env of this.d.detector.take()) {
      // the stage stamp that splits "edge → worker done" from "ring → main" in streaming status
      env.startTime = this.itemStartedAt;
      env.publishTime = this.d.clock();
      if (!this.d.alerts.publish(env)) this.alertsUnpublished++;
    }
  }
}

function countArrays(frame: BatchFrame): number[] {
  return KINDS.map((k) => frame[k]?.length ?? 0);
}

function zeros(): number[] {
  return KINDS.map(() => 0);
}

function dropList(counts: number[]): Array<[number, 'duplicate', number]> {
  const out: Array<[number, 'duplicate', number]> = [];
  counts.forEach((n, k) => {
    if (n > 0) out.push([k, 'duplicate', n]);
  });
  return out;
}

function sum(a: readonly number[]): number {
  let s = 0;
  for (const n of a) s += n;
  return s;
}
