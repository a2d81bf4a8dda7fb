/**
 * A thread's kernel scheduling policy: putting one at SCHED_IDLE, and what the kernel says of it
 * (its policy, and how long it has waited for a core while runnable).
 *
 * SCHED_IDLE: a thread that any normal thread waking on its core preempts at once, and a core
 * running only such threads counts as idle when the kernel places a waking thread. It runs
 * whenever a core has nothing else to do. Lowering a thread to it needs no privilege; going back
 * needs privilege an unprivileged daemon lacks (RLIMIT_NICE is 0), so a thread lowered stays so
 * and only a replacement thread runs normal again.
 *
 * Linux only, through a small addon (native/thread-policy.c): Node has no call for it. Elsewhere,
 * or when refused, nothing changes and the caller is told why.
 */
import { readFileSync } from 'node:fs';
import { loadAddon } from './native-addon.js';

interface PolicyAddon {
  /** 0, or the errno that refused it */
  idle(tid: number): number;
}

/** The kernel's number for SCHED_IDLE (the policy field of /proc/<pid>/task/<tid>/stat). */
export const SCHED_IDLE = 5;

let loaded: { addon: PolicyAddon } | { reason: string } | undefined;

function load(): { addon: PolicyAddon } | { reason: string } {
  if (loaded) return loaded;
  const r = loadAddon<PolicyAddon>('thread-policy', ['idle']);
  loaded = 'addon' in r ? r : { reason: r.missing ? r.reason : `thread-policy addon did not load: ${r.reason}` };
  return loaded;
}

/** Puts thread `tid` of this process at SCHED_IDLE: 0, the errno that refused it, or why it could not be tried. */
export function idleThread(tid: number): number | { reason: string } {
  const r = load();
  return 'addon' in r ? r.addon.idle(tid) : { reason: r.reason };
}

/** Whether this process can lower a thread's policy, and if not, why (the doctor). */
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

/**
 * How long thread `tid` has run on a core and waited on a run queue, runnable but not running,
 * since it started (ms; the first two fields of /proc/<pid>/task/<tid>/schedstat, in ns), or
 * undefined where the kernel keeps no such record or the thread is gone.
 */
export function threadSchedStat(tid: number, pid: number = process.pid): { runMs: number; waitMs: number } | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
    const run = Number(f[0]);
    const wait = Number(f[1]);
    return Number.isFinite(run) && Number.isFinite(wait) ? { runMs: run / 1e6, waitMs: wait / 1e6 } : undefined;
  } catch {
    return undefined;
  }
}
