import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pack } from 'msgpackr';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { kindId } from '../../src/domain/kinds.js';
import type { App } from '../../src/app.js';
import { expectBalanced, readAll } from '../helpers/accounting.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';

let server: App;
const open: Producer[] = [];

async function connect(opts: { origin?: string; host?: string } = {}): Promise<Producer> {
  const p = await Producer.connect(server.port, opts);
  open.push(p);
  return p;
}

let sessionCounter = 0;
const newSession = (): string => `s-${process.pid}-${++sessionCounter}`;

beforeAll(async () => {
  server = await startTestServer({ limits: { max_frame: 128 * 1024, hello_timeout_ms: 300 } });
});
afterEach(() => {
  for (const p of open.splice(0)) p.close();
});
afterAll(async () => {
  await server.close();
});

describe('handshake', () => {
  it('answers hello with welcome carrying the limits and resume point', async () => {
    const p = await connect();
    const w = await p.hello(newSession());
    expect(w).toMatchObject({ t: 'welcome', v: 1, max_frame: 128 * 1024, max_events_per_batch: 1000, resume_from_seq: 0 });
    expect(typeof w.server_version).toBe('string');
  });

  it('accepts our extension origin and refuses a foreign one with 403 before upgrading', async () => {
    const ok = await connect({ origin: EXTENSION_ORIGIN });
    await ok.hello(newSession());
    await expect(Producer.connect(server.port, { origin: 'https://evil.example' })).rejects.toMatchObject({ statusCode: 403 });
  });

  it('refuses a foreign Host with 403 (DNS rebinding)', async () => {
    await expect(Producer.connect(server.port, { host: `evil.example:${server.port}` })).rejects.toMatchObject({ statusCode: 403 });
    await expect(Producer.connect(server.port, { host: `127.0.0.1:${server.port + 1}` })).rejects.toMatchObject({ statusCode: 403 });
    expect(server.stats.refused.host_refused).toBeGreaterThanOrEqual(2);
  });

  it('closes 1008 when no hello arrives within the deadline', async () => {
    const p = await connect();
    await p.closed(3000);
    expect(p.closeCode).toBe(1008);
    expect(p.closeReason).toContain('hello_timeout');
  });

  it('closes 1008 when the first frame is a batch', async () => {
    const p = await connect();
    p.send(batch(1, { logs: [logRecord(1)] }));
    await p.closed();
    expect(p.closeCode).toBe(1008);
    expect(p.closeReason).toContain('hello_required');
  });

  it('closes 1003 on a text frame', async () => {
    const p = await connect();
    await p.hello(newSession());
    p.sendRaw('{"t":"hello"}', false);
    await p.closed();
    expect(p.closeCode).toBe(1003);
  });

  it('cuts an 8 MiB frame (above max_frame) at its header, counted as frame_too_large', async () => {
    // uWS refuses the announced length before buffering it and closes the socket without a
    // close frame (issue #18 item 5), so the client sees 1006; the server counts why.
    const before = server.stats.closes.frame_too_large ?? 0;
    const p = await connect();
    await p.hello(newSession());
    p.sendRaw(new Uint8Array(8 * 1024 * 1024));
    await p.closed();
    expect(p.closeCode).toBe(1006);
    expect(server.stats.closes.frame_too_large).toBe(before + 1);
  });

  it('still accepts a frame of exactly max_frame', async () => {
    const p = await connect();
    await p.hello(newSession());
    p.sendRaw(new Uint8Array(128 * 1024)); // zeros: a msgpack error frame comes back, not a close
    const f = await p.next((x) => x.t === 'error');
    expect(f.code).toBeDefined();
    expect(p.closeCode).toBeUndefined();
  });
});

describe('batches', () => {
  it('stores a batch and acknowledges it with counts', async () => {
    const p = await connect();
    await p.hello(newSession());
    const marker = `store-${Date.now()}`;
    p.send(batch(0, { logs: [logRecord(1, { message: marker }), logRecord(2, { message: marker })], network: [{ ts: new Date().toISOString(), method: 'GET', url: 'http://127.0.0.1:3000/api', status: 500, duration: 12 }] }));
    const ack = await p.ackFor(0);
    expect(ack).toMatchObject({ t: 'ack', seq: 0, accepted: 3, rejected: 0 });
    const logs = readAll(server, 'logs').filter((r) => r.message === marker);
    expect(logs).toHaveLength(2);
    expect(logs[0]!._tab).toBe(7);
    await expectBalanced(server);
  });

  it('applies a resent batch at most once and acknowledges it again', async () => {
    const session = newSession();
    const marker = `dup-${Date.now()}`;
    const p = await connect();
    await p.hello(session);
    p.send(batch(0, { logs: [logRecord(1, { message: marker })] }));
    await p.ackFor(0);
    // together, resent on a nack: batch 1 queued behind the duplicate is refused overloaded when
    // that one's task took over max_queue_delay_ms (a loaded machine)
    await p.sendUntilAcked([batch(0, { logs: [logRecord(1, { message: marker })] }), batch(1, { logs: [logRecord(2, { message: marker })] })]);
    p.close();
    // reconnect: the welcome says where to resume, and an old batch is still not stored twice
    const q = await connect();
    const w = await q.hello(session, { last_acked_seq: 0 });
    expect(w.resume_from_seq).toBe(2);
    q.send(batch(1, { logs: [logRecord(2, { message: marker })] }));
    const ack = await q.ackFor(1);
    expect(ack.accepted).toBe(0);
    expect(readAll(server, 'logs').filter((r) => r.message === marker)).toHaveLength(2);
    expect(server.reader.counters()[kindId('logs')]!.dropped.duplicate).toBeGreaterThanOrEqual(2);
    await expectBalanced(server);
  });

  it('nacks a batch that skips ahead of the next expected seq', async () => {
    const p = await connect();
    await p.hello(newSession());
    p.send(batch(0, { logs: [logRecord(1)] }));
    await p.ackFor(0);
    p.send(batch(5, { logs: [logRecord(2)] }));
    const nack = await p.next((f) => f.t === 'nack');
    expect(nack).toMatchObject({ seq: 5, code: 'out_of_order', resume_from_seq: 1 });
    expect(typeof nack.retry_after_ms).toBe('number');
    // told by the edge from the frame's first bytes, with no worker task (the worker's words)
    expect(server.stats.answeredAtEdge.out_of_order).toBeGreaterThanOrEqual(1);
    // the batch it was waiting for still goes through
    p.send(batch(1, { logs: [logRecord(3)] }));
    expect((await p.ackFor(1)).accepted).toBe(1);
  });

  it('rejects bad records by index and keeps the good ones of the same batch', async () => {
    const p = await connect();
    await p.hello(newSession());
    const marker = `mixed-${Date.now()}`;
    p.send(batch(0, { logs: [logRecord(1, { message: marker }), { ts: 'yesterday-ish', level: 'loud', message: 42 }, logRecord(3, { message: marker })] }));
    const ack = await p.ackFor(0);
    expect(ack).toMatchObject({ accepted: 2, rejected: 1 });
    const errors = ack.errors as Array<Record<string, unknown>>;
    expect(errors[0]).toMatchObject({ index: 1, kind: 'logs', code: 'invalid_record' });
    expect(readAll(server, 'logs').filter((r) => r.message === marker)).toHaveLength(2);
    await expectBalanced(server);
  });

  it('answers ping with pong', async () => {
    const p = await connect();
    await p.hello(newSession());
    p.send({ t: 'ping', ts: 12345 });
    expect(await p.next((f) => f.t === 'pong')).toMatchObject({ t: 'pong', ts: 12345 });
  });
});

describe('bad input: a specific error, counted, and the connection keeps working', () => {
  const cases: Array<[string, Uint8Array, string]> = [
    ['undecodable byte 0xc1', Uint8Array.of(0xc1), 'msgpack_invalid'],
    ['truncated msgpack', pack({ t: 'batch', seq: 1, logs: ['x'.repeat(50)] }).subarray(0, 20), 'msgpack_truncated'],
    ['top level not a map', pack([1, 2, 3]), 'not_a_map'],
    ['unknown t', pack({ t: 'bogus' }), 'unknown_frame_type'],
    ['array32 declaring 2^32-1 elements', Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff, 0x01), 'msgpack_bad_length'],
    ['72 KB of nested array16 headers', nestedArray16(72 * 1024), 'msgpack_bad_length'],
    ['100 000-deep nesting', deepNesting(100_000), 'msgpack_too_deep'],
    ['invalid UTF-8 in a string', invalidUtf8Frame(), 'invalid_utf8'],
  ];
  for (const [name, bytes, code] of cases) {
    it(name, async () => {
      const p = await connect();
      const other = await connect();
      await p.hello(newSession());
      await other.hello(newSession());
      const before = server.stats.frameErrors[code] ?? 0;
      const t0 = performance.now();
      p.sendRaw(bytes);
      const err = await p.next((f) => f.t === 'error');
      expect(err.code).toBe(code);
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(server.stats.frameErrors[code]).toBe(before + 1);
      // the same connection and another one still work
      p.send(batch(0, { logs: [logRecord(1)] }));
      other.send(batch(0, { logs: [logRecord(2)] }));
      await p.ackFor(0);
      await other.ackFor(0);
      await expectBalanced(server);
    });
  }

  it('survives 500 connections opened at once', async () => {
    // A server of its own with the product's hello deadline (5 s): the burst and the server share
    // this process's event loop, and a socket's hello can only be sent once the loop has got round
    // to its open, after up to 500 upgrades (measured here: 100-150 ms late on a quiet machine, so
    // this file's 300 ms deadline cut sockets when the machine was busy: hello_timeout, 1008).
    const burst = await startTestServer({ limits: { max_frame: 128 * 1024 } });
    try {
      const opened = await Promise.all(
        Array.from({ length: 500 }, async (_, i) => {
          const p = await Producer.connect(burst.port);
          open.push(p);
          return { p, welcome: await p.hello(`many-${process.pid}-${i}`) };
        }),
      );
      const ps = opened.map((o) => o.p);
      const welcomes = opened.map((o) => o.welcome);
      expect(welcomes.every((w) => w.t === 'welcome')).toBe(true);
      // 50 sessions at once: the pool's queue can grow older than max_queue_delay_ms, and a
      // batch that arrives then is refused overloaded and resent
      await Promise.all(ps.slice(0, 50).map((p, i) => p.sendUntilAcked(batch(0, { logs: [logRecord(i)] }))));
      for (const p of ps) p.close();
      const h = burst.health() as { status: string };
      expect(h.status).toBe('ok');
      await expectBalanced(burst);
    } finally {
      await burst.close();
    }
  }, 60_000);
});

function nestedArray16(bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i + 3 <= bytes; i += 3) {
    out[i] = 0xdc;
    out[i + 1] = 0xff;
    out[i + 2] = 0xff;
  }
  return out;
}

function deepNesting(depth: number): Uint8Array {
  const out = new Uint8Array(depth + 1);
  out.fill(0x91, 0, depth); // fixarray of 1, nested
  out[depth] = 0xc0;
  return out;
}

function invalidUtf8Frame(): Uint8Array {
  const head = pack({ t: 'batch', seq: 0, sent_at: 1, logs: [{ ts: 1, level: 'log', type: 'console', message: 'AAAA' }] });
  const bytes = new Uint8Array(head);
  const idx = Buffer.from(bytes).indexOf(Buffer.from('AAAA'));
  bytes[idx] = 0xff;
  bytes[idx + 1] = 0xfe;
  return bytes;
}
