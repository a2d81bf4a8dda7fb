/**
 * Node's and V8's own helper threads put at SCHED_IDLE, so that the threads that answer an agent
 * never wait behind them for a core.
 *
 * What they are: every thread of the process but main when bin/gasoline starts, before any worker
 * or libuv's pool exists (thread-ids.ts). That is V8's platform workers (TurboFan's compiles, the
 * collector's parallel and concurrent helpers, for main and every worker alike), Node's
 * delayed-task scheduler and the thread that waits for SIGUSR1. Threads started later (the ingest
 * and scan workers, libuv's pool) are created by threads that keep the normal policy, and inherit it.
 *
 * Why: on a machine with two cores, the tail of an observe call under load was threads on its way
 * (main, the scan worker) runnable but waiting while a compile or a collector helper held a core
 * (PERFORMANCE.md, "Twelfth pass" and "Seventeenth pass"; what it gained and cost: "Eighteenth
 * pass"). A thread at SCHED_IDLE is preempted at
 * once by any normal thread that wakes, and a core running only such threads counts as idle when
 * the kernel places a waking thread. It still runs whenever a core has nothing else to do, so on a
 * machine with room nothing changes; under load the helpers' work waits (or is done by the thread
 * that needs it: V8's main and worker threads join their own GC jobs).
 *
 * Linux only (thread-policy.ts). It cannot be undone without privilege, which is why it is done
 * once, at start, to threads that live as long as the process.
 */
import { ownThreadId } from './thread-priority.js';
import { idleThread } from './thread-policy.js';

/** What was done: how many threads now run SCHED_IDLE, or why none does. */
export type HelperThreads = { policy: 'idle'; threads: number; refused?: number } | { policy: 'normal'; reason: string };

/**
 * Puts the threads of `atStart` (the process's threads when bin/gasoline began, thread-ids.ts) at
 * SCHED_IDLE, all but the caller's own. Without that list nothing is changed: a list taken later
 * would hold libuv's pool too, whose file writes (logs, trails, state) should not wait for idle
 * cores.
 */
export function idleHelperThreads(atStart: readonly number[] | undefined): HelperThreads {
  const self = ownThreadId();
  if (self === undefined) return { policy: 'normal', reason: 'no per-thread scheduling policy here (no /proc/thread-self)' };
  if (!atStart) return { policy: 'normal', reason: 'no list of the threads the process started with' };
  const tids = atStart.filter((t) => t !== self);
  let done = 0;
  let refused = 0;
  let firstErrno = 0;
  for (const t of tids) {
    const errno = idleThread(t);
    if (typeof errno === 'object') return { policy: 'normal', reason: errno.reason };
    if (errno === 0) done++;
    else {
      refused++;
      firstErrno ||= errno;
    }
  }
  if (done === 0) return { policy: 'normal', reason: tids.length ? `sched_setscheduler refused every thread (errno ${firstErrno})` : 'no helper thread to lower' };
  return refused ? { policy: 'idle', threads: done, refused } : { policy: 'idle', threads: done };
}
