import { pack, Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeFrame } from '../../../src/domain/wire/decode.js';
import { cut, LIMITS } from '../../../src/domain/wire/normalize.js';
import { processBatchFrame, processHttpBody } from '../../../src/domain/ingest/process.js';
import { headerStripRedactor, type Redactor } from '../../../src/domain/ingest/redactor.js';
import { kindId } from '../../../src/domain/kinds.js';
import type { BatchFrame } from '../../../src/domain/wire/schemas.js';

const limits = { maxDepth: 32, maxElements: 500_000 };
const ctx = { recvTime: 1000, redactor: headerStripRedactor, limits: { max_events_per_batch: 1000, max_errors_per_ack: 5 } };

function batchOf(extra: Record<string, unknown>): BatchFrame {
  const d = decodeFrame(pack({ t: 'batch', seq: 1, sent_at: 1, tab_id: 4, page_url: 'http://app.test/', ...extra }), limits);
  if (!d.ok || d.frame.t !== 'batch') throw new Error(JSON.stringify(d));
  return d.frame;
}

const payload = (u: Uint8Array) => JSON.parse(Buffer.from(u).toString('utf8')) as Record<string, any>;

describe('decodeFrame', () => {
  it('decodes plain maps and msgpackr records, from a SharedArrayBuffer view too', () => {
    const frame = { t: 'batch', seq: 9, sent_at: 5, logs: [{ ts: 1, level: 'log', type: 'console', message: 'm' }] };
    for (const bytes of [pack(frame), new Packr({ useRecords: true }).pack(frame)]) {
      const sab = new Uint8Array(new SharedArrayBuffer(bytes.length + 8));
      sab.set(bytes, 8);
      const d = decodeFrame(sab.subarray(8), limits);
      expect(d).toMatchObject({ ok: true, frame: { t: 'batch', seq: 9 } });
    }
  });

  it('decodes the same frame from a SharedArrayBuffer at every offset modulo 8, small and large (the copy out is aligned to it)', () => {
    const big = { t: 'batch', seq: 3, sent_at: 5, logs: Array.from({ length: 60 }, (_, i) => ({ ts: i + 1, level: 'log', type: 'console', message: `m${i} ${'é'.repeat(i)}${'x'.repeat(100)}` })) };
    const small = { t: 'batch', seq: 4, sent_at: 5, logs: [{ ts: 1, level: 'log', type: 'console', message: 'm' }] };
    for (const bytes of [new Packr({ useRecords: true }).pack(big), new Packr({ useRecords: true }).pack(small)]) {
      const want = decodeFrame(bytes, limits);
      expect(want.ok).toBe(true);
      for (let off = 0; off < 9; off++) {
        const sab = new Uint8Array(new SharedArrayBuffer(bytes.length + 16));
        sab.set(bytes, off);
        expect(decodeFrame(sab.subarray(off, off + bytes.length), limits), `offset ${off}`).toEqual(want);
      }
    }
  });

  it('keeps what one frame decoded intact when the next frame is copied out of the arena (bin values are copies)', () => {
    const packr = new Packr({ useRecords: true });
    const shared = (bytes: Uint8Array): Uint8Array => {
      const sab = new Uint8Array(new SharedArrayBuffer(bytes.length + 3));
      sab.set(bytes, 3);
      return sab.subarray(3);
    };
    const bin = Uint8Array.from({ length: 64 }, (_, i) => i);
    const a = decodeFrame(shared(packr.pack({ t: 'batch', seq: 1, sent_at: 5, logs: [{ ts: 1, level: 'log', type: 'console', message: 'a'.repeat(40), args: [bin] }] })), limits);
    const b = decodeFrame(shared(packr.pack({ t: 'batch', seq: 2, sent_at: 5, logs: [{ ts: 2, level: 'log', type: 'console', message: 'b'.repeat(40), args: [new Uint8Array(64).fill(255)] }] })), limits);
    if (!a.ok || a.frame.t !== 'batch' || !b.ok || b.frame.t !== 'batch') throw new Error('did not decode');
    expect(a.frame.logs![0]).toMatchObject({ ts: 1, message: 'a'.repeat(40) });
    expect([...(a.frame.logs![0] as { args: Uint8Array[] }).args[0]!]).toEqual([...bin]);
    expect([...(b.frame.logs![0] as { args: Uint8Array[] }).args[0]!]).toEqual(new Array(64).fill(255));
  });

  it('names what is wrong: not a map, unknown t, invalid frame fields', () => {
    expect(decodeFrame(pack('hi'), limits)).toMatchObject({ ok: false, code: 'not_a_map' });
    expect(decodeFrame(pack({ t: 'nope' }), limits)).toMatchObject({ ok: false, code: 'unknown_frame_type' });
    const bad = decodeFrame(pack({ t: 'hello', v: 1, client: 'x', version: '1' }), limits);
    expect(bad).toMatchObject({ ok: false, code: 'invalid_frame' });
    expect((bad as { message: string }).message).toContain('session');
  });
});

describe('processBatchFrame', () => {
  it('accepts both ts forms, fills page urls, keeps tab, rejects bad records by index', () => {
    const out = processBatchFrame(
      batchOf({
        logs: [
          { ts: 1700000000000, level: 'error', type: 'console', message: 'a' },
          { ts: '2026-11-22T10:00:00.000Z', level: 'warn', type: 'console', message: 'b' },
          { ts: 'not a date', level: 'warn', type: 'console', message: 'c' },
          { ts: 1, level: 'LOUD', type: 'console', message: 'd' },
        ],
        network: [{ ts: 5, method: 'GET', url: 'http://api.test/x', status: 500, duration: 3 }],
      }),
      ctx,
    );
    expect(out.records).toHaveLength(3);
    expect(out.received[kindId('logs')]).toBe(4);
    expect(out.rejected[kindId('logs')]).toBe(2);
    expect(out.errors.map((e) => [e.index, e.kind, e.code])).toEqual([
      [2, 'logs', 'invalid_record'],
      [3, 'logs', 'invalid_record'],
    ]);
    const [a, b, n] = out.records;
    expect(a!.clientTime).toBe(1700000000000);
    expect(b!.clientTime).toBe(Date.parse('2026-11-22T10:00:00.000Z'));
    expect(payload(b!.payload).ts).toBe(b!.clientTime);
    expect(payload(a!.payload).url).toBe('http://app.test/');
    expect(payload(n!.payload).page_url).toBe('http://app.test/');
    expect(a!.tab).toBe(4);
  });

  it('truncates after redaction and marks what it cut, never splitting a surrogate pair', () => {
    const emoji = '😀'.repeat(LIMITS.ws_data); // 2 code units each
    const out = processBatchFrame(
      batchOf({
        ws_events: [{ ts: 1, event: 'message', id: 'c', data: emoji }],
        network_bodies: [{ ts: 1, method: 'POST', url: 'http://x.test', status: 200, response_body: 'r'.repeat(20_000), request_headers: { Authorization: 'Bearer abc', 'X-Custom-Token': 't', Accept: 'json' } }],
        logs: [{ ts: 1, level: 'log', type: 'console', message: 'm', args: ['s'.repeat(20_000), { big: 'o'.repeat(20_000) }, 3] }],
      }),
      ctx,
    );
    const ws = payload(out.records.find((r) => r.kind === kindId('ws_events'))!.payload);
    expect(ws.truncated).toBe(true);
    expect(ws.data.length).toBeLessThanOrEqual(LIMITS.ws_data);
    expect(ws.data.endsWith('😀')).toBe(true);
    const body = payload(out.records.find((r) => r.kind === kindId('network_bodies'))!.payload);
    expect(body.response_truncated).toBe(true);
    expect(body.response_body).toHaveLength(LIMITS.response_body);
    expect(body.request_headers).toEqual({ Authorization: '[REDACTED:header]', 'X-Custom-Token': '[REDACTED:header]', Accept: 'json' });
    const log = payload(out.records.find((r) => r.kind === kindId('logs'))!.payload);
    expect(log.args_truncated).toBe(true);
    expect(log.args[0]).toHaveLength(LIMITS.arg);
    expect(log.args[2]).toBe(3);
    expect(cut('a😀', 2)).toBe('a');
  });

  it('fails closed when redaction throws: free text dropped, metadata kept, counted', () => {
    const broken: Redactor = { redactRecord: () => { throw new Error('boom'); } };
    const out = processBatchFrame(batchOf({ logs: [{ ts: 1, level: 'error', type: 'console', message: 'password=hunter2', stack: 's' }] }), { ...ctx, redactor: broken });
    const rec = payload(out.records[0]!.payload);
    expect(rec.message).toBeUndefined();
    expect(rec.stack).toBeUndefined();
    expect(rec.level).toBe('error');
    expect(rec.redaction_failed).toBe(true);
    expect(out.redactionFailed[kindId('logs')]).toBe(1);
  });

  it('refuses a batch above max_events_per_batch as a whole, acknowledged with a reason', () => {
    const logs = Array.from({ length: 3 }, () => ({ ts: 1, level: 'log', type: 'console', message: 'x' }));
    const out = processBatchFrame(batchOf({ logs }), { ...ctx, limits: { max_events_per_batch: 2, max_errors_per_ack: 5 } });
    expect(out.records).toHaveLength(0);
    expect(out.rejected[kindId('logs')]).toBe(3);
    expect(out.errors[0]!.code).toBe('too_many_events');
  });

  it('caps the errors it reports but counts every rejection', () => {
    const logs = Array.from({ length: 20 }, () => ({ ts: 1, level: 'nope' }));
    const out = processBatchFrame(batchOf({ logs }), ctx);
    expect(out.errors).toHaveLength(5);
    expect(out.rejected[kindId('logs')]).toBe(20);
  });
});

describe('processHttpBody', () => {
  const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
  it('maps each route to its body key and kind', () => {
    const r = processHttpBody('/websocket-events', enc({ events: [{ ts: 1, event: 'open', id: 'a' }] }), ctx);
    expect(r.ok && r.records[0]!.kind).toBe(kindId('ws_events'));
  });
  it('says bad_json and invalid_body', () => {
    expect(processHttpBody('/logs', enc('{"entries": ['), ctx)).toMatchObject({ ok: false, code: 'bad_json' });
    expect(processHttpBody('/logs', enc({ logs: [] }), ctx)).toMatchObject({ ok: false, code: 'invalid_body' });
  });
});
