/**
 * Crash replay without threads. A worker that dies after its commit never sends its answer; main
 * retries the task on a replacement worker, which here is a fresh IngestCore over the same shared
 * buffers (store, item slots, detector state, alert ring). The retried item must answer exactly
 * what the first run answered (less the per-record error list the slot has no room for) and store
 * nothing twice; an attempt that died before its commit is simply run again.
 */
import { describe, expect, it } from 'vitest';
import { pageUrlFaults } from '../../../src/domain/ingest/faults.js';
import { replayed, type CommittedOutcome, type ItemOutcome } from '../../../src/domain/ingest/outcome.js';
import type { TaskItem } from '../../../src/domain/ingest/item.js';
import { httpAnswer } from '../../../src/transport/http.js';
import { wsAnswer } from '../../../src/transport/ws.js';
import { expectBalanced } from '../shm/balance.js';
import { S1, exception, log, rig, type Rig } from './rig.js';

class WorkerExit extends Error {
  constructor(readonly code: number) {
    super(`worker exited with ${code}`);
  }
}

/** The production fault injection, with the thread's exit turned into a throw this test can catch. */
function crashFaults() {
  return pageUrlFaults(new Int32Array(new SharedArrayBuffer(4)), (code) => {
    throw new WorkerExit(code);
  });
}

function committed(o: ItemOutcome | undefined): CommittedOutcome {
  if (!o || (o.kind !== 'applied' && o.kind !== 'duplicate' && o.kind !== 'stored')) throw new Error(`not a committed outcome: ${JSON.stringify(o)}`);
  return o;
}

/** Runs `item` on one worker, then again on a replacement; returns both answers and the store in between. */
function runTwice(r: Rig, item: TaskItem) {
  const first = r.worker().runTask([item], 1000).outcomes[0];
  const afterFirst = { logs: r.stored(), counters: r.reader.counters() };
  const second = r.worker().runTask([item], 1000).outcomes[0];
  return { first, second, afterFirst };
}

describe('crash replay: a committed item answers what its first run answered', () => {
  it('an applied batch with per-record errors: same seq and counts, no errors list, stored once', () => {
    const r = rig();
    const item = r.batch(5, S1, 4, { logs: [log('a'), { level: 'log' }, log('b')] });
    const { first, second, afterFirst } = runTwice(r, item);
    expect(first).toMatchObject({ kind: 'applied', seq: 5, accepted: 2, rejected: 1, errors: [{ index: 1, code: 'invalid_record' }] });
    expect(second).toEqual(replayed(committed(first)));
    expect(second).toEqual({ kind: 'applied', seq: 5, accepted: 2, rejected: 1 });
    expect(r.stored()).toEqual(afterFirst.logs);
    expect(r.reader.counters()).toEqual(afterFirst.counters);
    // what the producer is told differs only by the error details
    const at = { retryAfterMs: 250, resumeFrom: 5 };
    const { errors: _errors, ...firstAck } = wsAnswer(first!, at) as { errors?: unknown };
    expect(wsAnswer(second!, at)).toEqual(firstAck);
    expectBalanced(r.reader);
  });

  it('records too large for their ring: the slot holds the counts after them, so the replay answers the same', () => {
    const r = rig({ ringBytes: { logs: 256 } });
    const item = r.batch(0, S1, -1, { logs: [log('fits'), log('x'.repeat(1000)), log('y'.repeat(1000))] });
    const { first, second, afterFirst } = runTwice(r, item);
    expect(first).toEqual({ kind: 'applied', seq: 0, accepted: 1, rejected: 2 });
    expect(r.slots.read(item.slot)).toMatchObject({ accepted: 1, rejected: 2, seq: 0 });
    expect(second).toEqual(first);
    expect(r.reader.counters()).toEqual(afterFirst.counters);
    expect(r.counters()).toMatchObject({ received: 3, stored: 1, dropped: { record_too_large: 2 } });
    expectBalanced(r.reader);
  });

  it('an HTTP body with a record too large for its ring: same status and body, received = accepted + rejected', () => {
    const r = rig({ ringBytes: { logs: 256 } });
    const item = r.http('/logs', { entries: [log('fits'), log('z'.repeat(1000)), { bad: 1 }] });
    const { first, second, afterFirst } = runTwice(r, item);
    expect(first).toMatchObject({ kind: 'stored', accepted: 1, rejected: 2, errors: [{ index: 2 }] });
    expect(second).toEqual(replayed(committed(first)));
    const a1 = httpAnswer(first!, 250);
    const a2 = httpAnswer(second!, 250);
    expect(a2.status).toBe(a1.status);
    expect(a2.body).toEqual({ received: 3, accepted: 1, rejected: 2 });
    expect({ ...a1.body, errors: undefined }).toEqual({ ...a2.body, errors: undefined });
    expect(r.reader.counters()).toEqual(afterFirst.counters);
    expectBalanced(r.reader);
  });

  it('a body whose every record was refused replays as the same 400', () => {
    const r = rig({ ringBytes: { logs: 256 } });
    const item = r.http('/logs', { entries: [log('w'.repeat(1000))] });
    const { first, second } = runTwice(r, item);
    expect(first).toEqual({ kind: 'stored', accepted: 0, rejected: 1 });
    expect(second).toEqual(first);
    expect(httpAnswer(second!, 250)).toEqual(httpAnswer(first!, 250));
    expect(httpAnswer(second!, 250).status).toBe(400);
  });

  it('a duplicate replays as the duplicate and its records are not counted twice', () => {
    const r = rig();
    r.worker().runTask([r.batch(0, S1, -1)], 1000);
    const dup = r.batch(0, S1, 0, { logs: [log('a'), log('b')] });
    const { first, second, afterFirst } = runTwice(r, dup);
    expect(first).toEqual({ kind: 'duplicate', seq: 0 });
    expect(second).toEqual(first);
    expect(r.reader.counters()).toEqual(afterFirst.counters);
    expect(r.counters().dropped.duplicate).toBe(2);
    expectBalanced(r.reader);
  });

  it('answers that commit nothing come out the same when run again (nothing to remember)', () => {
    const r = rig();
    for (const item of [r.batch(9, S1, 4), r.batch(1, null, -1), r.http('/logs', '{'), r.http('/logs', { entries: [log('a')] }, true)]) {
      const { first, second } = runTwice(r, item);
      expect(second).toEqual(first);
    }
    expect(r.counters().received).toBe(0);
  });

  it('a replacement worker replays the items its predecessor committed and carries their seqs on to the rest of the task', () => {
    const r = rig();
    const items = [r.batch(5, S1, 4), r.batch(6, S1, 4, { logs: [log('six')], page_url: 'gasoline:crash-once' }), r.batch(7, S1, 4)];
    const faults = crashFaults();
    expect(() => r.worker({ faults }).runTask(items, 1000)).toThrow(WorkerExit);
    // batch 5 committed before the crash; 6 died in beforeApply, before anything was committed
    expect(r.stored().map((x) => x.message)).toEqual(['batch 5']);
    expect(r.slots.committed(items[1]!.slot)).toBeUndefined();
    expect(r.slots.read(items[1]!.slot).seq).toBe(6);

    // the task is retried as it was (main still has applied = 4): 5 answers from its slot, 6 and 7 apply
    const { outcomes } = r.worker({ faults }).runTask(items, 1000);
    expect(outcomes).toEqual([5, 6, 7].map((seq) => ({ kind: 'applied', seq, accepted: 1, rejected: 0 })));
    expect(r.stored().map((x) => x.message)).toEqual(['batch 5', 'six', 'batch 7']);
    expect(r.counters()).toMatchObject({ received: 3, stored: 3 });
    expectBalanced(r.reader);
  });

  it('a batch that always crashes the worker never commits, whatever the retry', () => {
    const r = rig();
    const item = r.batch(0, S1, -1, { logs: [log('kill')], page_url: 'gasoline:crash' });
    for (let attempt = 0; attempt < 2; attempt++) expect(() => r.worker({ faults: crashFaults() }).runTask([item], 1000)).toThrow(WorkerExit);
    expect(r.slots.committed(item.slot)).toBeUndefined();
    expect(r.counters().received).toBe(0);
  });

  it('a worker that dies inside its commit (after the copy, before publishing) leaves nothing; the retry stores once', () => {
    const r = rig();
    const item = r.batch(3, S1, 2, { logs: [log('mid-commit')] });
    const dying = r.worker({
      writer: {
        afterCopy: () => {
          throw new WorkerExit(70);
        },
      },
    });
    expect(() => dying.runTask([item], 1000)).toThrow(WorkerExit);
    expect(r.slots.committed(item.slot)).toBeUndefined();
    expect(r.stored()).toEqual([]);
    expect(r.reader.lockHolder()).toBe(0);
    expect(r.worker().runTask([item], 1000).outcomes).toEqual([{ kind: 'applied', seq: 3, accepted: 1, rejected: 0 }]);
    expect(r.stored().map((x) => x.message)).toEqual(['mid-commit']);
    expectBalanced(r.reader);
  });
});

describe('alerts are published only after the commit', () => {
  it('a committed batch publishes its alert, stamped with when the item began and when it was handed over', () => {
    const r = rig();
    const item = r.batch(0, S1, -1, { logs: [exception('boom')] });
    r.worker().runTask([item], 1000);
    const got = r.alerts();
    expect(got).toHaveLength(1);
    expect(got[0]!.alert.title).toContain('boom');
    expect(got[0]!.edgeTime).toBe(item.edgeAt);
    expect(got[0]!.startTime).toBeTypeOf('number');
    expect(got[0]!.publishTime).toBeGreaterThanOrEqual(got[0]!.startTime!);
  });

  it('a replayed item publishes nothing again', () => {
    const r = rig();
    const item = r.batch(0, S1, -1, { logs: [exception('once')] });
    r.worker().runTask([item], 1000);
    expect(r.alerts()).toHaveLength(1);
    r.advance(60_000); // past the "new error" window: a re-run would raise it again
    expect(r.worker().runTask([item], 1000).outcomes[0]).toMatchObject({ kind: 'applied' });
    expect(r.alerts()).toEqual([]);
  });

  it('a crash before the commit publishes none; the retry publishes the alert once', () => {
    const r = rig();
    const item = r.batch(0, S1, -1, { logs: [exception('crashy')], page_url: 'gasoline:crash-once' });
    const faults = crashFaults();
    expect(() => r.worker({ faults }).runTask([item], 1000)).toThrow(WorkerExit);
    expect(r.alerts()).toEqual([]);
    r.worker({ faults }).runTask([item], 1000);
    expect(r.alerts().map((a) => a.alert.title)).toEqual([expect.stringContaining('crashy')]);
  });

  it('a commit that fails after detection publishes none, and its alert does not leak into the next item', () => {
    const r = rig();
    let fail = true;
    const w = r.worker({
      writer: {
        afterCopy: () => {
          if (fail) throw new WorkerExit(70);
        },
      },
    });
    expect(() => w.runTask([r.batch(0, S1, -1, { logs: [exception('lost')] })], 1000)).toThrow(WorkerExit);
    expect(r.alerts()).toEqual([]);
    fail = false;
    // the same worker goes on with another session's batch: only that batch's alerts go out
    w.runTask([r.batch(0, null, -1), r.http('/logs', { entries: [log('quiet')] })], 1000);
    expect(r.alerts()).toEqual([]);
  });

  it('a commit that fails after detection: its retry raises the alert (the failed attempt marked nothing "seen")', () => {
    const r = rig();
    const item = r.batch(0, S1, -1, { logs: [exception('lost once'), exception('lost once')] });
    const dying = r.worker({
      writer: {
        afterCopy: () => {
          throw new WorkerExit(70);
        },
      },
    });
    expect(() => dying.runTask([item], 1000)).toThrow(WorkerExit);
    expect(r.alerts()).toEqual([]);
    // the replacement runs the same batch: its first sighting of the error is still new, and the
    // batch's second copy is not (one alert, not two)
    expect(r.worker().runTask([item], 1000).outcomes).toEqual([{ kind: 'applied', seq: 0, accepted: 2, rejected: 0 }]);
    expect(r.alerts().map((a) => a.alert.title)).toEqual([expect.stringContaining('lost once')]);
    // and once that commit marked it, a later batch of the same error is not new
    r.worker().runTask([r.batch(1, S1, 0, { logs: [exception('lost once')] })], 1000);
    expect(r.alerts()).toEqual([]);
  });

  it('duplicates and nacks raise nothing', () => {
    const r = rig();
    r.worker().runTask([r.batch(4, S1, 5, { logs: [exception('dup')] }), r.batch(9, S1, 5, { logs: [exception('gap')] })], 1000);
    expect(r.alerts()).toEqual([]);
  });
});
