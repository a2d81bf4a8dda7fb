/**
 * What an ingest worker does with a task, built from its WorkerInit: the parts the ingest core
 * needs (src/domain/ingest/core.ts) over the shared buffers, and the task function piscina calls.
 * Apart from the thread entry (ingest.ts) so that the pipeline micro benchmark runs this very
 * function in-process: issue 22's worker-path gate then sees anything a build adds to a task,
 * not only the domain stages.
 */
import type { WarmupResult, WorkerInit, WorkerTask, WorkerResult } from '../src/pool/messages.js';
import { SlotView } from '../src/pool/item-slots.js';
import { StoreWriter } from '../src/shm/index.js';
import { IngestCore } from '../src/domain/ingest/core.js';
import { pageUrlFaults } from '../src/domain/ingest/faults.js';
import { WorkerRedaction } from '../src/domain/ingest/worker-redaction.js';
import { decodeFrame, processBatchFrame } from '../src/domain/ingest/api.js';
import { RecordSpans } from '../src/domain/wire/record-spans.js';
import { compileRedaction } from '../src/domain/redaction/index.js';
import { warmupFrames } from './warmup.js';
import { AlertRingWriter } from '../src/shm/alert-ring.js';
import { allocateDetectState, DetectState } from '../src/shm/detect-state.js';
import { Detector } from '../src/domain/alerts/detect.js';
import { ExpressTaker } from '../src/pool/express.js';

/** `writerId`: the thread's id, which the store and the express board tell writers apart by. */
export function createIngestRunner(init: WorkerInit, writerId: number): (task: WorkerTask) => WorkerResult {
  const redaction = new WorkerRedaction(compileRedaction, init.redaction);
  const limits = { maxDepth: init.limits.maxDepth, maxElements: init.limits.maxElements, events: { max_events_per_batch: init.limits.maxEventsPerBatch, max_errors_per_ack: init.limits.maxErrorsPerAck } };
  const core = new IngestCore({
    input: new Uint8Array(init.arena),
    slots: new SlotView(init.slots),
    writer: new StoreWriter(init.store, writerId),
    detector: new Detector(new DetectState(init.detect)),
    alerts: new AlertRingWriter(init.alerts),
    redaction,
    clock: () => performance.timeOrigin + performance.now(),
    limits,
    ...(init.faultInjection ? { faults: pageUrlFaults(new Int32Array(init.chaos), (code) => process.exit(code)) } : {}),
    ...(init.express ? { express: new ExpressTaker(init.express, writerId) } : {}),
  });

  function warmup(batches: number): WarmupResult {
    const t0 = performance.now();
    // the detectors get warm too, against a scratch memory: synthetic errors are not the user's
    const scratch = new Detector(new DetectState(allocateDetectState()));
    const spans = new RecordSpans();
    for (const bytes of warmupFrames(batches)) {
      const d = decodeFrame(bytes, limits, spans);
      if (d.ok && d.frame.t === 'batch') processBatchFrame(d.frame, { recvTime: Date.now(), redactor: redaction.current(), limits: limits.events, detect: (r, u) => scratch.see(r, 0, u) }, spans);
      scratch.take();
    }
    // warm-up traffic is synthetic: its redactions are not the user's
    redaction.forget();
    return { kind: 'warmup', batches, micros: Math.round((performance.now() - t0) * 1000) };
  }

  return function run(task: WorkerTask): WorkerResult {
    if (task.kind === 'warmup') return warmup(task.batches);
    redaction.update(task.redaction);
    const t = core.runTask(task.items, task.recvTime);
    const redacted = redaction.delta();
    return {
      kind: 'ingest',
      results: t.outcomes,
      ...(redacted ? { redacted } : {}),
      ...(t.redactionFailed ? { redactionFailed: t.redactionFailed } : {}),
      ...(t.alertsUnpublished ? { alertsUnpublished: t.alertsUnpublished } : {}),
    };
  };
}
