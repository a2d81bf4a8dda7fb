/**
 * An idle daemon wakes for nothing (issue 17: the cost of an idle hour). The periodic checks that
 * watch ingest — the pool's scale check, main's threshold check — stop once the pool is quiet and
 * has nothing left to do (after its recycle), and the next batch wakes them: the pool then grows,
 * shrinks and recycles as before. Real app, real workers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

let server: App | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type PoolHealth = { checks: Record<string, number | null>; workers: { recycles: number } };
const pool = (s: App) => (s.health() as { pool: PoolHealth }).pool;

async function sendOne(port: number, session: string, tag: string): Promise<void> {
  const p = await Producer.connect(port);
  await p.hello(session);
  expect(await p.sendUntilAcked([batch(0, { logs: Array.from({ length: 20 }, (_, i) => logRecord(i, { message: `${tag} ${i}` })) })], 15_000)).toMatchObject({ seq: 0 });
  p.close();
}

describe('an idle daemon runs no periodic check', () => {
  it('none before the first batch; the batch wakes them; they stop after the recycle; the next batch wakes them again', async () => {
    server = await startTestServer({ pool: { recycle_after_idle_ms: 300, scale_check_ms: 20 } });
    const s = server;
    expect(pool(s).checks).toEqual({ scale_ms: null, thresholds_ms: null });

    await sendOne(s.port, `idle-a-${process.pid}`, 'idle-a');
    // the recycle is due 300 ms after the last task: the scale check waits for it, then stops
    await waitFor('the pool recycles after the batch', () => pool(s).workers.recycles === 1, 30_000);
    await waitFor('every check stops once the pool is quiet', () => Object.values(pool(s).checks).every((v) => v === null), 10_000);

    // stopped is not dead: the next batch is stored, and the pool recycles again after it (only
    // a scale check the batch woke can do that)
    await sendOne(s.port, `idle-b-${process.pid}`, 'idle-b');
    await waitFor('a second recycle after the second batch', () => pool(s).workers.recycles === 2, 30_000);
    await waitFor('and every check stops again', () => Object.values(pool(s).checks).every((v) => v === null), 10_000);
  }, 90_000);
});
