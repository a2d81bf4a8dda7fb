/**
 * Everything the bench starts must be gone when it ends, also on a failure or Ctrl-C. Children
 * of the bench die with their pipes, but a daemon a bridge starts is detached (its own process
 * group, reparented away from us) and would outlive the run holding a port. So every scratch
 * state dir and every child is registered here, and the exit handler kills, by pid, each child
 * still running and each process whose command line names one of our scratch state dirs (only a
 * daemon started for this run has one: the dirs are mkdtemp'd per run).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive } from '../../src/bridge/daemon.js';

const children = new Set<ChildProcess>();
const stateDirs = new Set<string>();
let installed = false;

export function trackChild(c: ChildProcess): void {
  installCleanup();
  children.add(c);
  c.once('exit', () => children.delete(c));
}

/** A fresh state dir under the OS temp dir, removed (with what runs from it) when the bench exits. */
export function scratchStateDir(): string {
  installCleanup();
  const dir = mkdtempSync(join(tmpdir(), 'gasoline-bench-'));
  stateDirs.add(dir);
  return dir;
}

/** Pids of the processes whose argv holds `--state-dir <dir>`; `daemonsOnly`: and `--server`. */
export function pidsUsingStateDir(dir: string, daemonsOnly = false): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out; // not Linux: the tracked children are all we can end
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const i = argv.indexOf('--state-dir');
    if (i >= 0 && argv[i + 1] === dir && (!daemonsOnly || argv.includes('--server'))) out.push(Number(e));
  }
  return out;
}


const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** SIGTERM (a graceful stop), wait until the pid is gone, SIGKILL past `boundMs`. */
export async function terminate(pid: number, boundMs = 10_000): Promise<'stopped' | 'killed' | 'gone'> {
  if (!alive(pid)) return 'gone';
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return 'gone';
  }
  const end = Date.now() + boundMs;
  while (Date.now() < end) {
    if (!alive(pid)) return 'stopped';
    await sleep(25);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // it went in the meantime
  }
  while (alive(pid)) await sleep(25);
  return 'killed';
}

/** Synchronous, so it can run in an 'exit' handler. Removes the dirs too when `removeDirs`. */
export function killEverything(removeDirs = true): number {
  let killed = 0;
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null && c.pid !== undefined) {
      try {
        process.kill(c.pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  for (const dir of stateDirs) {
    for (const pid of pidsUsingStateDir(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
    if (removeDirs) rmSync(dir, { recursive: true, force: true });
  }
  if (removeDirs) stateDirs.clear();
  return killed;
}

/** Once per process: end everything the bench started on exit, Ctrl-C and SIGTERM. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    killEverything();
  });
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.once(sig, () => {
      process.stderr.write(`[bench] ${sig}: ending every process the bench started\n`);
      process.exit(code);
    });
  }
}
