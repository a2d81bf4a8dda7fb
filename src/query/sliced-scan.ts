/**
 * A scan in slices: at most SLICE_MS of synchronous work, then the event loop runs (pushes,
 * other calls, ingest notices) before the next slice. Folding must see every record it counts,
 * so unlike a first-50 listing it cannot stop early; slicing is what keeps the main thread
 * responsive while it reads.
 *
 * A call's work is bounded by counts — MAX_SCAN records examined and MAX_GROUPS signatures —
 * and, past the first MIN_SCAN records, by time: up to MIN_SCAN new records the same data always
 * gives the same answer (wall time per record varies 10× on a loaded 2-core machine), beyond it
 * a flood cannot hold an agent's call for long: the answer says it stopped and gives the cursor.
 * Measured: with a count bound only, observe p99 under a 150 k events/s flood went from ~10 ms to
 * 125–234 ms, because every call read all 20 000 records it was allowed.
 */
import type { StoreReader } from '../shm/index.js';
import { scan, type ScanResult, type ScanSpec } from './scan.js';

export const SLICE_MS = 2;
/** wall-clock bound for a whole call once MIN_SCAN records were read */
export const DEADLINE_MS = 6;
/** records every call may read whatever the clock says: answers below this are repeatable */
export const MIN_SCAN = 6000;

/** One per call, shared by the scans of every kind it reads. */
export class ScanBudget {
  private readonly deadline: number;
  private scanned = 0;

  constructor(
    wallMs = DEADLINE_MS,
    private readonly minScan = MIN_SCAN,
  ) {
    this.deadline = performance.now() + wallMs;
  }

  add(records: number): void {
    this.scanned += records;
  }

  get exhausted(): boolean {
    return this.scanned >= this.minScan && performance.now() >= this.deadline;
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
    budget.add(r.scanned);
    total.missed += r.missed;
    total.next = r.next;
    total.atEnd = r.atEnd;
    total.stopped = r.stopped === true;
    if (r.atEnd || r.stopped || total.scanned >= spec.maxScan || budget.exhausted) return total;
    await yieldToLoop();
  }
}
