/**
 * A full garbage collection on main, on purpose, without running the process with --expose-gc:
 * the flag is set only while one fresh context reads V8's `gc` out of it, then cleared, so no
 * other context or worker started later sees a `gc` global.
 *
 * Why: a SharedArrayBuffer's memory goes back to the OS only when its last wrapper is collected,
 * and an idle main thread allocates too little to collect on its own (the pool's recycle,
 * ingest-pool.ts, drops a 64 MB input arena at exactly such a time).
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    try {
      gc = runInNewContext('gc') as () => void;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  // compacting: a burst leaves main's old space fragmented (live objects spread over pages that
  // are mostly free), and only a compaction gives those pages back; on an idle daemon its pause
  // (~10 ms for main's ~20 MB) is free
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/** Bytes main's young generation (V8's new space) holds committed now: a burst grows it to 8–16 MB. */
export function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}
