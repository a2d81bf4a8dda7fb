/**
 * The doctor's checks, each a function of what it reads (the process, the port, the state
 * directory, the config), so tests run them against a real daemon, against nothing, and against a
 * state dir made wrong on purpose. A failure carries the command that fixes it.
 */
import { existsSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { probe, type Probe } from '../bridge/daemon.js';
import { fetchText } from '../bridge/http.js';
import { tokenPath } from '../daemon/contract.js';
import { checkBrowserTransport, describeRedaction } from '../bridge/transport-check.js';
import { compileRedaction } from '../domain/redaction/index.js';
import { threadPolicySupport } from '../pool/thread-policy.js';
import { mallocTrimSupport, type MallocTrimSupport } from '../pool/malloc-trim.js';
import { DIR_MODE } from '../state-dir.js';
import type { Config } from '../config.js';
import { VERSION } from '../version.js';

export type Status = 'ok' | 'fail' | 'skip';

export interface Check {
  name: string;
  status: Status;
  detail: string;
  /** for a failure: the command (or the one step) that fixes it */
  fix?: string;
}

/** Node's range the package runs on: uWebSockets.js ships its native binary for Node 20's ABI only */
export const NODE_RANGE = { min: [20, 10], belowMajor: 21 } as const;

export async function checkNode(version = process.versions.node): Promise<Check> {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const inRange = major === NODE_RANGE.min[0] && minor >= NODE_RANGE.min[1] && major < NODE_RANGE.belowMajor;
  const fix = 'install Node 20.10 or later 20.x (e.g. `nvm install 20`), then reinstall: npm install -g gasoline-<version>.tgz';
  if (!inRange) return { name: 'node', status: 'fail', detail: `node v${version}; gasoline runs on >=20.10 <21 (its native uWebSockets.js binary is built for Node 20's ABI)`, fix };
  try {
    await import('../transport/uws.js');
  } catch (e) {
    return { name: 'node', status: 'fail', detail: `node v${version}, but ${(e as Error).message}`, fix };
  }
  return { name: 'node', status: 'ok', detail: `v${version}; the native uWebSockets.js binary loads (ABI ${process.versions.modules})` };
}

/** Whether an idle daemon gives a burst's freed C heap back (glibc's malloc_trim, src/pool/malloc-trim.ts). */
export function checkMallocTrim(support: MallocTrimSupport = mallocTrimSupport()): Check {
  const name = 'memory';
  if (support.available) return { name, status: 'ok', detail: "glibc's malloc_trim loads: an idle daemon gives back the C heap a burst's workers freed" };
  return { name, status: 'skip', detail: `${support.reason}: after a burst an idle daemon keeps ~2 MB more for each worker its pool grew to` };
}

/** Whether the daemon can put threads at SCHED_IDLE: V8's helpers (pool.helper_threads) and its quiet ingest worker (pool.worker_policy); src/pool/thread-policy.ts. */
export function checkThreadPolicy(support: ReturnType<typeof threadPolicySupport> = threadPolicySupport()): Check {
  const name = 'scheduling';
  if (support.available) return { name, status: 'ok', detail: "the thread-policy addon loads: V8's compiles and collector helpers (and, with pool.worker_policy idle, the ingest worker while it keeps up) run at SCHED_IDLE, below the threads that answer agents" };
  return { name, status: 'skip', detail: `${support.reason}: V8's helper threads (and the ingest worker) keep the normal policy, and under load an observe call may wait behind them for a core` };
}

export function checkRedaction(config: Readonly<Config>): Check {
  try {
    compileRedaction(config.redaction);
  } catch (e) {
    return { name: 'redaction', status: 'fail', detail: (e as Error).message, fix: 'correct or remove that rule under "redaction" in your --config file' };
  }
  const n = config.redaction.rules?.length ?? 0;
  return { name: 'redaction', status: 'ok', detail: `the built-in rules${n ? ` and ${n} rule${n === 1 ? '' : 's'} of yours` : ''} compile` };
}

/** most paths a failure lists; the fix covers them all */
const SHOW = 5;
const WALK_MAX = 10_000;

/** The state directory's owner and modes, read only (a starting daemon repairs; the doctor tells). */
export function checkStateDir(dir: string): Check {
  const name = 'state dir';
  if (!existsSync(dir)) return { name, status: 'ok', detail: `${dir} does not exist yet (created 0700 at the first start)` };
  const uid = process.getuid?.();
  if (uid === undefined) return { name, status: 'skip', detail: `${dir}: no file modes on this platform` };
  const st = statSync(dir);
  if (!st.isDirectory()) return { name, status: 'fail', detail: `${dir} is not a directory`, fix: 'choose another: --state-dir DIR (or GASOLINE_STATE_DIR)' };
  const foreign: string[] = [];
  const wide: string[] = [];
  let seen = 0;
  const walk = (p: string, isDir: boolean, mode: number, owner: number, depth: number): void => {
    if (owner !== uid) foreign.push(p);
    if (isDir ? (mode & 0o777) !== DIR_MODE : (mode & 0o077) !== 0) wide.push(`${p} (${(mode & 0o777).toString(8)})`);
    if (!isDir || depth >= 4) return;
    for (const n of readdirSync(p)) {
      if (++seen > WALK_MAX) return;
      const c = join(p, n);
      const cs = lstatSync(c);
      if (cs.isSymbolicLink()) continue;
      walk(c, cs.isDirectory(), cs.mode, cs.uid, depth + 1);
    }
  };
  walk(dir, true, st.mode, st.uid, 0);
  if (foreign.length) return { name, status: 'fail', detail: `owned by another user: ${foreign.slice(0, SHOW).join(', ')}${foreign.length > SHOW ? ` and ${foreign.length - SHOW} more` : ''}`, fix: `choose a state dir of your own: --state-dir DIR (or GASOLINE_STATE_DIR), or: sudo chown -R $(id -u) ${dir}` };
  if (wide.length) return { name, status: 'fail', detail: `wider than 0700/0600: ${wide.slice(0, SHOW).join(', ')}${wide.length > SHOW ? ` and ${wide.length - SHOW} more` : ''}`, fix: `chmod -R go-rwx ${dir} && chmod 700 ${dir}` };
  return { name, status: 'ok', detail: `${dir}: yours, 0700 (files 0600)` };
}

export interface DaemonView {
  probe: Probe;
  /** /health's report, when a gasoline answered */
  health: Record<string, unknown> | null;
}

export async function viewPort(port: number): Promise<DaemonView> {
  const p = await probe(port);
  if (p.state !== 'gasoline') return { probe: p, health: null };
  try {
    const res = await fetchText({ port, method: 'GET', path: '/health', timeoutMs: 3000 });
    return { probe: p, health: JSON.parse(res.body) as Record<string, unknown> };
  } catch {
    return { probe: p, health: null };
  }
}

export function checkPort(port: number, v: DaemonView): Check {
  const name = `port ${port}`;
  if (v.probe.state === 'none') return { name, status: 'ok', detail: 'free: the first agent\'s bridge starts the daemon here' };
  if (v.probe.state === 'gasoline') return { name, status: 'ok', detail: `gasoline's (${v.probe.info.mode ?? 'daemon'}, pid ${v.probe.info.pid ?? '?'})` };
  return { name, status: 'fail', detail: `taken by something that is not gasoline (${v.probe.detail})`, fix: `free it (see: lsof -iTCP:${port} -sTCP:LISTEN), or give every agent's gasoline another port: --port N (or GASOLINE_PORT)` };
}

export function checkDaemon(port: number, v: DaemonView): Check {
  const name = 'daemon';
  if (v.probe.state !== 'gasoline') return { name, status: 'skip', detail: 'none runs (an agent\'s bridge starts one; or: gasoline --server)' };
  const { version, pid } = v.probe.info;
  if (version !== VERSION) return { name, status: 'fail', detail: `version ${version} runs (pid ${pid ?? '?'}); this gasoline is ${VERSION}`, fix: `gasoline --stop --port ${port} (the next agent's bridge starts ${VERSION})` };
  return { name, status: 'ok', detail: `version ${version}, pid ${pid ?? '?'}, up ${String(v.health?.uptime_s ?? '?')} s` };
}

/** where the built extension is, for the fix that says to load it */
export const EXTENSION_DIR = ['../../extension/dist', '../../../extension/dist'].map((p) => fileURLToPath(new URL(p, import.meta.url))).find((p) => existsSync(p)) ?? fileURLToPath(new URL('../../../extension/dist', import.meta.url));

export function checkExtension(v: DaemonView): Check {
  const name = 'extension';
  if (!v.health) return { name, status: 'skip', detail: 'no daemon to ask' };
  const ext = (v.health.extension ?? {}) as { connected?: boolean; producers?: unknown[] };
  if (ext.connected) return { name, status: 'ok', detail: `connected (${ext.producers?.length ?? 0} producer${ext.producers?.length === 1 ? '' : 's'})` };
  return {
    name,
    status: 'fail',
    detail: 'not connected to the daemon',
    fix: `load it in Chrome: chrome://extensions → Developer mode → Load unpacked → ${EXTENSION_DIR} (or drop ${join(EXTENSION_DIR, '..', '..', 'dist', 'gasoline-extension.zip')} there); an unpacked build of another id needs GASOLINE_ALLOWED_ORIGINS`,
  };
}

/** The bearer token file bridges read: present, ours, 0600. Only a daemon (--server) has one. */
export function checkToken(stateDir: string, port: number, v: DaemonView): Check {
  const name = 'token';
  if (v.probe.state !== 'gasoline') return { name, status: 'skip', detail: 'no daemon, no token yet' };
  if (v.probe.info.mode !== 'server') return { name, status: 'skip', detail: `a --${v.probe.info.mode ?? 'standalone'} holds the port: it serves no bridges and has no token` };
  const path = tokenPath(stateDir, port);
  const fix = `the daemon runs with another state dir or user: gasoline --stop --port ${port}, and the next agent's bridge starts one with ${stateDir}`;
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return { name, status: 'fail', detail: `${path} is missing`, fix };
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return { name, status: 'fail', detail: `${path} belongs to uid ${st.uid}`, fix };
  if (uid !== undefined && (st.mode & 0o077) !== 0) return { name, status: 'fail', detail: `${path} has mode ${(st.mode & 0o777).toString(8)}, not 600`, fix: `chmod 600 ${path}` };
  return { name, status: 'ok', detail: `${path}: 0600, yours` };
}

/** The side panel's door (issue 19 item 7): a daemon's /mcp answers initialize; a standalone's refuses a request without a panel token. */
export async function checkTransport(stateDir: string, port: number, v: DaemonView): Promise<Check> {
  const name = 'transport';
  if (v.probe.state !== 'gasoline' || !v.health) return { name, status: 'skip', detail: 'no daemon to ask' };
  const r = await checkBrowserTransport(port, stateDir, v.probe.info.mode ?? 'server');
  if (r.ok) return { name, status: 'ok', detail: r.detail };
  return { name, status: 'fail', detail: r.detail, fix: `gasoline --stop --port ${port} (the next agent's bridge starts a daemon of this version with ${stateDir})` };
}

/** The redaction policy the running daemon has in force (its rules, their version), from /health. */
export function checkPolicy(v: DaemonView): Check {
  const name = 'policy';
  if (!v.health) return { name, status: 'skip', detail: 'no daemon to ask' };
  const r = describeRedaction(v.health);
  if (r.ok) return { name, status: 'ok', detail: `redaction policy ${r.detail}` };
  return { name, status: 'fail', detail: r.detail, fix: 'the daemon is older than this gasoline: gasoline --stop (the next agent\'s bridge starts this version)' };
}

/** Whether a connected extension proved the pairing secret (docs/SECURITY.md). */
export function checkPairing(port: number, v: DaemonView): Check {
  const name = 'pairing';
  if (!v.health) return { name, status: 'skip', detail: 'no daemon to ask' };
  const ext = (v.health.extension ?? {}) as { connected?: boolean; paired?: boolean };
  const pr = (v.health.pairing ?? {}) as { verified_open?: number; unverified_open?: number; unverified_records?: number };
  const counts = `${pr.verified_open ?? 0} verified, ${pr.unverified_open ?? 0} unverified producer(s); ${pr.unverified_records ?? 0} unverified records stored`;
  if (ext.paired) return { name, status: 'ok', detail: `the extension is paired and proved it (${counts})` };
  if (!ext.connected) return { name, status: 'skip', detail: `no extension connected to prove it (${counts})` };
  return { name, status: 'fail', detail: `an extension is connected but did not prove pairing: it gets no commands and its records are marked unverified (${counts})`, fix: `gasoline pair --port ${port}, then type the code into the extension's popup` };
}
