/**
 * The express board end to end: while another producer keeps both workers busy, a quiet producer's
 * frames are taken between items, acknowledged in order and stored exactly once — also when the
 * worker that took one dies in the middle of it.
 */
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

/**
 * Keeps up to 16 batches of 200 records unacknowledged until stopped, going back to
 * `resume_from_seq` on a nack as PROTOCOL asks; stop() reports the nack codes it met.
 */
async function busy(session: string): Promise<{ acked: () => number; stop: () => Promise<string[]> }> {
  const p = await Producer.connect(server.port);
  await p.hello(session);
  let seq = 0;
  let acked = -1;
  let running = true;
  const nacks: string[] = [];
  const records = Array.from({ length: 200 }, (_, i) => logRecord(i, { level: 'info', message: `busy ${i} ${'y'.repeat(80)}` }));
  const loop = (async () => {
    let seen = 0;
    while (running || acked < seq - 1) {
      while (running && seq - acked <= 16) p.send(batch(seq++, { logs: records }));
      const f = await p.next((x, i = p.frames.indexOf(x)) => i >= seen && ((x.t === 'ack' && (x.seq as number) > acked) || x.t === 'nack'), 10_000);
      seen = p.frames.indexOf(f) + 1;
      if (f.t === 'ack') acked = f.seq as number;
      else {
        nacks.push(String(f.code));
        await sleep(Number(f.retry_after_ms ?? 50)); // the backoff the protocol asks of a refused producer
        seq = f.resume_from_seq as number;
        acked = seq - 1;
      }
    }
    p.close();
  })();
  return {
    acked: () => acked,
    stop: async () => {
      running = false;
      await loop;
      return nacks;
    },
  };
}

const net = (url: string) => ({ ts: Date.now(), method: 'GET', url, status: 200, duration: 4 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('express board under load', () => {
  it('takes a quiet producer’s frames between busy workers’ items; acks in order, stores each once', async () => {
    const load = await busy(`busy-${process.pid}`);
    await waitFor('the busy producer under way', () => load.acked() >= 16);
    const quiet = await Producer.connect(server.port);
    await quiet.hello(`quiet-${process.pid}`);
    const marker = `https://quiet.test/${Date.now()}`;
    const before = { ...server.pool.express!.stats };
    for (let i = 0; i < 30; i++) {
      // resent on a nack: the busy producer can keep the pool's queue over max_queue_delay_ms
      const ack = await quiet.sendUntilAcked(batch(i, { network: [net(`${marker}/${i}`)] }), 10_000);
      expect(ack).toMatchObject({ seq: i, accepted: 1, rejected: 0 });
      await sleep(10); // pacing: a quiet producer sends now and then, between the busy one's batches
    }
    const after = server.pool.express!.stats;
    await load.stop();
    expect(after.posted - before.posted).toBeGreaterThanOrEqual(30);
    expect(after.taken_early - before.taken_early).toBeGreaterThanOrEqual(1);
    // what /health says is what the pool counted
    const health = (await (await fetch(`http://127.0.0.1:${server.port}/health`)).json()) as { pool: { express: Record<string, number> } };
    expect(Object.keys(health.pool.express).sort()).toEqual(['board_full', 'declined', 'orphaned', 'posted', 'taken_early']);
    expect(health.pool.express.taken_early).toBeGreaterThanOrEqual(after.taken_early);
    // the busy producer fills the log ring; the quiet one's requests have a ring to themselves
    const stored = readAll(server, 'network').filter((r) => String(r.url).startsWith(marker));
    expect(stored.map((r) => r.url).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `${marker}/${i}`).sort());
    quiet.close();
    await expectBalanced(server);
  }, 60_000);

  it('a frame whose worker dies in the middle of it is stored once and acknowledged', async () => {
    const load = await busy(`busy2-${process.pid}`);
    await waitFor('the busy producer under way', () => load.acked() >= 16);
    const quiet = await Producer.connect(server.port);
    await quiet.hello(`crash-${process.pid}`);
    const marker = `https://crash.test/${Date.now()}`;
    const orphaned = server.pool.express!.stats.orphaned;
    // resent on a nack: under the busy load, and while the dead worker's successor loads
    expect(await quiet.sendUntilAcked(batch(0, { network: [net(marker)] }, { page_url: 'gasoline:crash-once' }), 15_000)).toMatchObject({ seq: 0, accepted: 1 });
    expect(await quiet.sendUntilAcked(batch(1, { network: [net(marker)] }), 15_000)).toMatchObject({ seq: 1, accepted: 1 });
    const nacks = await load.stop();
    // the busy producer's batches that shared the dead worker's task were retried in order
    expect(nacks.filter((c) => c === 'out_of_order')).toEqual([]);
    expect(readAll(server, 'network').filter((r) => r.url === marker)).toHaveLength(2);
    expect(server.pool.crashes).toBeGreaterThanOrEqual(1);
    // whoever held it when the thread died, taker or owner, its entry was orphaned, not waited on
    expect(server.pool.express!.stats.orphaned).toBeGreaterThan(orphaned);
    expect(server.pool.threads).toBe(2);
    quiet.close();
    await expectBalanced(server);
  }, 60_000);
});
