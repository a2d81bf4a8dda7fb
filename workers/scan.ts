/**
 * The scan worker: reads the shared rings for observe's folded answers, so the decoding and
 * folding garbage of a big read never pauses the main thread that emits notifications. One
 * query at a time; each is bounded by its own scan budget.
 */
import './stdout-guard.js';
import { parentPort, workerData } from 'node:worker_threads';
import { StoreReader } from '../src/shm/index.js';
import { packFold, ReadIndexes, runFoldQuery } from '../src/query/index.js';
import type { ScanRequest, ScanReply, ScanWorkerInit } from '../src/pool/scan-worker.js';
import { readWaiting, TAKEN } from '../src/pool/scan-reads.js';

const init = workerData as ScanWorkerInit;
const reader = new StoreReader(init.store);
const reads = new Int32Array(init.reads);
// errors and failing requests kept as they are ingested, for every client's reads (match-index.ts);
// their background work gives way to a read that waits
const indexes = new ReadIndexes(reader, { queryWaiting: () => readWaiting(reads) });
const port = parentPort!;
// fault injection only: a start slower than any read's deadline
if (init.faultInjection && init.startDelayMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, init.startDelayMs);
port.postMessage({ ready: true } satisfies ScanReply);

port.on('message', (m: ScanRequest) => {
  if (m.t === 'crash' || m.t === 'hang') {
    // fault injection only (main refuses to send these otherwise): a crash or a stuck read
    if (!init.faultInjection) return;
    if (m.t === 'crash') process.exit(70);
    for (;;);
  }
  Atomics.add(reads, TAKEN, 1);
  runFoldQuery(reader, m.q, indexes).then(
    (a) => {
      const { packed, transfer } = packFold(a);
      port.postMessage({ id: m.id, ok: true, p: packed } satisfies ScanReply, transfer);
    },
    (e: unknown) => port.postMessage({ id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) } satisfies ScanReply),
  );
});
