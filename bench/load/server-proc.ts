/**
 * The server under test runs as its own process, so its CPU and memory are measured from
 * /proc (utime+stime include every thread of the process: uWS, piscina workers, GC).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { daemonEnv, listening } from '../../src/bridge/daemon.js';
import { scratchStateDir, trackChild } from './procs.js';

/** the checkout: two levels up from source (bench/load, as tests import it), three from dist/bench/load */
export const ROOT = fileURLToPath(new URL(import.meta.url.includes('/dist/bench/') ? '../../../' : '../../', import.meta.url));

/** gasoline: the build under test; ceiling: frames counted, never decoded; reference: the plain first server (reference-server.ts) */
export type ServerKind = 'gasoline' | 'ceiling' | 'reference';

export interface ServerProc {
  kind: ServerKind;
  port: number;
  pid: number;
  child: ChildProcess;
  stderr: () => string;
  stop: () => Promise<number | null>;
}

export interface SpawnOptions {
  kind: ServerKind;
  port: number;
  threads?: number;
  /** ceiling only */
  seqOffset?: number;
  /** the checkout whose build is run (head by default; a base worktree under --compare) */
  root?: string;
  startTimeoutMs?: number;
  /** gasoline only: a state dir prepared by the caller (a pairing secret preseeded); default a scratch one */
  stateDir?: string;
  /** reference only: along Gasoline's hops behind a bridge (reference-server.ts, `--hops`) */
  hops?: boolean;
}

export async function startServer(o: SpawnOptions): Promise<ServerProc> {
  const args =
    o.kind === 'gasoline'
      ? [join(o.root ?? ROOT, 'bin/gasoline'), '--server', '--port', String(o.port)]
      : o.kind === 'reference'
        ? [join(ROOT, 'dist/bench/load/reference-server.js'), '--port', String(o.port), ...(o.hops ? ['--hops'] : [])]
        : [join(ROOT, 'dist/bench/load/ceiling-server.js'), '--port', String(o.port), ...(o.seqOffset !== undefined ? ['--seq-offset', String(o.seqOffset)] : [])];
  // gasoline runs with the environment a bridge starts its daemon with (the allocator settings)
  const env: NodeJS.ProcessEnv = {
    ...(o.kind === 'gasoline' ? daemonEnv(process.env) : process.env),
    GASOLINE_LOG_LEVEL: 'info', // the readiness signal is the info line "ingest server listening"
    GASOLINE_STATE_DIR: o.stateDir ?? scratchStateDir(),
  };
  if (o.threads !== undefined) env.GASOLINE_THREADS = String(o.threads);
  // the reference's pushes are its stdout lines
  const child = spawn(process.execPath, args, { cwd: o.root ?? ROOT, env, stdio: ['ignore', o.kind === 'reference' ? 'pipe' : 'ignore', 'pipe'] });
  trackChild(child);
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    err = (err + d).slice(-8000);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // never leave a half-started server holding the port for the next profile
      child.kill('SIGKILL');
      reject(new Error(`${o.kind} did not say "listening" within ${o.startTimeoutMs ?? 20_000} ms; stderr:\n${err}`));
    }, o.startTimeoutMs ?? 20_000);
    const onData = (): void => {
      if (/listening/i.test(err)) {
        clearTimeout(timer);
        child.stderr!.off('data', onData);
        resolve();
      }
    };
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${o.kind} exited with ${code} before listening; stderr:\n${err.trim()}`));
    });
  });
  const stop = async (): Promise<number | null> => {
    if (child.exitCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 8000);
    const code = await exited;
    clearTimeout(t);
    return code;
  };
  return { kind: o.kind, port: o.port, pid: child.pid!, child, stderr: () => err, stop };
}

const CLK_TCK = 100;

/** CPU seconds (user + system, all threads) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the parenthesised command name; utime and stime are fields 14 and 15
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
}

/**
 * Times the process's threads went to sleep and were woken since they started: the sum of each
 * thread's voluntary context switches (/proc/<pid>/task/<tid>/status). Over an idle window it
 * counts wake-ups, timers and polls alike; threads that ended meanwhile drop out of the sum.
 */
export function wakeups(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
      if (m) n += Number(m[1]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return n;
}

/** Peak resident set (VmHWM) in MB. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

export async function getHealth(port: number): Promise<Record<string, unknown>> {
  const r = await fetch(`http://127.0.0.1:${port}/health`);
  return (await r.json()) as Record<string, unknown>;
}

export function freePortFrom(base: number): number {
  // ports are picked per profile by the caller; distinct bases avoid TIME_WAIT clashes
  return base + (process.pid % 200);
}

/** A loopback port nobody listens on right now (other benches may share this machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** true once nothing accepts a connection on 127.0.0.1:port (a stopped daemon let it go) */
export async function waitPortFree(port: number, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (!(await listening(port))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
