/**
 * A scan in slices: at most SLICE_MS of synchronous work, then the event loop runs (pushes,
 * other calls, ingest notices) before the next slice. One call can then look at MAX_SCAN records
 * without ever holding the main thread longer than a slice — a single 2 ms slice is too little
 * for a busy page's few thousand records when the machine is loaded.
 */
import type { StoreReader } from '../../shm/index.js';
import { scan, type ScanResult, type ScanSpec } from '../query.js';

export const SLICE_MS = 2;
/** wall-clock bound for a whole call, however many slices it took: past it, the answer says "scan paused" and gives the cursor */
export const DEADLINE_MS = 250;

const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

export async function scanSliced(reader: StoreReader, spec: ScanSpec & { sink: NonNullable<ScanSpec['sink']> }, deadlineMs = DEADLINE_MS): Promise<ScanResult> {
  const total: ScanResult = { hits: [], matched: 0, hidden: 0, scanned: 0, missed: 0, next: spec.from, atEnd: false, stopped: false };
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const r = scan(reader, { ...spec, from: total.next, maxScan: spec.maxScan - total.scanned, budgetMs: SLICE_MS });
    total.matched += r.matched;
    total.hidden += r.hidden;
    total.scanned += r.scanned;
    total.missed += r.missed;
    total.next = r.next;
    total.atEnd = r.atEnd;
    total.stopped = r.stopped === true;
    if (r.atEnd || r.stopped || total.scanned >= spec.maxScan || performance.now() >= deadline) return total;
    await yieldToLoop();
  }
}
