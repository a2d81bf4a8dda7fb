/**
 * A bridge's first question: is there a daemon of our version on the port, and if not, start
 * one (exactly one, however many bridges ask at the same moment).
 */
import { readFileSync, statSync } from 'node:fs';
import { log } from '../log.js';
import { VERSION } from '../version.js';
import { alive, daemonOutputPath, type DaemonInfo, probe, spawnDaemon, START_TIMEOUT_MS, stopDaemon, tryLock } from './daemon.js';

export type Found =
  | { kind: 'ready'; info: DaemonInfo }
  /** a gasoline daemon of another version: never stopped without --replace */
  | { kind: 'mismatch'; info: DaemonInfo }
  | { kind: 'standalone'; info: DaemonInfo }
  | { kind: 'foreign'; detail: string }
  | { kind: 'none' }
  | { kind: 'failed'; detail: string };

export interface FindOptions {
  stateDir: string;
  port: number;
  daemonArgs: string[];
  /** false (--connect, or a check): report what is there, start nothing */
  start: boolean;
  /** stop a daemon of another version and start ours */
  replace: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function findOrStart(o: FindOptions): Promise<Found> {
  const { stateDir, port } = o;
  const deadline = Date.now() + START_TIMEOUT_MS;
  let replaced = false;
  for (;;) {
    const p = await probe(port);
    if (p.state === 'gasoline') {
      if (p.info.mode === 'standalone') return { kind: 'standalone', info: p.info };
      if (p.info.version === VERSION) return { kind: 'ready', info: p.info };
      if (!o.replace || !o.start || replaced) return { kind: 'mismatch', info: p.info };
      replaced = true;
      const r = await replace(port, p.info);
      if (r) return { kind: 'failed', detail: r };
      continue;
    }
    if (p.state === 'foreign') return { kind: 'foreign', detail: p.detail };
    if (!o.start) return { kind: 'none' };
    if (Date.now() > deadline) return { kind: 'failed', detail: `no daemon answered within ${START_TIMEOUT_MS / 1000} s` };
    const release = tryLock(stateDir, port);
    if (!release) {
      // another bridge holds the lock and is starting it: wait for its /health
      await sleep(50);
      continue;
    }
    try {
      // a bridge that held the lock a moment ago may have brought one up
      if ((await probe(port)).state !== 'none') continue;
      const failed = await startAndWait(o, deadline);
      if (failed) return { kind: 'failed', detail: failed };
    } finally {
      release();
    }
  }
}

/** null when a daemon answers /health, else why not */
async function startAndWait(o: FindOptions, deadline: number): Promise<string | null> {
  const { stateDir, port } = o;
  const outPath = daemonOutputPath(stateDir, port);
  const from = sizeOf(outPath);
  const pid = await spawnDaemon(stateDir, port, o.daemonArgs);
  log.info('bridge started a daemon', { pid, port, output: daemonOutputPath(stateDir, port) });
  while (Date.now() < deadline) {
    if ((await probe(port)).state !== 'none') return null;
    if (!alive(pid)) return `it exited at start${startOutput(outPath, from)}`;
    await sleep(50);
  }
  return `it did not answer within ${START_TIMEOUT_MS / 1000} s`;
}

async function replace(port: number, info: DaemonInfo): Promise<string | null> {
  if (!info.pid) return `the daemon of version ${info.version} on port ${port} does not report its pid; stop it yourself`;
  log.warn('replacing the daemon of another version', { port, pid: info.pid, version: info.version, ours: VERSION });
  const r = await stopDaemon(port, info.pid);
  if (r === 'not_gasoline') return `pid ${info.pid}, which /health on port ${port} names, is not a gasoline process; nothing was stopped`;
  if (r === 'timeout') return `the daemon of version ${info.version} (pid ${info.pid}) did not free port ${port} after SIGTERM`;
  return null;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * What the daemon said before it exited, from its output file (appended to by every start): a
 * configuration it refused is quoted whole (the bridge does not validate what only the daemon
 * reads: src/bridge/options.ts), anything else by its last line.
 */
export function startOutput(path: string, from: number): string {
  let text: string;
  try {
    const all = readFileSync(path);
    text = all.subarray(Math.max(from, all.length - 8192)).toString('utf8');
  } catch {
    return '';
  }
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const config = lines.findIndex((l) => l.includes('invalid configuration'));
  const said = config >= 0 ? lines.slice(config).filter((l) => !l.startsWith('(see ')).join(' ') : (lines.at(-1) ?? '');
  return said ? `: ${said.slice(0, 1000)}` : '';
}
