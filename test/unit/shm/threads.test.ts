import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { StoreReader, allocateStore, type StoreBuffers } from '../../../src/shm/index.js';
import { LOCK } from '../../../src/shm/layout.js';
import { checkPayload } from '../../fixtures/shm-gen.js';
import type { ShmWriterJob, ShmWriterMessage } from '../../fixtures/shm-writer.js';
import { waitFor } from '../../helpers/wait-for.js';
import { expectBalanced } from './balance.js';

const FIXTURE = resolve('dist/test/fixtures/shm-writer.js');

beforeAll(() => {
  // `pnpm test` builds first; a bare `vitest run` on a fresh checkout compiles here.
  if (!existsSync(FIXTURE)) {
    try {
      execFileSync('pnpm', ['exec', 'tsc', '-p', 'tsconfig.json'], { stdio: 'ignore' });
    } catch {
      // tsc still emits when another room's file does not typecheck
    }
  }
  expect(existsSync(FIXTURE), `${FIXTURE} (run pnpm build)`).toBe(true);
}, 120_000);

function spawn(job: ShmWriterJob): { worker: Worker; message: (type: ShmWriterMessage['type']) => Promise<ShmWriterMessage>; exited: Promise<number> } {
  const worker = new Worker(FIXTURE, { workerData: job });
  const waiting = new Map<string, (m: ShmWriterMessage) => void>();
  const got = new Map<string, ShmWriterMessage>();
  worker.on('message', (m: ShmWriterMessage) => {
    const w = waiting.get(m.type);
    if (w) w(m);
    else got.set(m.type, m);
  });
  const failed = new Promise<never>((_, reject) => worker.on('error', reject));
  failed.catch(() => undefined);
  const exited = new Promise<number>((res) => worker.on('exit', res));
  const message = (type: ShmWriterMessage['type']) =>
    Promise.race([failed, new Promise<ShmWriterMessage>((res) => (got.has(type) ? res(got.get(type)!) : waiting.set(type, res)))]);
  return { worker, message, exited };
}

/** Follows every ring like an MCP client would, checking each record it is given. */
class Follower {
  readonly cursor: number[];
  readonly seen: number[];
  readonly missed: number[];
  private readonly lastSeq: number[];
  private readonly lastSerial = new Map<string, number>();
  constructor(private readonly reader: StoreReader, kinds: number) {
    this.cursor = new Array<number>(kinds).fill(0);
    this.seen = new Array<number>(kinds).fill(0);
    this.missed = new Array<number>(kinds).fill(0);
    this.lastSeq = new Array<number>(kinds).fill(-1);
  }
  poll(k: number, limit: number): boolean {
    const from = this.cursor[k]!;
    const r = this.reader.read(k, from, limit);
    // A reader lapped mid-call reports the gap as missed: every ordinal in [from, next) is
    // either returned or counted, exactly once.
    let ord = from;
    let gaps = 0;
    for (const rec of r.records) {
      expect(rec.ord, 'ordinals increase').toBeGreaterThanOrEqual(ord);
      gaps += rec.ord - ord;
      ord = rec.ord + 1;
      expect(rec.kind).toBe(k);
      expect(rec.seq, 'seqs strictly increasing in a ring').toBeGreaterThan(this.lastSeq[k]!);
      this.lastSeq[k] = rec.seq;
      const p = checkPayload(rec.payload);
      expect(p.ok, `payload checksum (ord ${rec.ord}, seq ${rec.seq})`).toBe(true);
      expect(p.writer).toBe(rec.tab);
      const key = `${k}/${p.writer}`;
      expect(p.serial, 'a writer’s records keep their order').toBeGreaterThan(this.lastSerial.get(key) ?? -1);
      this.lastSerial.set(key, p.serial);
    }
    expect(r.next - from).toBe(r.records.length + r.missed);
    expect(gaps).toBeLessThanOrEqual(r.missed);
    this.cursor[k] = r.next;
    this.seen[k]! += r.records.length;
    this.missed[k]! += r.missed;
    return r.atEnd;
  }
}

describe('shm store under real worker threads', () => {
  it('3 writers commit into tiny rings while main reads: no torn record, exact accounting', async () => {
    const store = allocateStore([1024, 2048, 512, 4096, 768, 256, 8192]);
    const reader = new StoreReader(store);
    const go = new SharedArrayBuffer(4);
    const writers = [1, 2, 3].map((seed) => spawn({ store, mode: 'write', seed, commits: 3000, maxRecords: 12, maxPayload: 260, go }));
    const dones = writers.map((w) => w.message('done'));
    let finished = false;
    void Promise.all(dones).then(() => (finished = true), () => (finished = true));
    const f = new Follower(reader, 7);
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    let polls = 0;
    let cleared = 0;
    while (!finished) {
      for (let k = 0; k < 7; k++) f.poll(k, (polls % 7) + 1);
      if (++polls % 25 === 0 && reader.tryClear([6])) cleared++;
      await tick();
    }
    const results = (await Promise.all(dones)) as Array<Extract<ShmWriterMessage, { type: 'done' }>>;
    for (let k = 0; k < 7; k++) while (!f.poll(k, 1000));

    const c = reader.counters();
    for (let k = 0; k < 7; k++) {
      const sum = (key: 'received' | 'rejected' | 'stored' | 'dropped') => results.reduce((a, r) => a + r[key][k]!, 0);
      expect(c[k]!.received).toBe(sum('received'));
      expect(c[k]!.rejected).toBe(sum('rejected'));
      expect(c[k]!.stored).toBe(sum('stored'));
      expect(c[k]!.dropped.duplicate).toBe(sum('dropped'));
      // every ordinal was read or reported missed
      expect(f.seen[k]! + f.missed[k]!).toBe(reader.latestOrd(k));
    }
    const tooLarge = results.reduce((a, r) => a + r.tooLarge, 0);
    expect(tooLarge).toBeGreaterThan(0);
    expect(c.reduce((a, x) => a + x.dropped.record_too_large, 0)).toBe(tooLarge);
    expect(polls).toBeGreaterThan(10);
    expect(cleared).toBeGreaterThan(0);
    expectBalanced(reader);
    await Promise.all(writers.map((w) => w.exited));
  }, 60_000);

  it('recovers the lock of a worker terminated mid-commit; the blocked writer then proceeds and nothing torn is visible', async () => {
    const store: StoreBuffers = allocateStore([512, 512, 512, 512, 512, 512, 512]);
    const reader = new StoreReader(store);
    const holder = spawn({ store, mode: 'hold', seed: 0, commits: 1, maxRecords: 1, maxPayload: 64 });
    const held = await holder.message('holding');
    const holdId = holder.worker.threadId;
    expect(held.threadId).toBe(holdId);
    expect(reader.lockHolder()).toBe(holdId);
    expect(reader.tryClear([0])).toBe(false);

    const next = spawn({ store, mode: 'write', seed: 9, commits: 200, maxRecords: 6, maxPayload: 100 });
    // Proof that it is blocked, not merely not started yet: a notify finds it parked in
    // Atomics.wait on the lock word. Waking it is harmless, it re-checks the word and waits again.
    await waitFor('the second writer parked on the lock', () => Atomics.notify(new Int32Array(store.control), LOCK, 1) === 1, 10_000, 1);
    expect(reader.counters()[0]!.received, 'the second writer waits on the lock').toBe(0);

    await holder.worker.terminate();
    await holder.exited;
    expect(reader.forceReleaseIfHeldBy(next.worker.threadId)).toBe(false);
    expect(reader.releaseLockIfHolderDead(new Set([next.worker.threadId]))).toBe(holdId);
    expect(reader.lockHolder()).not.toBe(holdId);

    const done = (await next.message('done')) as Extract<ShmWriterMessage, { type: 'done' }>;
    await next.exited;
    const f = new Follower(reader, 7);
    for (let k = 0; k < 7; k++) while (!f.poll(k, 1000));
    for (let k = 0; k < 7; k++) {
      const r = reader.read(k, 0, 10_000);
      expect(r.records.every((x) => x.tab !== holdId), 'the dead commit never became visible').toBe(true);
    }
    expect(reader.counters().map((x) => x.received)).toEqual(done.received);
    expect(reader.tryClear([0])).toBe(true);
    expectBalanced(reader);
  }, 30_000);
});
