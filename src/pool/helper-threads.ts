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
 * Linux only, no privilege needed (lowering a policy never does), through a small addon
 * (native/thread-policy.c): Node has no call for it. Elsewhere, or when refused, nothing changes
 * and the caller is told why. It cannot be undone without privilege, which is why it is done once,
 * at start, to threads that live as long as the process.
 */
import { readFileSync } from 'node:fs';
import { ownThreadId } from './thread-priority.js';
import { loadAddon } from './native-addon.js';

interface PolicyAddon {
  /** 0, or the errno that refused it */
  idle(tid: number): number;
}

/** What was done: how many threads now run SCHED_IDLE, or why none does. */
export type HelperThreads = { policy: 'idle'; threads: number; refused?: number } | { policy: 'normal'; reason: string };

/** The kernel's number for SCHED_IDLE (the policy field of /proc/<pid>/task/<tid>/stat). */
export const SCHED_IDLE = 5;

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
  const r = load();
  if (!('addon' in r)) return { policy: 'normal', reason: r.reason };
  let done = 0;
  let refused = 0;
  let firstErrno = 0;
  for (const t of tids) {
    const errno = r.addon.idle(t);
    if (errno === 0) done++;
    else {
      refused++;
      firstErrno ||= errno;
    }
  }
  if (done === 0) return { policy: 'normal', reason: tids.length ? `sched_setscheduler refused every thread (errno ${firstErrno})` : 'no helper thread to lower' };
  return refused ? { policy: 'idle', threads: done, refused } : { policy: 'idle', threads: done };
}

let loaded: { addon: PolicyAddon } | { reason: string } | undefined;

function load(): { addon: PolicyAddon } | { reason: string } {
  if (loaded) return loaded;
  const r = loadAddon<PolicyAddon>('thread-policy', ['idle']);
  loaded = 'addon' in r ? r : { reason: r.missing ? r.reason : `thread-policy addon did not load: ${r.reason}` };
  return loaded;
}

/** Whether this process can lower its helper threads, and if not, why (the doctor). */
export function threadPolicySupport(): { available: true } | { available: false; reason: string } {
  if (process.platform !== 'linux') return { available: false, reason: `no per-thread scheduling policy on ${process.platform}` };
  const r = load();
  return 'addon' in r ? { available: true } : { available: false, reason: r.reason };
}

/** A thread's scheduling policy as the kernel reports it (0 normal, 3 batch, 5 idle), or undefined once it is gone. */
export function threadPolicy(tid: number, pid: number = process.pid): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // after the command's closing parenthesis, fields from the 3rd on: the policy is the 41st
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]);
  } catch {
    return undefined;
  }
}
