/**
 * The ingest core without threads (src/domain/ingest/core.ts): order and at-most-once per
 * (session, seq), what duplicates do to the accounting, and HTTP bodies — on the real store,
 * slots and detector (rig.ts). Crash replay is in replay.test.ts, the wire answers in answers.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { expectBalanced } from '../shm/balance.js';
import { S1, S2, log, rig } from './rig.js';

describe('ingest core: order per session', () => {
  it('applies applied + 1, stores it, and records the outcome in the item slot', () => {
    const r = rig();
    const item = r.batch(5, S1, 4, { logs: [log('a'), log('b')] });
    const { outcomes } = r.worker().runTask([item], 1000);
    expect(outcomes).toEqual([{ kind: 'applied', seq: 5, accepted: 2, rejected: 0 }]);
    expect(r.stored().map((x) => x.message)).toEqual(['a', 'b']);
    expect(r.slots.committed(item.slot)).toEqual({ kind: 'applied', seq: 5, accepted: 2, rejected: 0 });
    expect(r.counters()).toMatchObject({ received: 2, stored: 2, rejected: 0 });
    expectBalanced(r.reader);
  });

  it('without a baseline (applied -1) any seq starts the session; the next must follow it', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(10, S1, -1), r.batch(12, S1, -1), r.batch(11, S1, -1)], 1000);
    expect(outcomes.map((o) => [o.kind, 'seq' in o ? o.seq : undefined])).toEqual([
      ['applied', 10],
      ['nack', 12],
      ['applied', 11],
    ]);
    expect(outcomes[1]).toEqual({ kind: 'nack', seq: 12, code: 'out_of_order' });
  });

  it('a gap is nacked out_of_order, stores nothing, counts nothing and leaves the slot empty', () => {
    const r = rig();
    const item = r.batch(7, S1, 4);
    expect(r.worker().runTask([item], 1000).outcomes).toEqual([{ kind: 'nack', seq: 7, code: 'out_of_order' }]);
    expect(r.stored()).toEqual([]);
    expect(r.counters().received).toBe(0);
    expect(r.slots.committed(item.slot)).toBeUndefined();
    // the seq is noted as soon as it decoded (a poisoned frame can still be acknowledged)
    expect(r.slots.read(item.slot).seq).toBe(7);
  });

  it('several items of one session in one task apply in order, each against the one before', () => {
    const r = rig();
    const items = [5, 6, 7, 8].map((seq) => r.batch(seq, S1, 4, { logs: [log(`m${seq}`)] }));
    const { outcomes } = r.worker().runTask(items, 1000);
    expect(outcomes).toEqual([5, 6, 7, 8].map((seq) => ({ kind: 'applied', seq, accepted: 1, rejected: 0 })));
    expect(r.stored().map((x) => x.message)).toEqual(['m5', 'm6', 'm7', 'm8']);
  });

  it('sessions are ordered apart: one session\'s seqs do not move another\'s', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(1, S1, 0), r.batch(1, S2, 0), r.batch(2, S2, 0), r.batch(3, S1, 0)], 1000);
    expect(outcomes.map((o) => o.kind)).toEqual(['applied', 'applied', 'applied', 'nack']);
  });

  it('an item after a gap in the same task stays out of order (the gap does not become the baseline)', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(5, S1, 4), r.batch(7, S1, 4), r.batch(8, S1, 4), r.batch(6, S1, 4)], 1000);
    expect(outcomes.map((o) => o.kind)).toEqual(['applied', 'nack', 'nack', 'applied']);
    expect(r.stored().map((x) => x.message)).toEqual(['batch 5', 'batch 6']);
  });

  it('a batch before hello answers hello_required and stores nothing', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(0, null, -1)], 1000);
    expect(outcomes).toEqual([{ kind: 'rejected', code: 'hello_required', message: 'the first frame must be hello' }]);
    expect(r.counters().received).toBe(0);
  });

  it('hello opens a session; a second hello on the connection is duplicate_hello', () => {
    const r = rig();
    const hello = { t: 'hello', v: 1, client: 'extension', version: '1.0.0', session: 'tab-session-1', last_acked_seq: 3 };
    const { outcomes } = r.worker().runTask([r.frame(hello, null), r.frame(hello, S1)], 1000);
    expect(outcomes[0]).toEqual({ kind: 'hello', v: 1, client: 'extension', version: '1.0.0', session: S1, last_acked_seq: 3, token: undefined });
    expect(outcomes[1]).toMatchObject({ kind: 'rejected', code: 'duplicate_hello' });
  });

  it('ping, pong, result and undecodable frames pass through as their outcomes; nothing is stored', () => {
    const r = rig();
    const junk = r.frame({ t: 'batch', seq: 'x' }, S1);
    const { outcomes } = r.worker().runTask(
      [r.frame({ t: 'ping', ts: 5 }, S1), r.frame({ t: 'pong', ts: 6 }, S1), r.frame({ t: 'result', id: 'c1', status: 'complete', result: { a: 1 } }, S1), junk, r.frame({ t: 'welcome' }, S1)],
      1000,
    );
    expect(outcomes.slice(0, 3)).toEqual([
      { kind: 'ping', ts: 5 },
      { kind: 'pong', ts: 6 },
      { kind: 'result', id: 'c1', status: 'complete', result: { a: 1 }, error: undefined },
    ]);
    expect(outcomes[3]).toMatchObject({ kind: 'rejected', code: 'invalid_frame' });
    expect(outcomes[4]).toMatchObject({ kind: 'rejected', code: 'unknown_frame_type' });
    expect(r.counters().received).toBe(0);
  });

  it('a shed batch is nacked overloaded before anything else, even a duplicate', () => {
    const r = rig();
    const fresh = r.batch(5, S1, 4, undefined, true);
    const dup = r.batch(3, S1, 4, undefined, true);
    expect(r.worker().runTask([fresh, dup], 1000).outcomes).toEqual([
      { kind: 'nack', seq: 5, code: 'overloaded' },
      { kind: 'nack', seq: 3, code: 'overloaded' },
    ]);
    expect(r.slots.committed(fresh.slot)).toBeUndefined();
    expect(r.counters().received).toBe(0);
  });

  it('a shed batch is refused from its first bytes: what follows its seq is never decoded', () => {
    const r = rig();
    // t and seq lead, then a record array whose bytes are cut short: decoding would reject it
    const shed = r.batch(8, S1, 7, { logs: [log('cut')] }, true);
    const cut = { ...shed, len: shed.len - 5 };
    const kept = { ...r.batch(9, S1, 7, { logs: [log('cut')] }), len: cut.len };
    const { outcomes } = r.worker().runTask([cut], 1000);
    expect(outcomes).toEqual([{ kind: 'nack', seq: 8, code: 'overloaded' }]);
    expect(r.worker().runTask([kept], 1000).outcomes[0]).toMatchObject({ kind: 'rejected', code: 'msgpack_truncated' });
  });

  it('a shed batch whose seq is not up front is decoded and refused as before', () => {
    const r = rig();
    const item = r.frame({ logs: [log('late seq')], t: 'batch', seq: 12, sent_at: 1 }, S1, 11, true);
    expect(r.worker().runTask([item], 1000).outcomes).toEqual([{ kind: 'nack', seq: 12, code: 'overloaded' }]);
    expect(r.counters().received).toBe(0);
  });
});

describe('ingest core: duplicates', () => {
  it('seq at or below applied answers duplicate, stores nothing, and the accounting balances', () => {
    const r = rig();
    r.worker().runTask([r.batch(0, S1, -1, { logs: [log('first')] })], 1000);
    const dups = [r.batch(0, S1, 0, { logs: [log('again'), log('again')] }), r.batch(0, S1, 0, { logs: [log('x')], network: [{ ts: 1, method: 'GET', url: 'https://api.test/' }] })];
    const { outcomes } = r.worker().runTask(dups, 1000);
    expect(outcomes).toEqual([
      { kind: 'duplicate', seq: 0 },
      { kind: 'duplicate', seq: 0 },
    ]);
    expect(r.stored().map((x) => x.message)).toEqual(['first']);
    expect(r.stored('network')).toEqual([]);
    // received = stored + rejected + dropped 'duplicate', per kind
    expect(r.counters()).toMatchObject({ received: 4, stored: 1, rejected: 0, dropped: { duplicate: 3 } });
    expect(r.counters('network')).toMatchObject({ received: 1, stored: 0, dropped: { duplicate: 1 } });
    expect(r.slots.committed(dups[0]!.slot)).toEqual({ kind: 'duplicate', seq: 0 });
    expectBalanced(r.reader);
  });

  it('a duplicate within one task: the second copy of a seq applied by the task is a duplicate', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(5, S1, 4), r.batch(5, S1, 4), r.batch(4, S1, 4)], 1000);
    expect(outcomes).toEqual([
      { kind: 'applied', seq: 5, accepted: 1, rejected: 0 },
      { kind: 'duplicate', seq: 5 },
      { kind: 'duplicate', seq: 4 },
    ]);
    expect(r.stored()).toHaveLength(1);
    expect(r.counters()).toMatchObject({ received: 3, stored: 1, dropped: { duplicate: 2 } });
    expectBalanced(r.reader);
  });

  it('a duplicate with invalid records still counts them as duplicates, not rejected', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(2, S1, 3, { logs: [{ nope: true }, log('ok')] })], 1000);
    expect(outcomes).toEqual([{ kind: 'duplicate', seq: 2 }]);
    expect(r.counters()).toMatchObject({ received: 2, stored: 0, rejected: 0, dropped: { duplicate: 2 } });
    expectBalanced(r.reader);
  });

  it('rejected records and records too large for their ring balance too', () => {
    const r = rig({ ringBytes: { logs: 256 } });
    const { outcomes } = r.worker().runTask([r.batch(0, S1, -1, { logs: [log('small'), { level: 'log' }, log('x'.repeat(1000))] })], 1000);
    expect(outcomes[0]).toMatchObject({ kind: 'applied', seq: 0, accepted: 1, rejected: 2 });
    expect(r.counters()).toMatchObject({ received: 3, stored: 1, rejected: 1, dropped: { record_too_large: 1 } });
    expectBalanced(r.reader);
  });
});

describe('ingest core: HTTP bodies', () => {
  it('stores a body and answers its counts, per-record errors included', () => {
    const r = rig();
    const item = r.http('/logs', { entries: [log('a'), { level: 'nope' }, log('b')] });
    const { outcomes } = r.worker().runTask([item], 1000);
    expect(outcomes[0]).toMatchObject({ kind: 'stored', accepted: 2, rejected: 1, errors: [{ index: 1, kind: 'logs', code: 'invalid_record' }] });
    expect(r.stored().map((x) => x.message)).toEqual(['a', 'b']);
    expect(r.slots.committed(item.slot)).toEqual({ kind: 'stored', accepted: 2, rejected: 1 });
    expectBalanced(r.reader);
  });

  it('each route stores into its own kind', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.http('/network', { entries: [{ ts: 1, method: 'GET', url: 'https://api.test/x', status: 200, duration: 3 }] })], 1000);
    expect(outcomes[0]).toEqual({ kind: 'stored', accepted: 1, rejected: 0 });
    expect(r.stored('network')).toHaveLength(1);
    expect(r.stored('logs')).toHaveLength(0);
  });

  it('an empty array is stored as nothing, answered 0/0', () => {
    const r = rig();
    expect(r.worker().runTask([r.http('/logs', { entries: [] })], 1000).outcomes).toEqual([{ kind: 'stored', accepted: 0, rejected: 0 }]);
  });

  it('a body refused as a whole names why and stores and counts nothing', () => {
    const r = rig({ maxEventsPerBatch: 2 });
    const items = [r.http('/logs', '{"entries": ['), r.http('/logs', { logs: [] }), r.http('/logs', [log('a')]), r.http('/logs', { entries: [log('a'), log('b'), log('c')] }), r.http('/logs', '')];
    const { outcomes } = r.worker().runTask(items, 1000);
    expect(outcomes.map((o) => o.kind === 'rejected' && o.code)).toEqual(['bad_json', 'invalid_body', 'invalid_body', 'too_many_events', 'bad_json']);
    for (const it of items) expect(r.slots.committed(it.slot)).toBeUndefined();
    expect(r.counters().received).toBe(0);
  });

  it('a shed body is refused overloaded and never read', () => {
    const r = rig();
    const item = r.http('/logs', 'not even json', true);
    expect(r.worker().runTask([item], 1000).outcomes).toEqual([{ kind: 'refused', code: 'overloaded' }]);
    expect(r.slots.committed(item.slot)).toBeUndefined();
  });

  it('HTTP and WebSocket items of one task do not disturb each other', () => {
    const r = rig();
    const { outcomes } = r.worker().runTask([r.batch(1, S1, 0), r.http('/logs', { entries: [log('h')] }), r.batch(2, S1, 0)], 1000);
    expect(outcomes.map((o) => o.kind)).toEqual(['applied', 'stored', 'applied']);
    expect(r.stored().map((x) => x.message)).toEqual(['batch 1', 'h', 'batch 2']);
  });
});
