/**
 * A scan in slices: at most SLICE_MS of synchronous work, then the event loop runs (pushes,
 * other calls, ingest notices) before the next slice. Folding must see every record it counts,
 * so unlike a first-50 listing it cannot stop early; slicing is what keeps the main thread
 * responsive while it reads.
 *
 * A call's work is bounded by counts, not by time: MAX_SCAN records examined and MAX_GROUPS
 * signatures, so the same data always gives the same answer. Time is only a last resort: on a
 * machine this loaded (2 cores, several busy processes), wall time per record varies 10×, and an
 * answer cut by time would differ from run to run.
 */
import type { StoreReader } from '../../shm/index.js';
import { scan, type ScanResult, type ScanSpec } from '../query.js';

export const SLICE_MS = 2;
/** wall-clock bound for a whole call, however many slices and kinds it took */
export const DEADLINE_MS = 100;

/** One per call, shared by the scans of every kind it reads. */
export class ScanBudget {
  private readonly deadline: number;

  constructor(wallMs = DEADLINE_MS) {
    this.deadline = performance.now() + wallMs;
  }

  get exhausted(): boolean {
    return performance.now() >= this.deadline;
  }
}

const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Always runs one slice, so every kind of a call makes progress even past the deadline. */
export async function scanSliced(reader: StoreReader, spec: ScanSpec & { sink: NonNullable<ScanSpec['sink']> }, budget = new ScanBudget()): Promise<ScanResult> {
  const total: ScanResult = { hits: [], matched: 0, hidden: 0, scanned: 0, missed: 0, next: spec.from, atEnd: false, stopped: false };
  for (;;) {
    const r = scan(reader, { ...spec, from: total.next, maxScan: spec.maxScan - total.scanned, budgetMs: SLICE_MS });
    total.matched += r.matched;
    total.hidden += r.hidden;
    total.scanned += r.scanned;
    total.missed += r.missed;
    total.next = r.next;
    total.atEnd = r.atEnd;
    total.stopped = r.stopped === true;
    if (r.atEnd || r.stopped || total.scanned >= spec.maxScan || budget.exhausted) return total;
    await yieldToLoop();
  }
}
