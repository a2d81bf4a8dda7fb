/**
 * The ingest worker's task function run in this thread over the shared buffers a pool allocates
 * (rings, item slots, the alert ring, the detectors' memory), so the micro benchmarks time the
 * product's own task, with whatever a build adds to it, not a copy of its stages.
 */
import { KINDS } from '../../src/domain/kinds.js';
import { allocateDetectState, allocateStore } from '../../src/shm/index.js';
import { allocateAlertRing } from '../../src/shm/alert-ring.js';
import { allocateSlots, SlotView } from '../../src/pool/item-slots.js';
import type { ItemOutcome, TaskItem, WorkerInit, WorkerResult, WorkerTask } from '../../src/pool/messages.js';
import { createIngestRunner } from '../../workers/ingest-runner.js';

/** The inputs copied back to back into one shared input arena, as the edge leaves them for the workers. */
export function copyToArena(inputs: readonly Uint8Array[]): { arena: SharedArrayBuffer; views: Uint8Array[]; offs: number[] } {
  const arena = new SharedArrayBuffer(inputs.reduce((n, b) => n + b.length, 0));
  const bytes = new Uint8Array(arena);
  const views: Uint8Array[] = [];
  const offs: number[] = [];
  let off = 0;
  for (const b of inputs) {
    bytes.set(b, off);
    views.push(bytes.subarray(off, off + b.length));
    offs.push(off);
    off += b.length;
  }
  return { arena, views, offs };
}

/** A task function over fresh shared buffers with `inputs` in its arena (at `offs`), and an item slot per input. */
function inProcessRunner(inputs: readonly Uint8Array[]): { run: (task: WorkerTask) => WorkerResult; slots: SlotView; offs: number[] } {
  const { arena, offs } = copyToArena(inputs);
  const slotsBuf = allocateSlots(inputs.length);
  const init: WorkerInit = {
    store: allocateStore(KINDS.map(() => 8 << 20)),
    arena,
    slots: slotsBuf,
    limits: { maxDepth: 32, maxElements: 500_000, maxEventsPerBatch: 1000, maxErrorsPerAck: 20, maxFrame: 1 << 20 },
    redaction: { rules: [], allowlist: [] },
    faultInjection: false,
    chaos: new SharedArrayBuffer(16),
    alerts: allocateAlertRing(),
    detect: allocateDetectState(),
  };
  return { run: createIngestRunner(init, 1), slots: new SlotView(slotsBuf), offs };
}

/**
 * The task function run on `inputs` in turn, one input a task; each run resets the input's item
 * slot, so every run processes it again. `item` makes each input's task item (its arena offset and
 * slot given), `accepted` checks the outcome (throwing when the input was not taken whole) and says
 * how many records it stored.
 */
export function taskCycle(inputs: readonly Uint8Array[], item: (off: number, slot: number, input: Uint8Array) => TaskItem, accepted: (o: ItemOutcome | undefined) => number): { runNext(): number } {
  const { run, slots, offs } = inProcessRunner(inputs);
  const items = inputs.map((b, slot) => item(offs[slot]!, slot, b));
  let i = 0;
  return {
    runNext(): number {
      const it = items[i++ % items.length]!;
      slots.reset(it.slot);
      const r = run({ kind: 'ingest', items: [it], recvTime: Date.now() });
      return accepted(r.kind === 'ingest' ? r.results[0] : undefined);
    },
  };
}
