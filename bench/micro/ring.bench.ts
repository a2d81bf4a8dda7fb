/**
 * Micro benchmark of the shared-memory store: the per-batch cost a worker pays inside the
 * commit lock, and the per-page cost the main thread pays to serve a tool call.
 * Run: `node dist/bench/micro/ring.bench.js` (after `pnpm build`); `pnpm bench` runs it too.
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { StoreReader, StoreWriter, allocateStore, type StagedRecord } from '../../src/shm/index.js';

export interface MicroResult {
  name: string;
  opsPerSec: number;
  meanUs: number;
  p99Us: number;
}

const MiB = 1024 * 1024;
const BATCH = 100;
const PAYLOAD = 300;

export async function runRingBench(): Promise<MicroResult[]> {
  // 16 MiB per ring: large enough that reads walk a realistic ring, small enough that
  // commits keep wrapping and evicting, as they do under sustained load.
  const store = allocateStore(Array.from({ length: 7 }, () => 16 * MiB));
  const writer = new StoreWriter(store, 1);
  const reader = new StoreReader(store);
  const records: StagedRecord[] = Array.from({ length: BATCH }, (_, i) => ({
    kind: i % 2,
    clientTime: Date.now(),
    tab: 1,
    payload: new Uint8Array(PAYLOAD).fill(i & 0xff),
  }));
  const received = [BATCH / 2, BATCH / 2];
  const commit = () => writer.commit({ recvTime: Date.now(), records, received, rejected: [] });
  // fill well past one lap so the tail walk runs in the timed commits
  for (let i = 0; i < 2000; i++) commit();

  let cursor = reader.tailOrd(0);
  const readPage = () => {
    const r = reader.read(0, cursor, 100);
    cursor = r.atEnd ? reader.tailOrd(0) + 1 : r.next;
  };
  const rng = { s: 1 };
  const readRandom = () => {
    const tail = reader.tailOrd(0);
    const span = reader.latestOrd(0) - tail - 100;
    rng.s = (rng.s * 48271) % 2147483647;
    reader.read(0, tail + (rng.s % Math.max(1, span)), 100);
  };
  const needle = Buffer.from([7, 7, 7, 7]);
  const readFiltered = () => {
    reader.read(0, reader.tailOrd(0), 100, { filter: (v) => v.has(needle), maxScan: 1000 });
  };

  const bench = new Bench({ time: 500 });
  bench
    .add(`commit ${BATCH} x ${PAYLOAD} B (2 rings)`, commit)
    .add('read 100 sequential (hint cache)', readPage)
    .add('read 100 at a random cursor (sparse index)', readRandom)
    .add('scan 1000 with a byte filter', readFiltered);
  await bench.run();

  return bench.tasks.map((t) => {
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`bench task ${t.name} ended ${r.state}${r.state === 'errored' ? `: ${r.error.message}` : ''}`);
    return {
      name: t.name,
      opsPerSec: Math.round(r.throughput.mean),
      meanUs: round2(r.latency.mean * 1000),
      p99Us: round2(r.latency.p99 * 1000),
    };
  });
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runRingBench();
  console.table(rows);
}
