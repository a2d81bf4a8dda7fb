/**
 * The test producer's resend (Producer.sendUntilAcked), against a real server made to nack: with
 * max_queue_delay_ms at its floor, a window of big batches on one session is refused `overloaded`
 * and `out_of_order` behind it, and every batch must still be stored exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { expectBalanced, readAll } from '../helpers/accounting.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';

let server: App;

beforeAll(async () => {
  server = await startTestServer({ pool: { threads: 1, min_threads: 1, max_queue_delay_ms: 10 } });
});
afterAll(async () => {
  await server.close();
});

describe('Producer.sendUntilAcked', () => {
  it('a window refused overloaded / out_of_order is resent from resume_from_seq until acked, each record stored once', async () => {
    const p = await Producer.connect(server.port);
    await p.hello(`resend-${process.pid}`);
    const tag = `resend-${Date.now()}`;
    const n = 20; // ~1 MB in all: under the 2 MiB a session may have queued (the test server's input arena / 8)
    const frames = Array.from({ length: n }, (_, seq) => batch(seq, { logs: Array.from({ length: 200 }, (_, i) => logRecord(i, { level: 'info', message: `${tag} ${seq} ${i} ${'z'.repeat(200)}` })) }));
    const ack = await p.sendUntilAcked(frames, 30_000);
    expect(ack.seq).toBe(n - 1);
    const nacks = p.frames.filter((f) => f.t === 'nack');
    // the point of the test: the server did refuse some of them, and they came through anyway
    expect(nacks.length, 'the server nacked nothing: the test did not exercise the resend').toBeGreaterThan(0);
    const seen = new Map<string, number>();
    for (const r of readAll(server, 'logs')) {
      const m = String(r.message);
      if (m.startsWith(tag)) seen.set(m, (seen.get(m) ?? 0) + 1);
    }
    expect([...seen.values()].every((c) => c === 1)).toBe(true);
    // every batch arrived: its last record is still readable (the ring may have evicted older ones)
    expect(seen.has(`${tag} ${n - 1} 199 ${'z'.repeat(200)}`)).toBe(true);
    p.close();
    await expectBalanced(server);
  }, 40_000);
});
