/**
 * The elastic ingest pool with real workers and real shared memory: one worker and no scan
 * worker at start; busy sessions grow it to its max; idle shrinks it back to one; no record is
 * lost or stored twice across a grow and a shrink, also when a worker dies while it grows.
 * Timings are the config's (small here), so nothing sleeps: the test waits for what it expects.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { expectBalanced, readAll } from '../helpers/accounting.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

// a 32 MiB arena (the test default is 4): four producers flat out on a loaded machine, and a dead
// worker's slices holding the in-order reclaim while its thread is replaced
const ELASTIC = { threads: 3, min_threads: 1, scale_check_ms: 20, grow_after_ms: 100, shrink_after_ms: 400, input_bytes: 32 * 1024 * 1024 };

let server: App | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Keeps up to 8 batches of 200 records unacknowledged until stopped; resends from resume_from_seq on a nack. */
async function busy(port: number, session: string, tag: string): Promise<{ sent: () => number; stop: () => Promise<void> }> {
  const p = await Producer.connect(port);
  await p.hello(session);
  let seq = 0;
  let acked = -1;
  let running = true;
  const recs = (s: number) => Array.from({ length: 200 }, (_, i) => logRecord(i, { level: 'info', message: `${tag} ${s} ${i} ${'z'.repeat(60)}` }));
  const loop = (async () => {
    let seen = 0;
    while (running || acked < seq - 1) {
      while (running && seq - acked <= 8) {
        p.send(batch(seq, { logs: recs(seq) }));
        seq++;
      }
      const f = await p.next((x, i = p.frames.indexOf(x)) => i >= seen && ((x.t === 'ack' && (x.seq as number) > acked) || x.t === 'nack'), 15_000);
      seen = p.frames.indexOf(f) + 1;
      if (f.t === 'ack') acked = f.seq as number;
      else {
        // refused under load: back off as long as the server says, then go back to where it says
        await new Promise((r) => setTimeout(r, Number(f.retry_after_ms ?? 50)));
        seq = f.resume_from_seq as number;
        acked = seq - 1;
      }
    }
    p.close();
  })();
  return {
    sent: () => acked + 1,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

const health = (s: App) => s.health() as { pool: { workers: { now: number; max: number; grows: number; shrinks: number; malloc_trim: { trims: number } } }; scan_worker: { running: boolean } };

describe('the elastic ingest pool', () => {
  it('starts with one ingest worker and no scan worker; the first folded read starts the scan worker, and one with nothing to read is answered without it', async () => {
    server = await startTestServer({ pool: { ...ELASTIC, threads: 4 } });
    expect(server.pool.threads).toBe(1);
    expect(server.scans.running).toBe(false);
    expect(health(server).pool.workers).toMatchObject({ now: 1, max: 4, grows: 0, shrinks: 0 });
    expect(health(server).scan_worker.running).toBe(false);
    // nothing stored yet: nothing to read, answered without waiting for the thread (query/empty-fold.ts),
    // which gets the read unawaited all the same, to be ready for the next one (once per shape per 10 s)
    const none = await server.mcp.fold({ kinds: [0], start: [0], maxScan: 100, filter: { what: 'logs' }, fold: true });
    expect(none).toMatchObject({ fold: true, records: 0, groups: [] });
    await server.mcp.fold({ kinds: [0], start: [0], maxScan: 100, filter: { what: 'logs' }, fold: true });
    expect(server.scans.counts).toMatchObject({ queries: 0, kept_warm: 1 });
    expect(server.scans.running).toBe(true);
    const p = await Producer.connect(server.port);
    await p.hello(`elastic-first-read-${process.pid}`);
    p.send(batch(0, { logs: [logRecord(0, { level: 'error', message: 'first read' })] }));
    await p.next((f) => f.t === 'ack', 10_000);
    p.close();
    const a = await server.mcp.fold({ kinds: [0], start: [0], maxScan: 100, filter: { what: 'logs' }, fold: true });
    expect(a).toMatchObject({ fold: true, records: 1 });
    expect(server.scans.counts.queries).toBe(1);
    expect(server.scans.running).toBe(true);
    expect(health(server).scan_worker.running).toBe(true);
  });

  it('grows to its max under sustained load, shrinks back to one when idle, and every record is stored exactly once', async () => {
    server = await startTestServer({ pool: ELASTIC });
    const s = server;
    const tag = `elastic-${Date.now()}`;
    const loads = await Promise.all([0, 1, 2, 3].map((i) => busy(s.port, `elastic-${i}-${process.pid}`, `${tag}-${i}`)));
    await waitFor('the pool grows to 3 workers', () => s.pool.threads === 3, 20_000);
    // one worker at a time: a busy machine may pause the producers long enough for a shrink and a regrow
    expect(s.pool.grows).toBeGreaterThanOrEqual(2);
    for (const l of loads) await l.stop();
    await waitFor('the pool shrinks back to 1 worker', () => s.pool.threads === 1, 20_000);
    const { grows, shrinks } = s.pool;
    expect(shrinks).toBe(grows);
    expect(health(s).pool.workers).toMatchObject({ now: 1, max: 3, grows, shrinks });
    // each shrink gives the ended thread's part of the C heap back (malloc_trim, where it runs)
    if (process.platform === 'linux' && process.arch === 'x64') await waitFor('a malloc_trim after each shrink', () => health(s).pool.workers.malloc_trim.trims >= shrinks, 10_000);
    const metrics = await s.metrics.text();
    expect(metrics).toMatch(/gasoline_pool_threads 1\b/);
    expect(metrics).toMatch(/gasoline_pool_threads_max 3\b/);
    expect(metrics).toContain(`gasoline_pool_grows_total ${grows}\n`);
    expect(metrics).toContain(`gasoline_pool_shrinks_total ${shrinks}\n`);
    await expectBalanced(s);
    // every acknowledged batch once, none twice (rings are small: count what is still readable)
    const seen = new Map<string, number>();
    for (const r of readAll(s, 'logs')) {
      const m = String(r.message);
      if (m.startsWith(tag)) seen.set(m, (seen.get(m) ?? 0) + 1);
    }
    expect(seen.size).toBeGreaterThan(0);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // after the shrink it still ingests, on the one worker left
    const p = await Producer.connect(s.port);
    await p.hello(`after-${process.pid}`);
    expect(await p.sendUntilAcked(batch(0, { logs: [logRecord(1, { message: `${tag}-after` })] }), 10_000)).toMatchObject({ seq: 0, accepted: 1 });
    p.close();
  }, 60_000);

  it('grows at once when the edge refuses work as overloaded, without waiting out grow_after_ms', async () => {
    // the streak alone would need a minute; the 10 ms queue bound refuses a deep window at once
    server = await startTestServer({ pool: { ...ELASTIC, grow_after_ms: 60_000, shrink_after_ms: 60_000, max_queue_delay_ms: 10 } });
    const s = server;
    const tag = `shed-grow-${Date.now()}`;
    const loads = await Promise.all([0, 1, 2].map((i) => busy(s.port, `shed-grow-${i}-${process.pid}`, `${tag}-${i}`)));
    await waitFor(() => `a refusal, then a grow: ${JSON.stringify({ nacks: s.stats.nacks, workers: health(s).pool.workers })}`, () => (s.stats.nacks.overloaded ?? 0) > 0 && s.pool.grows >= 1, 20_000);
    for (const l of loads) await l.stop();
    await expectBalanced(s);
  }, 60_000);

  it('a worker that dies while the pool grows is replaced; its batch is stored once and the accounting balances', async () => {
    server = await startTestServer({ pool: ELASTIC }, { faultInjection: true });
    const s = server;
    const tag = `crash-grow-${Date.now()}`;
    const loads = await Promise.all([0, 1, 2].map((i) => busy(s.port, `crash-grow-${i}-${process.pid}`, `${tag}-${i}`)));
    await waitFor('the pool starts growing', () => s.pool.grows >= 1 || s.pool.startingThreads > 0, 20_000);
    const quiet = await Producer.connect(s.port);
    await quiet.hello(`crash-quiet-${process.pid}`);
    const marker = `https://crash.test/${tag}`;
    // a kind the busy producers do not send, so the small test ring still holds it at the end
    // resent on a nack: the busy producers keep the pool's queue long enough to refuse it overloaded
    expect(await quiet.sendUntilAcked(batch(0, { network: [{ ts: Date.now(), method: 'GET', url: marker, status: 200, duration: 4 }] }, { page_url: 'gasoline:crash-once' }), 15_000)).toMatchObject({ seq: 0, accepted: 1 });
    expect(s.pool.crashes).toBeGreaterThanOrEqual(1);
    await waitFor('the pool reaches its max after the crash', () => s.pool.threads === 3, 20_000);
    for (const l of loads) await l.stop();
    quiet.close();
    expect(readAll(s, 'network').filter((r) => r.url === marker)).toHaveLength(1);
    await expectBalanced(s);
  }, 60_000);
});
