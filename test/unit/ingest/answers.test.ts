/**
 * What each outcome of the core becomes on the wire: wsAnswer (transport/ws.ts) and httpAnswer
 * (transport/http.ts), each the one mapping for its transport, against docs/PROTOCOL.md and the
 * error catalog. The outcomes come from the core run on the real parts wherever the core makes them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TaskItem } from '../../../src/domain/ingest/item.js';
import type { ItemOutcome } from '../../../src/domain/ingest/outcome.js';
import { ERRORS, type ErrorCode } from '../../../src/errors.js';
import { httpAnswer } from '../../../src/transport/http.js';
import { wsAnswer } from '../../../src/transport/ws.js';
import { S1, log, rig, type Rig } from './rig.js';

const AT = { retryAfterMs: 250, resumeFrom: 5 };
const CODES = Object.keys(ERRORS) as ErrorCode[];

/** The one outcome of one item run through a fresh core. */
function outcomeOf(make: (r: Rig) => TaskItem): ItemOutcome {
  const r = rig({ ringBytes: { logs: 256 } });
  return r.worker().runTask([make(r)], 1000).outcomes[0]!;
}

/** The backticked field names of a frame's row in PROTOCOL.md's frame table. */
function documentedFields(frame: string): string[] {
  const doc = readFileSync(new URL('../../../docs/PROTOCOL.md', import.meta.url), 'utf8');
  const row = doc.split('\n').find((l) => l.startsWith(`| \`${frame}\` |`));
  if (!row) throw new Error(`no row for ${frame} in PROTOCOL.md`);
  const fields = row.split('|')[3]!;
  // top-level fields only: drop what parentheses say about them
  const top = fields.replace(/\([^()]*(\([^()]*\)[^()]*)*\)/g, '');
  return [...top.matchAll(/`([a-z_]+)\??`/g)].map((m) => m[1]!);
}

describe('wsAnswer: what the producer is told', () => {
  it('applied → ack with the counts and the per-record errors; the fields are the documented ones', () => {
    const o = outcomeOf((r) => r.batch(5, S1, 4, { logs: [log('a'), { level: 'x' }] }));
    const a = wsAnswer(o, AT);
    expect(a).toMatchObject({ t: 'ack', seq: 5, accepted: 1, rejected: 1, errors: [{ index: 1, kind: 'logs', code: 'invalid_record' }] });
    expect(Object.keys(a).filter((k) => k !== 't').sort()).toEqual(documentedFields('ack').sort());
  });

  it('applied with records too large for their ring → ack counting them rejected, no errors field', () => {
    const o = outcomeOf((r) => r.batch(0, S1, -1, { logs: [log('ok'), log('x'.repeat(1000))] }));
    expect(wsAnswer(o, AT)).toEqual({ t: 'ack', seq: 0, accepted: 1, rejected: 1 });
  });

  it('duplicate → ack of its seq with nothing counted', () => {
    const o = outcomeOf((r) => r.batch(2, S1, 4));
    expect(wsAnswer(o, AT)).toEqual({ t: 'ack', seq: 2, accepted: 0, rejected: 0 });
  });

  it('out of order → nack with resume_from_seq and retry_after_ms; the fields are the documented ones', () => {
    const o = outcomeOf((r) => r.batch(9, S1, 4));
    const a = wsAnswer(o, AT);
    expect(a).toEqual({ t: 'nack', seq: 9, code: 'out_of_order', retry_after_ms: 250, resume_from_seq: 5 });
    expect(Object.keys(a).filter((k) => k !== 't').sort()).toEqual(documentedFields('nack').sort());
  });

  it('shed → nack overloaded', () => {
    const o = outcomeOf((r) => r.batch(5, S1, 4, undefined, true));
    expect(wsAnswer(o, AT)).toEqual({ t: 'nack', seq: 5, code: 'overloaded', retry_after_ms: 250, resume_from_seq: 5 });
  });

  it('hello_required closes (1008 in the catalog); duplicate_hello and bad bytes do not', () => {
    expect(wsAnswer(outcomeOf((r) => r.batch(0, null, -1)), AT)).toMatchObject({ t: 'error', code: 'hello_required', close: true });
    const hello = { t: 'hello', v: 1, client: 'sdk', version: '1', session: 's' };
    expect(wsAnswer(outcomeOf((r) => r.frame(hello, S1)), AT)).toMatchObject({ t: 'error', code: 'duplicate_hello', close: false });
    expect(wsAnswer(outcomeOf((r) => r.frame({ t: 'batch', seq: -1, sent_at: 0 }, S1)), AT)).toMatchObject({ t: 'error', code: 'invalid_frame', close: false });
  });

  it('every catalog code of a rejected frame closes exactly when the catalog gives it a close code', () => {
    for (const code of CODES) {
      if (code === 'poison') continue;
      const a = wsAnswer({ kind: 'rejected', code, message: 'm', seq: 3 }, AT);
      expect(a, code).toEqual({ t: 'error', code, message: 'm', seq: 3, close: ERRORS[code].wsClose !== 0 });
    }
  });

  it('a poisoned batch is acknowledged with a poison error, so the producer stops resending it', () => {
    expect(wsAnswer({ kind: 'rejected', code: 'poison', message: 'crashed twice', seq: 8 }, AT)).toEqual({
      t: 'ack',
      seq: 8,
      accepted: 0,
      rejected: 0,
      errors: [{ index: -1, kind: 'batch', code: 'poison', message: 'crashed twice' }],
    });
    // without a decoded seq there is nothing to acknowledge
    expect(wsAnswer({ kind: 'rejected', code: 'poison', message: 'p' }, AT)).toMatchObject({ t: 'error', code: 'poison' });
    expect(wsAnswer({ kind: 'rejected', code: 'poison', message: 'p', seq: -1 }, AT)).toMatchObject({ t: 'error', code: 'poison' });
  });

  it('ping → pong; pong → nothing; result → handed on; hello reaching the mapping → duplicate_hello', () => {
    expect(wsAnswer(outcomeOf((r) => r.frame({ t: 'ping', ts: 42 }, S1)), AT)).toEqual({ t: 'pong', ts: 42 });
    expect(wsAnswer(outcomeOf((r) => r.frame({ t: 'pong', ts: 1 }, S1)), AT)).toEqual({ t: 'none' });
    const result = outcomeOf((r) => r.frame({ t: 'result', id: 'c', status: 'error', error: 'x: y' }, S1));
    expect(wsAnswer(result, AT)).toEqual({ t: 'result', result });
    const hello = outcomeOf((r) => r.frame({ t: 'hello', v: 1, client: 'sdk', version: '1', session: 's' }, null));
    expect(wsAnswer(hello, AT)).toMatchObject({ t: 'error', code: 'duplicate_hello', close: false });
  });

  it('HTTP outcomes on a WebSocket item are reported as a bug, never sent', () => {
    expect(wsAnswer({ kind: 'stored', accepted: 1, rejected: 0 }, AT)).toMatchObject({ t: 'none', bug: expect.stringContaining('stored') });
    expect(wsAnswer({ kind: 'refused', code: 'overloaded' }, AT)).toMatchObject({ t: 'none', bug: expect.stringContaining('refused') });
  });
});

describe('httpAnswer: status and body', () => {
  it('stored → 200 {received = accepted + rejected, accepted, rejected, errors}', () => {
    const o = outcomeOf((r) => r.http('/logs', { entries: [log('a'), log('b'), { ts: 'never' }] }));
    const a = httpAnswer(o, 250);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ received: 3, accepted: 2, rejected: 1, errors: [{ index: 2, code: 'invalid_record' }] });
  });

  it('records too large for their ring count as rejected in received', () => {
    const o = outcomeOf((r) => r.http('/logs', { entries: [log('a'), log('y'.repeat(1000))] }));
    expect(httpAnswer(o, 250)).toEqual({ status: 200, body: { received: 2, accepted: 1, rejected: 1 } });
  });

  it('every record refused → 400 with the same body; an empty array → 200 with zeros', () => {
    const all = outcomeOf((r) => r.http('/logs', { entries: [{ x: 1 }, { y: 2 }] }));
    expect(httpAnswer(all, 250)).toMatchObject({ status: ERRORS.invalid_record.http, body: { received: 2, accepted: 0, rejected: 2 } });
    expect(httpAnswer(all, 250).status).toBe(400);
    expect(httpAnswer(outcomeOf((r) => r.http('/logs', { entries: [] })), 250)).toEqual({ status: 200, body: { received: 0, accepted: 0, rejected: 0 } });
  });

  it('a body refused as a whole → 400 {error: code, message} with the catalog code', () => {
    const cases: Array<[unknown, ErrorCode]> = [
      ['{"entries":', 'bad_json'],
      [{ entries: 'nope' }, 'invalid_body'],
      [{ entries: Array.from({ length: 1001 }, () => log('m')) }, 'too_many_events'],
    ];
    for (const [body, code] of cases) {
      const a = httpAnswer(outcomeOf((r) => r.http('/logs', body)), 250);
      expect(a.status, code).toBe(400);
      expect(a.body).toEqual({ error: code, message: expect.any(String) });
    }
  });

  it('shed → 503 overloaded with retry_after_ms in the body', () => {
    const o = outcomeOf((r) => r.http('/logs', { entries: [log('a')] }, true));
    expect(httpAnswer(o, 1500)).toEqual({ status: 503, body: { error: 'overloaded', message: ERRORS.overloaded.summary, retry_after_ms: 1500 } });
  });

  it('every catalog code of a rejected body answers the catalog status', () => {
    for (const code of CODES) expect(httpAnswer({ kind: 'rejected', code, message: 'm' }, 250), code).toEqual({ status: ERRORS[code].http, body: { error: code, message: 'm' } });
  });

  it('WebSocket outcomes on an HTTP body → 500 internal', () => {
    for (const o of [{ kind: 'applied', seq: 1, accepted: 1, rejected: 0 }, { kind: 'duplicate', seq: 1 }, { kind: 'nack', seq: 1, code: 'out_of_order' }, { kind: 'ping', ts: 1 }] as ItemOutcome[]) {
      expect(httpAnswer(o, 250)).toMatchObject({ status: 500, body: { error: 'internal' } });
    }
  });
});
