/**
 * The ingest worker: a thin piscina entry point. Its task function is built from workerData by
 * ingest-runner.ts (the same function the pipeline micro benchmark runs in-process).
 */
import './stdout-guard.js';
import { threadId, workerData } from 'node:worker_threads';
import type { WorkerInit } from '../src/pool/messages.js';
import { createIngestRunner } from './ingest-runner.js';

export default createIngestRunner(workerData as WorkerInit, threadId);
