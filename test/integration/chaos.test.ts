import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { expectBalanced, readAll } from '../helpers/accounting.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

let server: App;

beforeAll(async () => {
  server = await startTestServer({ pool: { threads: 2, min_threads: 2 } }, { faultInjection: true });
});
afterAll(async () => {
  await server.close();
});

describe('a worker that dies mid-batch', () => {
  it('is replaced, and the batch is retried once and stored exactly once', async () => {
    const p = await Producer.connect(server.port);
    await p.hello(`crash-once-${process.pid}`);
    const marker = `crash-once-${Date.now()}`;
    const ack = await p.sendUntilAcked(batch(0, { logs: [logRecord(1, { message: marker }), logRecord(2, { message: marker })] }, { page_url: 'gasoline:crash-once' }), 10_000);
    expect(ack).toMatchObject({ seq: 0, accepted: 2 });
    expect(readAll(server, 'logs').filter((r) => r.message === marker)).toHaveLength(2);
    expect(server.pool.crashes).toBeGreaterThanOrEqual(1);
    expect(server.pool.dispatcher.stats.retried).toBeGreaterThanOrEqual(1);
    p.close();
    await expectBalanced(server);
  });

  it('counts a batch that kills workers twice as poison, acks it, and keeps every other client working', async () => {
    const bad = await Producer.connect(server.port);
    const good = await Producer.connect(server.port);
    await bad.hello(`poison-${process.pid}`);
    await good.hello(`innocent-${process.pid}`);
    const marker = `innocent-${Date.now()}`;
    // Each batch is resent on a nack, as a producer must: under load one that waited behind its
    // session's previous batch longer than max_queue_delay_ms is refused overloaded (seen: batch 1
    // below, queued behind the duplicate while that one waited for the crashed worker's successor
    // to load). A producer that never resent would wait for ever, whatever the timeout.
    const [poisonAck] = await Promise.all([
      bad.sendUntilAcked(batch(0, { logs: [logRecord(1)] }, { page_url: 'gasoline:crash' }), 30_000),
      good.sendUntilAcked(batch(0, { logs: [logRecord(1, { message: marker })] }), 30_000),
    ]);
    expect((poisonAck.errors as Array<{ code: string }>)[0]!.code).toBe('poison');
    expect(server.pool.dispatcher.stats.poisoned).toBe(1);
    expect(server.stats.poisoned).toBe(1);
    // the resent poison batch is a duplicate now, and the session goes on
    bad.send(batch(0, { logs: [logRecord(1)] }, { page_url: 'gasoline:crash' }));
    const next = await bad.sendUntilAcked(batch(1, { logs: [logRecord(2)] }), 30_000);
    expect(next.accepted).toBe(1);
    expect(readAll(server, 'logs').filter((r) => r.message === marker)).toHaveLength(1);
    // the pool replaced the dead workers
    expect(server.pool.threads).toBe(2);
    bad.close();
    good.close();
    await expectBalanced(server);
  }, 100_000);
});

describe('routing while a crashed worker is replaced', () => {
  it("sends the retry to the live worker, not to the one whose thread is loading", async () => {
    const s = await startTestServer({ pool: { threads: 2, min_threads: 2 } }, { faultInjection: true });
    try {
      const p = await Producer.connect(s.port);
      await p.hello(`crash-route-${process.pid}`);
      // both workers idle (their start-up warm-up done), so the first task goes to the first one
      const before = await waitFor('idle workers', () => {
        const w = s.pool.workerStats();
        return w.every((x) => x.inflight === 0) ? w : null;
      });
      expect(before.map((w) => w.recovering)).toEqual([false, false]);
      const marker = `crash-route-${Date.now()}`;
      const ack = await p.sendUntilAcked(batch(0, { logs: [logRecord(1, { message: marker })] }, { page_url: 'gasoline:crash-once' }), 15_000);
      expect(ack).toMatchObject({ seq: 0, accepted: 1 });
      expect(s.pool.crashes).toBe(1);
      const after = s.pool.workerStats();
      // one task died on one worker, and its retry went to the other: before the fix both landed
      // on the first worker, the retry waiting for the replacement thread to load
      expect(after.map((w, i) => w.tasks - before[i]!.tasks)).toEqual([1, 1]);
      // the replacement loads and the worker takes work again
      await waitFor('the replacement thread loaded', () => s.pool.workerStats().every((w) => !w.recovering) || null);
      expect((s.health() as { pool: { workers: { each: unknown[] } } }).pool.workers.each).toHaveLength(2);
      p.close();
      await expectBalanced(s);
    } finally {
      await s.close();
    }
  }, 60_000);
});

