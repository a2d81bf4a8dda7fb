/**
 * Finding, starting and stopping the daemon on a port, from outside it: its /health says who it
 * is (version, pid), a lock file in the state dir makes bridges started at one moment start one
 * daemon, and a daemon is started detached (its own process group, its output in a log file) so
 * it outlives the bridge that started it.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockPath } from '../daemon/contract.js';
import { FILE_MODE, makePrivateDir } from '../state-dir.js';
import { fetchText, type HttpAnswer } from './http.js';

/** what /health says about the process on the port, when it is a gasoline */
export interface DaemonInfo {
  version: string;
  pid: number | undefined;
  mode: string | undefined;
}

export type Probe = { state: 'none' } | { state: 'foreign'; detail: string } | { state: 'gasoline'; info: DaemonInfo };

/** /health lists every client and kind; far below this */
const HEALTH_MAX_BYTES = 4 * 1024 * 1024;

/** a daemon's start (workers warmed up, port bound) takes seconds; past this a lock is stale */
export const START_TIMEOUT_MS = 30_000;

/** GET /health on 127.0.0.1:port. 'none': nothing answers; 'foreign': something that is not gasoline. */
export async function probe(port: number, timeoutMs = 1500): Promise<Probe> {
  let res: HttpAnswer;
  try {
    res = await fetchText({ port, method: 'GET', path: '/health', timeoutMs }, HEALTH_MAX_BYTES);
  } catch {
    // refused (nothing listens), no answer in time, or an answer too big to be ours
    return (await listening(port)) ? { state: 'foreign', detail: 'something listens but does not answer GET /health' } : { state: 'none' };
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return { state: 'foreign', detail: `GET /health answered ${res.status}, not JSON` };
  }
  const h = (body ?? {}) as { status?: unknown; version?: unknown; pid?: unknown; mode?: unknown; kinds?: unknown };
  if (res.status !== 200 || h.status !== 'ok' || typeof h.version !== 'string' || typeof h.kinds !== 'object') return { state: 'foreign', detail: `GET /health answered ${res.status} without gasoline's report` };
  return {
    state: 'gasoline',
    info: { version: h.version, pid: Number.isInteger(h.pid) ? (h.pid as number) : undefined, mode: typeof h.mode === 'string' ? h.mode : undefined },
  };
}

/** true when something accepts a TCP connection on 127.0.0.1:port */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    const done = (v: boolean): void => {
      sock.destroy();
      resolve(v);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.setTimeout(1000, () => done(false));
  });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, it is just not ours
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process is a gasoline, as far as this system can tell: on Linux its command line
 * names bin/gasoline or dist/src/cli; elsewhere /health's word is all there is. A pid that /health
 * reports is checked before it gets a signal, so a recycled pid is never hit.
 */
export function isGasolineProcess(pid: number): boolean {
  let cmd: string;
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return process.platform !== 'linux' && alive(pid);
  }
  return /gasoline|dist\/src\/cli\.js/.test(cmd);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until nothing listens on the port; false when it is still taken at the deadline. */
export async function waitPortFree(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await listening(port))) return true;
    await sleep(100);
  }
  return !(await listening(port));
}

/** The file a daemon started by a bridge writes its stdout and stderr to (its own log is daemon-PORT.log). */
export function daemonOutputPath(stateDir: string, port: number): string {
  return join(stateDir, `daemon-${port}.out`);
}

interface LockBody {
  pid: number;
  time: number;
}

/**
 * Takes the spawn lock: O_EXCL, so of bridges racing exactly one creates it. A lock whose
 * holder is dead, or older than a start can take, is stale: it is removed and taken again.
 * Returns a release function, or null when a live bridge holds it (it is starting the daemon).
 */
export function tryLock(stateDir: string, port: number, now = Date.now()): (() => void) | null {
  const path = lockPath(stateDir, port);
  makePrivateDir(stateDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', FILE_MODE);
      const body: LockBody = { pid: process.pid, time: now };
      writeSync(fd, JSON.stringify(body));
      closeSync(fd);
      return () => {
        // only our own lock: a stale-reclaim by another bridge may have replaced it
        if (readLock(path)?.pid === process.pid) rmQuiet(path);
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const held = readLock(path);
    // a lock being written this instant reads empty: its writer is alive, leave it
    if (held === undefined) return null;
    const stale = held === null || !alive(held.pid) || now - held.time > START_TIMEOUT_MS;
    if (!stale) return null;
    rmQuiet(path);
  }
  return null;
}

/** the lock's body; null when unreadable garbage (stale), undefined when empty (being written) */
function readLock(path: string): LockBody | null | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  if (text === '') return undefined;
  try {
    const b = JSON.parse(text) as Partial<LockBody>;
    return Number.isInteger(b.pid) && typeof b.time === 'number' ? (b as LockBody) : null;
  } catch {
    return null;
  }
}

function rmQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

const BIN = fileURLToPath(new URL('../../../bin/gasoline', import.meta.url));

/**
 * glibc's allocator settings for the daemon, read once at exec (so set by whoever spawns it).
 * By default glibc gives each thread that mallocs an arena of its own (up to 8 per core) and raises
 * its trim threshold on its own, so every ingest worker that ever ran left ~2 MB resident after it
 * ended: an elastic pool that grew to N workers under a burst kept N arenas after shrinking
 * (+7 MB at 4 workers, growing with the core count). Two arenas, whatever the core count, and a
 * fixed trim threshold bound that: idle RSS after a burst 76-78 MB over ring data at 2, 4 and 8
 * workers (80-82 with glibc's defaults). Until 2026-12-02 the settings also turned off the thread
 * caches and fast bins (72-73 MB), which cost a third of the daemon's CPU per ingested event on
 * the Firecracker machine (every free consolidating, ~8x the madvise calls): "The machine of
 * 2026-12-01" in PERFORMANCE.md. A value the user set is left alone.
 */
export const DAEMON_MALLOC_TUNABLES = 'glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072';

/** The environment a daemon is started with: the caller's, plus DAEMON_MALLOC_TUNABLES unless GLIBC_TUNABLES is set. */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env.GLIBC_TUNABLES === undefined ? { ...env, GLIBC_TUNABLES: DAEMON_MALLOC_TUNABLES } : env;
}

/**
 * Starts `gasoline --server` detached: its own process group (a signal to the bridge's group,
 * such as the agent's Ctrl-C, does not reach it), stdin closed, output to a 0600 file.
 */
export async function spawnDaemon(stateDir: string, port: number, args: string[]): Promise<number> {
  // loaded only when a daemon is started: most bridges find one running
  const { spawn } = await import('node:child_process');
  makePrivateDir(stateDir);
  const out = openSync(daemonOutputPath(stateDir, port), 'a', FILE_MODE);
  try {
    const child = spawn(process.execPath, [BIN, ...args], { detached: true, stdio: ['ignore', out, out], env: daemonEnv(process.env) });
    child.unref();
    if (child.pid === undefined) throw new Error('the daemon process could not be started');
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/**
 * SIGTERM to a daemon (checked to be gasoline first), then wait for its port to be free and the
 * process gone: a daemon that closed its listener may still be finishing connections it holds,
 * and whoever stops it next expects it gone (a new daemon, a replaced version).
 */
export async function stopDaemon(port: number, pid: number, timeoutMs = 20_000): Promise<'stopped' | 'not_gasoline' | 'timeout'> {
  if (!isGasolineProcess(pid)) return 'not_gasoline';
  const deadline = Date.now() + timeoutMs;
  try {
    process.kill(pid, 'SIGTERM');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
  if (!(await waitPortFree(port, timeoutMs))) return 'timeout';
  while (alive(pid)) {
    if (Date.now() > deadline) return 'timeout';
    await sleep(50);
  }
  return 'stopped';
}
