/**
 * The ingest worker: a thin piscina entry point. Its task function is built from workerData by
 * ingest-runner.ts (the same function the pipeline micro benchmark runs in-process).
 */
import './stdout-guard.js';
import { threadId, workerData } from 'node:worker_threads';
import type { WorkerInit, WorkerResult, WorkerTask } from '../src/pool/messages.js';
import { lowerOwnPriority } from '../src/pool/thread-priority.js';
import { createIngestRunner } from './ingest-runner.js';

const init = workerData as WorkerInit;
// before anything else runs here: ingest yields to the threads that answer reads (pool.worker_nice)
const priority = lowerOwnPriority(init.nice ?? 0);
const run = createIngestRunner(init, threadId);

// main learns the outcome from the thread's first result, whatever task it was (a thread piscina
// starts after a crash reports again)
let unreported = true;
export default function task(t: WorkerTask): WorkerResult {
  const r = run(t);
  if (unreported) {
    unreported = false;
    r.priority = priority;
  }
  return r;
}
