/**
 * observe's folded reads run in a real worker thread over the same SharedArrayBuffer rings:
 * the answer is the one the main thread would compute, a crash mid-read fails only the reads it
 * held (with a code, the next read works), the queue is bounded, and close is idempotent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { allocateStore, StoreReader, StoreWriter, type StoreBuffers } from '../../../src/shm/index.js';
import { runFoldQuery, type FoldQuery } from '../../../src/query/index.js';
import { KEEP_WARM_MS, ScanWorker } from '../../../src/pool/scan-worker.js';
import { GasolineError } from '../../../src/errors.js';
import { errorSignature } from '../../../src/domain/signals/signature.js';

// fold keys normalize numbers, so signatures differ by word
const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'];

function filled(n: number): StoreBuffers {
  const buffers = allocateStore([8 * 1024 * 1024, 1024 * 1024, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  for (let i = 0; i < n; i += 500) {
    const logs = Array.from({ length: Math.min(500, n - i) }, (_, j) => {
      const k = i + j;
      // errors of 7 signatures, warnings, and one noisy source every 10th record
      const rec = k % 10 === 0 ? { level: 'error', type: 'console', message: '[vite] hot update failed' } : k % 3 === 0 ? { level: 'warn', type: 'console', message: `slow render ${k}` } : { level: 'error', type: 'console', message: `TypeError: module ${NAMES[k % 7]} failed at line ${k}` };
      return { kind: 0, clientTime: k, tab: k % 2, payload: Buffer.from(JSON.stringify(rec)) };
    });
    const net = Array.from({ length: 50 }, (_, j) => ({ kind: 1, clientTime: i + j, tab: 1, payload: Buffer.from(JSON.stringify({ type: 'network', method: 'GET', url: `https://x.test/api/${j % 4}`, status: j % 5 === 0 ? 503 : 200 })) }));
    const records = [...logs, ...net];
    writer.commit({ recvTime: 1, records, received: [logs.length, net.length], rejected: [] });
  }
  return buffers;
}

const workers: ScanWorker[] = [];
function worker(store: StoreBuffers, o: { maxPending?: number; faultInjection?: boolean; timeoutMs?: number; startDelayMs?: number } = {}): ScanWorker {
  const w = new ScanWorker({ store, ...o });
  workers.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

const errorsQuery: FoldQuery = {
  kinds: [0],
  start: [0],
  maxScan: 20_000,
  filter: { what: 'errors' },
  noise: [{ id: 'n2', field: 'message', pattern: '^\\[(?:vite|HMR)\\]' }],
  fold: true,
};

const strip = (a: Awaited<ReturnType<typeof runFoldQuery>>) => ({ ...a, groups: a.groups.map((g) => ({ ...g, example: { ...g.example } })) });

describe('scan worker', () => {
  it('answers a folded read exactly as the main thread would, from the shared rings', async () => {
    const store = filled(3000);
    const w = worker(store);
    const q = { ...errorsQuery, start: [0], tab: undefined };
    const [there, here] = await Promise.all([w.run(q), runFoldQuery(new StoreReader(store), q)]);
    expect(strip(there)).toEqual(strip(here));
    // the thread counted the read as begun before it answered: its index work no longer gives way
    expect(w.unbegun).toBe(0);
    w.keepWarm(q);
    const more = await Promise.all([w.run(q), w.run(q)]);
    expect(more.map(strip)).toEqual([strip(here), strip(here)]);
    expect(w.unbegun).toBe(0);
    // 3000 logs: every 10th hidden as noise, every 3rd (not 10th) a warning, the rest 7 signatures
    expect(there.results[0]!.hidden).toBe(300);
    expect(there.noiseHits).toEqual({ n2: 300 });
    expect(there.groups).toHaveLength(7);
    expect(there.records).toBe([...Array(3000).keys()].filter((k) => k % 10 !== 0 && k % 3 !== 0).length);
    expect(there.results[0]).toMatchObject({ atEnd: true, next: 3000, stopped: false, missed: 0 });
  });

  it('reads several kinds in one query, with filters, tab and an end ordinal', async () => {
    const store = filled(1000);
    const w = worker(store);
    const a = await w.run({ kinds: [0, 1], start: [0, 0], to: [500, 100], maxScan: 20_000, filter: { what: 'timeline', contains: 'failed' }, fold: false, tab: 1 });
    expect(a.results.map((r) => r.next)).toEqual([500, 100]);
    for (const g of a.groups) {
      expect(g.example.tab).toBe(1);
      expect(g.example.ord).toBeLessThan(g.example.kind === 0 ? 500 : 100);
      expect(JSON.stringify(g.example.rec).toLowerCase()).toContain('failed');
    }
    expect(a.groups.length).toBe(a.records);
    const failing = await w.run({ kinds: [1], start: [0], maxScan: 20_000, filter: { what: 'failing' }, fold: true });
    // 2 commits × 50 network records, every 5th a 503
    expect(failing.records).toBe(20);
    expect(failing.groups.every((g) => g.example.rec.status === 503)).toBe(true);
  });

  it('groups by error signature for analyze, with a wider group bound and wall budget', async () => {
    const store = filled(3000);
    const w = worker(store);
    const a = await w.run({ ...errorsQuery, noise: undefined, by: 'signature', maxGroups: 5000, wallMs: 1000 });
    // the noisy '[vite] …' errors are not hidden here: an eighth signature
    const sig = (message: string): string => errorSignature({ message });
    expect(a.groups.map((g) => g.key).sort()).toEqual([sig('[vite] hot update failed'), ...NAMES.map((n) => sig(`TypeError: module ${n} failed at line 1`))].sort());
    expect(a.groups.reduce((n, g) => n + g.count, 0)).toBe(a.records);
    // a bound below the number of signatures stops the read at the first refused record
    const cut = await w.run({ ...errorsQuery, by: 'signature', maxGroups: 3 });
    expect(cut.groups).toHaveLength(3);
    expect(cut.results[0]!.stopped).toBe(true);
  });

  it('a crash mid-read fails the reads it held with scan_failed; the next read gets a new worker', async () => {
    const store = filled(20_000);
    const w = worker(store, { faultInjection: true });
    const held = [w.run(errorsQuery), w.run(errorsQuery)];
    w.faultForTest('crash');
    let failed = 0;
    for (const p of held) {
      const e = await p.then(() => null, (x: unknown) => x);
      // the first read may finish before the crash message is handled; none may hang or succeed wrongly
      if (e) {
        failed++;
        expect(e).toBeInstanceOf(GasolineError);
        expect((e as GasolineError).code).toBe('scan_failed');
      }
    }
    // reads of 20 000 records yield between slices, so the crash lands while they are under way
    expect(failed).toBeGreaterThan(0);
    const after = await w.run(errorsQuery);
    expect(after.groups).toHaveLength(7);
    expect(w.counts.restarts).toBe(1);
  });

  it('a read stuck past its deadline fails with scan_failed; the stuck thread is replaced', async () => {
    const store = filled(1000);
    const w = worker(store, { faultInjection: true, timeoutMs: 300 });
    expect((await w.run(errorsQuery)).groups).toHaveLength(7);
    w.faultForTest('hang');
    await expect(w.run(errorsQuery)).rejects.toMatchObject({ code: 'scan_failed', message: expect.stringContaining('no answer within 300 ms') });
    expect((await w.run(errorsQuery)).groups).toHaveLength(7);
    expect(w.counts).toMatchObject({ restarts: 1, failed: 1 });
  });

  it("a thread's start does not count against a read's deadline: a fresh worker's first read gets its whole time", async () => {
    const store = filled(100);
    // a start made slower than the deadline (fault injection), and a deadline a cold first read of
    // 100 records meets on a loaded machine (a 40 ms one, with a real start longer than that, did not)
    const w = worker(store, { timeoutMs: 600, faultInjection: true, startDelayMs: 1000 });
    const t0 = performance.now();
    expect((await w.run(errorsQuery)).groups.length).toBeGreaterThan(0);
    expect(performance.now() - t0, 'the start took longer than the deadline, or this proves nothing').toBeGreaterThan(1000);
    expect(w.counts).toMatchObject({ restarts: 0, failed: 0 });
  });

  it('refuses reads beyond its queue bound with scan_busy, and the others still complete', async () => {
    const store = filled(5000);
    const w = worker(store, { maxPending: 2 });
    const runs = [w.run(errorsQuery), w.run(errorsQuery), w.run(errorsQuery)];
    const out = await Promise.allSettled(runs);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(((out[2] as PromiseRejectedResult).reason as GasolineError).code).toBe('scan_busy');
    expect(w.counts.refused).toBe(1);
    expect((await w.run(errorsQuery)).groups).toHaveLength(7);
  });

  it('keepWarm sends a read on unawaited, once per shape per KEEP_WARM_MS; its answer disturbs no read', async () => {
    const store = filled(2000);
    const w = worker(store);
    expect(w.running).toBe(false);
    w.keepWarm(errorsQuery, 0);
    w.keepWarm(errorsQuery, KEEP_WARM_MS - 1);
    w.keepWarm({ ...errorsQuery, filter: { what: 'failing' } }, 1);
    expect(w.running).toBe(true);
    expect(w.counts).toMatchObject({ kept_warm: 2, queries: 0 });
    w.keepWarm(errorsQuery, KEEP_WARM_MS + 1);
    expect(w.counts.kept_warm).toBe(3);
    // the unawaited answers come back in between and are dropped; the awaited read gets its own
    const a = await w.run(errorsQuery);
    expect(a.groups).toHaveLength(7);
    expect(w.counts).toMatchObject({ queries: 1, failed: 0, restarts: 0 });
    await w.close();
    w.keepWarm(errorsQuery, 3 * KEEP_WARM_MS);
    expect(w.running).toBe(false);
  });

  it('close is idempotent, fails what is waiting and refuses what comes after', async () => {
    const store = filled(20_000);
    const w = worker(store);
    const waiting = w.run(errorsQuery).then(() => null, (e: unknown) => e);
    await Promise.all([w.close(), w.close()]);
    expect(await waiting).toMatchObject({ code: 'shutting_down' });
    await expect(w.run(errorsQuery)).rejects.toMatchObject({ code: 'shutting_down' });
  });
});
