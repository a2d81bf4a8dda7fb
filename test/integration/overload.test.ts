import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { expectBalanced, readAll } from '../helpers/accounting.js';
import { batch, logRecord, Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';

let server: App;

beforeAll(async () => {
  server = await startTestServer({
    rings: { logs: 16 * 1024 * 1024 },
    pool: { threads: 1, concurrent_tasks_per_worker: 1, max_items_per_task: 1, shed_queue_bytes: 64 * 1024, retry_after_ms: 20 },
  });
});
afterAll(async () => {
  await server.close();
});

function bigBatch(seq: number, marker: string): Record<string, unknown> {
  return batch(seq, { logs: Array.from({ length: 300 }, (_, i) => logRecord(i, { message: `${marker} ${i} ${'x'.repeat(150)}` })) });
}

describe('admission control', () => {
  it('nacks with retry_after_ms under a flood, and every batch lands exactly once after resending', async () => {
    const producers = await Promise.all(Array.from({ length: 30 }, () => Producer.connect(server.port)));
    await Promise.all(producers.map((p, i) => p.hello(`flood-${process.pid}-${i}`)));
    const marker = `flood-${Date.now()}`;
    for (const p of producers) p.send(bigBatch(0, marker));
    let nacks = 0;
    await Promise.all(
      producers.map(async (p) => {
        for (let attempt = 0; attempt < 200; attempt++) {
          const f: ServerFrame = await p.next((x) => (x.t === 'ack' && x.seq === 0) || (x.t === 'nack' && !(x as { seen?: boolean }).seen), 20_000);
          if (f.t === 'ack') return;
          (f as { seen?: boolean }).seen = true;
          nacks++;
          expect(f).toMatchObject({ seq: 0, code: 'overloaded' });
          expect(f.retry_after_ms).toBe(20);
          await new Promise((r) => setTimeout(r, f.retry_after_ms as number)); // the backoff the nack asks for
          p.send(bigBatch(0, marker));
        }
        throw new Error('never acknowledged');
      }),
    );
    expect(nacks).toBeGreaterThan(0);
    expect(server.stats.nacks.overloaded).toBe(nacks);
    // plain batches: the edge read each refused one's seq itself, no worker task spent on them
    expect(server.stats.answeredAtEdge.overloaded).toBeGreaterThan(0);
    expect(server.stats.answeredAtEdge.overloaded).toBeLessThanOrEqual(nacks);
    expect(readAll(server, 'logs').filter((r) => String(r.message).startsWith(marker))).toHaveLength(30 * 300);
    for (const p of producers) p.close();
    await expectBalanced(server);
  }, 60_000);

  it('answers 503 with Retry-After on HTTP when overloaded', async () => {
    const body = JSON.stringify({ entries: Array.from({ length: 300 }, (_, i) => logRecord(i, { message: 'y'.repeat(200) })) });
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () =>
        new Promise<{ status: number; retry: string | undefined }>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/logs', headers: { 'content-type': 'application/json' } }, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, retry: res.headers['retry-after'] as string | undefined }));
          });
          req.on('error', reject);
          req.end(body);
        }),
      ),
    );
    const refused = statuses.filter((s) => s.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((s) => s.retry === '1')).toBe(true);
    expect(statuses.every((s) => s.status === 200 || s.status === 503)).toBe(true);
    await expectBalanced(server);
  }, 30_000);
});
