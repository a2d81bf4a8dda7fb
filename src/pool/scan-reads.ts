/**
 * Main and the scan worker share two counters (ScanWorkerInit.reads): main adds to ASKED before it
 * posts a read, the thread adds to TAKEN as it begins one. While they differ a read is waiting in
 * the thread's queue, and its background index work gives way at its next chunk (match-index.ts)
 * instead of running out its step first. Here so the worker reads them without loading main's side.
 */
export const ASKED = 0;
export const TAKEN = 1;

/** whether a read main posted has not begun yet */
export function readWaiting(reads: Int32Array<ArrayBufferLike>): boolean {
  return Atomics.load(reads, ASKED) !== Atomics.load(reads, TAKEN);
}
