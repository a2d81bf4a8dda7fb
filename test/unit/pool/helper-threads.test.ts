/**
 * SCHED_IDLE for the threads named (src/pool/helper-threads.ts), read back from the kernel's own
 * record (/proc/<pid>/task/<tid>/stat): the named threads change, the caller and every other
 * thread do not, and what cannot be done is said, never thrown. Real threads, real kernel.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { idleHelperThreads } from '../../../src/pool/helper-threads.js';
import { SCHED_IDLE, threadPolicy, threadPolicySupport } from '../../../src/pool/thread-policy.js';
import { ownThreadId } from '../../../src/pool/thread-priority.js';
import { threadIds } from '../../../src/pool/thread-ids.js';

const linux = existsSync('/proc/thread-self');
const linuxX64 = linux && process.arch === 'x64';

let worker: Worker | undefined;
afterEach(async () => {
  await worker?.terminate();
  worker = undefined;
});

/** a thread of this process that sleeps until terminated, and its kernel id */
async function sleeper(): Promise<number> {
  worker = new Worker(
    `const { readlinkSync } = require('node:fs'); const { parentPort } = require('node:worker_threads');
     parentPort.postMessage(Number(/\\/task\\/(\\d+)$/.exec(readlinkSync('/proc/thread-self'))[1]));
     setInterval(() => {}, 1 << 30);`,
    { eval: true },
  );
  return new Promise((resolve) => worker!.once('message', resolve));
}

describe.runIf(linuxX64)('helper threads at SCHED_IDLE', () => {
  it('loads', () => {
    expect(threadPolicySupport()).toEqual({ available: true });
  });

  it('the threads named, and only they, run SCHED_IDLE after it; the caller is skipped', async () => {
    const tid = await sleeper();
    const self = ownThreadId()!;
    const others = threadIds()!.filter((t) => t !== tid);
    const before = new Map(others.map((t) => [t, threadPolicy(t)]));
    expect(threadPolicy(tid)).toBe(0);
    expect(idleHelperThreads([self, tid])).toEqual({ policy: 'idle', threads: 1 });
    expect(threadPolicy(tid)).toBe(SCHED_IDLE);
    for (const t of others) expect({ t, policy: threadPolicy(t) }).toEqual({ t, policy: before.get(t) });
    expect(threadPolicy(self)).toBe(0);
  });

  it('a thread that is gone is counted refused, the rest still lowered', async () => {
    const tid = await sleeper();
    // pid_max is at most 2^22: no thread has this id
    expect(idleHelperThreads([tid, 2 ** 22 + 7])).toEqual({ policy: 'idle', threads: 1, refused: 1 });
    expect(threadPolicy(tid)).toBe(SCHED_IDLE);
  });

  it('nothing to lower, or every thread refused: the policy stays normal, with the reason', () => {
    expect(idleHelperThreads([ownThreadId()!])).toEqual({ policy: 'normal', reason: 'no helper thread to lower' });
    expect(idleHelperThreads([2 ** 22 + 7])).toEqual({ policy: 'normal', reason: 'sched_setscheduler refused every thread (errno 3)' });
  });
});

describe.runIf(linux)('without the list of threads the process started with', () => {
  it('changes nothing (a list taken now would hold libuv\'s pool) and says so', async () => {
    const tid = await sleeper();
    expect(idleHelperThreads(undefined)).toEqual({ policy: 'normal', reason: 'no list of the threads the process started with' });
    expect(threadPolicy(tid)).toBe(0);
  });
});

describe('threadPolicy', () => {
  it('is undefined for a thread that is not there', () => {
    expect(threadPolicy(2 ** 22 + 7)).toBeUndefined();
  });
});
