/**
 * Lowering one thread's CPU priority (raising its nice value) from inside it. Ingest is
 * throughput work and MCP reads are latency work, and on a machine with few cores they take turns
 * on the same cores: an ingest worker that yields to main and the scan worker when they wake
 * shortens the reads' tail, and loses nothing while the cores have room. Only the daemon's own
 * threads are ranked so: Linux groups CPU by session (autogroup), and a daemon runs in its own.
 *
 * Linux only: there setpriority(PRIO_PROCESS, tid) changes one thread (the kernel's threads are
 * tasks), and Node's os.setPriority passes its id straight to setpriority. The thread's id is
 * /proc/thread-self's target. Elsewhere the same call would renice the whole process, so without
 * a thread id nothing is changed and the caller is told why.
 *
 * Raising nice needs no privilege; it is relative to the thread's nice at start (inherited from
 * main) and capped at 19. It cannot be undone without privilege, which is why only threads that
 * are replaced, never reused, are lowered.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What a thread's priority is after the attempt: its id and nice, or why it was left as it was. */
export type ThreadPriority = { tid: number; nice: number; capped?: true } | { error: string; unsupported?: true };

/** The nice value's upper end on Linux (the lowest priority). */
export const NICE_MAX = 19;

/** The calling thread's kernel id, or undefined where there is no /proc/thread-self (not Linux). */
export function ownThreadId(): number | undefined {
  try {
    // "<pid>/task/<tid>"
    const m = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Adds `offset` to the calling thread's nice value (capped at 19); 0 only reads it. */
export function lowerOwnPriority(offset: number): ThreadPriority {
  const tid = ownThreadId();
  if (tid === undefined) return { error: 'no per-thread priority here (no /proc/thread-self): left unchanged', unsupported: true };
  try {
    const now = getPriority(tid);
    if (offset <= 0) return { tid, nice: now };
    const want = Math.min(NICE_MAX, now + offset);
    if (want !== now) setPriority(tid, want);
    const nice = getPriority(tid);
    return now + offset > NICE_MAX ? { tid, nice, capped: true } : { tid, nice };
  } catch (e) {
    return { error: `setpriority failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}
