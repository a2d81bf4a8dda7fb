/**
 * HTTP load profile: autocannon against `POST /logs` with 50-entry JSON batches at 10
 * connections for a bounded time; req/s, entries/s, and latency percentiles from autocannon's
 * own HDR histogram. Runs against Gasoline, the ceiling server (answers without parsing), and
 * the Go reference implementation when `@brennhill/gasoline-linux-x64` happens to be installed.
 *
 *   node dist/bench/load/http-load.js [--server gasoline|ceiling|go] [--seconds 10] [--port P]
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { logRecord, prng } from './frames.js';
import { cpuSeconds, peakRssMb, ROOT, startServer } from './server-proc.js';
import { pairedStats, quantile, type PairedRatios } from '../paired-stats.js';

const require = createRequire(import.meta.url);

/** The part of autocannon's API and result we use (the package ships no types). */
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  requests: { average: number; total: number; sent: number };
  latency: { p50: number; p99: number; p99_9: number; max: number; average: number };
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = require('autocannon') as Autocannon;

export const ENTRIES_PER_REQUEST = 50;

export type HttpTarget = 'gasoline' | 'ceiling' | 'go';

export interface HttpLoadOptions {
  target: HttpTarget;
  port: number;
  durationMs: number;
  connections: number;
  serverThreads?: number;
  /**
   * the same load, unmeasured, before the measured window (0: none). A fresh Gasoline daemon
   * starts its worker thread on the first body (0.2–0.6 s here) and runs its first second on a
   * cold JIT; the Go reference has neither. A throughput figure is the steady state, so both
   * servers get the same warm-up.
   */
  warmupMs?: number;
  /** POST /logs unless told; GET for /health */
  route?: HttpRouteName;
  root?: string;
}

export type HttpRouteName = '/logs' | '/network-bodies' | '/ci-result' | '/health';

export interface HttpLoadResult {
  target: HttpTarget;
  route: HttpRouteName;
  skipped?: string;
  connections: number;
  duration_s: number;
  /** the unmeasured load before the window (warmupMs), and what it served: a fresh server's first second */
  warmup_s: number;
  warmup_entries_per_s: number | null;
  req_per_s: number;
  entries_per_s: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_p999_ms: number;
  ok_2xx: number;
  non2xx: number;
  status_codes: Record<string, number>;
  errors: number;
  body_bytes: number;
  server_cpu_pct: number | null;
  server_peak_rss_mb: number | null;
}

export function logsBody(seed = 7): string {
  const r = prng(seed);
  const entries = Array.from({ length: ENTRIES_PER_REQUEST }, (_, i) => logRecord(r, 1_732_280_000_000 + i));
  return JSON.stringify({ entries });
}

function networkBodiesBody(seed = 11): string {
  const r = prng(seed);
  const bodies = Array.from({ length: ENTRIES_PER_REQUEST }, (_, i) => ({
    ts: 1_732_280_000_000 + i,
    method: r() < 0.5 ? 'GET' : 'POST',
    url: `https://api.example.test/v1/items/${Math.floor(r() * 1e6)}`,
    status: r() < 0.9 ? 200 : 500,
    content_type: 'application/json',
    duration: Math.round(r() * 500),
    response_headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    response_body: JSON.stringify({ id: Math.floor(r() * 1e6), items: Array.from({ length: 5 }, (_, j) => ({ j, name: `item-${j}` })) }),
  }));
  return JSON.stringify({ bodies });
}

function ciBody(): string {
  return JSON.stringify({ status: 'failure', source: 'bench', ref: 'refs/heads/bench', commit: 'bench0000', summary: '2 failed, 98 passed', failures: [{ name: 'checkout > pays', message: 'expected 200, got 503' }, { name: 'cart > adds', message: 'timeout' }], duration_ms: 81234 });
}

export function routeBody(route: HttpRouteName): string {
  return route === '/logs' ? logsBody() : route === '/network-bodies' ? networkBodiesBody() : route === '/ci-result' ? ciBody() : '';
}

const GO_PACKAGE = '@brennhill/gasoline-linux-x64';
const GO_VERSION = '0.7.9';
/** where `fetchGoBinary` unpacks the reference (outside the repo: it is AGPL and not ours to commit) */
export const GO_CACHE = join(tmpdir(), 'gasoline-go-ref', GO_VERSION);

/**
 * The Go reference binary: its platform package if installed, else a copy `fetchGoBinary` left in
 * the temp cache. Returns null when neither is there.
 */
export function findGoBinary(): string | null {
  return findIn(join(ROOT, 'node_modules', GO_PACKAGE)) ?? findIn(GO_CACHE);
}

/**
 * `npm pack` the reference's platform package into the temp cache (no install scripts run; the
 * tarball is only unpacked). Returns the binary or why there is none. Off with GASOLINE_BENCH_NO_GO=1.
 */
export function fetchGoBinary(): { bin: string } | { skipped: string } {
  const found = findGoBinary();
  if (found) return { bin: found };
  if (process.env.GASOLINE_BENCH_NO_GO === '1') return { skipped: 'GASOLINE_BENCH_NO_GO=1' };
  if (process.platform !== 'linux' || process.arch !== 'x64') return { skipped: `no reference build for ${process.platform}-${process.arch} is fetched` };
  try {
    mkdirSync(GO_CACHE, { recursive: true });
    const tgz = execFileSync('npm', ['pack', '--silent', `${GO_PACKAGE}@${GO_VERSION}`], { cwd: GO_CACHE, timeout: 90_000, stdio: ['ignore', 'pipe', 'pipe'] })
      .toString()
      .trim()
      .split('\n')
      .pop()!;
    execFileSync('tar', ['xzf', tgz], { cwd: GO_CACHE, timeout: 60_000 });
  } catch (e) {
    return { skipped: `npm pack ${GO_PACKAGE}@${GO_VERSION} failed: ${(e as Error).message.split('\n')[0]}` };
  }
  const bin = findGoBinary();
  return bin ? { bin } : { skipped: `${GO_PACKAGE}@${GO_VERSION} holds no gasoline binary` };
}

function findIn(dir: string): string | null {
  if (!existsSync(dir)) return null;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) stack.push(p);
      else if (/^gasoline(\.exe)?$/.test(name)) {
        if (!(st.mode & 0o111)) chmodSync(p, 0o755);
        return p;
      }
    }
  }
  return null;
}

function skipped(o: HttpLoadOptions, why: string): HttpLoadResult {
  return {
    target: o.target,
    route: o.route ?? '/logs',
    skipped: why,
    connections: o.connections,
    duration_s: 0,
    warmup_s: 0,
    warmup_entries_per_s: null,
    req_per_s: 0,
    entries_per_s: 0,
    latency_p50_ms: 0,
    latency_p99_ms: 0,
    latency_p999_ms: 0,
    ok_2xx: 0,
    non2xx: 0,
    status_codes: {},
    errors: 0,
    body_bytes: 0,
    server_cpu_pct: null,
    server_peak_rss_mb: null,
  };
}

async function waitForPort(port: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      await fetch(`http://127.0.0.1:${port}/health`);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

/** A server under load, started for a profile and stopped after it. */
interface Started {
  pid: number;
  stop: () => Promise<unknown>;
  /** what its routes require beside the body (the Go reference wants its extension's header) */
  headers: Record<string, string>;
}

async function startTarget(o: Pick<HttpLoadOptions, 'target' | 'port' | 'serverThreads' | 'root'>): Promise<Started | { skipped: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.target === 'go') {
    const got = fetchGoBinary();
    if ('skipped' in got) return got;
    const bin = got.bin;
    // a scratch HOME and state dir: the reference must not touch the user's real daemon or files
    const home = mkdtempSync(join(tmpdir(), 'gasoline-go-home-'));
    const child = spawn(bin, ['--daemon', '--port', String(o.port), '--state-dir', join(home, 'state')], { stdio: 'ignore', env: { ...process.env, HOME: home } });
    // it refuses telemetry without its extension's client header
    headers['x-gasoline-client'] = `gasoline-extension/${GO_VERSION}`;
    if (!(await waitForPort(o.port, 10_000))) {
      child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
      return { skipped: `${bin} did not answer on 127.0.0.1:${o.port}` };
    }
    const stop = async (): Promise<void> => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
      // its scratch HOME and state dir were left in the temp dir by every run
      rmSync(home, { recursive: true, force: true });
    };
    return { pid: child.pid!, stop, headers };
  }
  const srv = await startServer({ kind: o.target, port: o.port, threads: o.serverThreads, ...(o.root ? { root: o.root } : {}) });
  return { pid: srv.pid, stop: srv.stop, headers };
}

/** The load one profile sends: the route's body is built once, for every window. */
interface Load {
  route: HttpRouteName;
  connections: number;
  body: string;
}

/** One window of load on a started server: autocannon's result and the server's CPU seconds in it. */
async function loadWindow(s: Started, port: number, l: Load, ms: number): Promise<{ r: AutocannonResult; cpuS: number }> {
  const cpu0 = cpuSeconds(s.pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${l.route}`,
    method: l.route === '/health' ? 'GET' : 'POST',
    connections: l.connections,
    pipelining: 1,
    duration: Math.max(1, Math.round(ms / 1000)),
    ...(l.route === '/health' ? {} : { headers: s.headers, body: l.body }),
  });
  return { r, cpuS: cpuSeconds(s.pid) - cpu0 };
}

function perRequest(route: HttpRouteName): number {
  return route === '/logs' || route === '/network-bodies' ? ENTRIES_PER_REQUEST : 1;
}

const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/**
 * What a server served over its windows. One window gives its own figures; several (a paired run)
 * give the sums over all of them and, for latency, the median of the windows' percentiles.
 */
function served(o: { target: HttpTarget; warmupMs?: number | undefined } & Load, pid: number, windows: ReadonlyArray<{ r: AutocannonResult; cpuS: number }>, warm: AutocannonResult | undefined): HttpLoadResult {
  const per = perRequest(o.route);
  const ok = windows.reduce((n, w) => n + w.r['2xx'], 0);
  const seconds = windows.reduce((n, w) => n + w.r.duration, 0);
  const cpuS = windows.reduce((n, w) => n + w.cpuS, 0);
  const codes: Record<string, number> = {};
  for (const w of windows) for (const [c, st] of Object.entries(w.r.statusCodeStats ?? {})) codes[c] = (codes[c] ?? 0) + st.count;
  return {
    target: o.target,
    route: o.route,
    connections: o.connections,
    duration_s: seconds,
    warmup_s: (o.warmupMs ?? 0) / 1000,
    warmup_entries_per_s: warm ? Math.round((warm['2xx'] * per) / warm.duration) : null,
    req_per_s: Math.round(ok / seconds),
    entries_per_s: Math.round((ok * per) / seconds),
    latency_p50_ms: median(windows.map((w) => w.r.latency.p50)),
    latency_p99_ms: median(windows.map((w) => w.r.latency.p99)),
    latency_p999_ms: median(windows.map((w) => w.r.latency.p99_9)),
    ok_2xx: ok,
    non2xx: windows.reduce((n, w) => n + w.r.non2xx, 0),
    status_codes: codes,
    errors: windows.reduce((n, w) => n + w.r.errors + w.r.timeouts, 0),
    body_bytes: o.body.length,
    server_cpu_pct: seconds > 0 ? Math.round((cpuS / seconds) * 100) : null,
    server_peak_rss_mb: peakRssMb(pid),
  };
}

export async function runHttpLoad(o: HttpLoadOptions): Promise<HttpLoadResult> {
  const route = o.route ?? '/logs';
  const s = await startTarget(o);
  if ('skipped' in s) return skipped(o, s.skipped);
  try {
    const l: Load = { route, connections: o.connections, body: routeBody(route) };
    const warm = o.warmupMs ? (await loadWindow(s, o.port, l, o.warmupMs)).r : undefined;
    return served({ ...l, target: o.target, warmupMs: o.warmupMs }, s.pid, [await loadWindow(s, o.port, l, o.durationMs)], warm);
  } finally {
    await s.stop();
  }
}

export interface PairedHttpOptions {
  /** the server whose throughput is divided (`a` ÷ `b`, pair by pair) */
  a: { target: HttpTarget; port: number; root?: string };
  b: { target: HttpTarget; port: number; root?: string };
  rounds: number;
  /** each server's window in a round (whole seconds: autocannon's unit) */
  roundMs: number;
  /** both servers get this much of the same load, unmeasured, before the first round */
  warmupMs: number;
  connections: number;
  route?: HttpRouteName;
}

export interface PairedHttpResult {
  a: HttpLoadResult;
  b: HttpLoadResult;
  /** a's entries/s ÷ b's, round by round, then the median (and the middle half: this run's noise) */
  ratio: PairedRatios;
  rounds: Array<{ first: 'a' | 'b'; a_entries_per_s: number; b_entries_per_s: number }>;
}

/**
 * Two servers' throughput on one route, side by side: both run for the whole profile and take the
 * same load in alternating windows, the order swapped every round, so a slow stretch of a shared
 * machine falls on both rather than on whichever ran in it. One window each, one after the other,
 * read the Go reference comparison anywhere from 15 to 28 × on this machine in one day.
 */
export async function runHttpPaired(o: PairedHttpOptions): Promise<PairedHttpResult | { skipped: string }> {
  const route = o.route ?? '/logs';
  const sa = await startTarget(o.a);
  if ('skipped' in sa) return { skipped: `${o.a.target}: ${sa.skipped}` };
  try {
    const sb = await startTarget(o.b);
    if ('skipped' in sb) return { skipped: `${o.b.target}: ${sb.skipped}` };
    try {
      const l: Load = { route, connections: o.connections, body: routeBody(route) };
      const warmA = o.warmupMs ? (await loadWindow(sa, o.a.port, l, o.warmupMs)).r : undefined;
      const warmB = o.warmupMs ? (await loadWindow(sb, o.b.port, l, o.warmupMs)).r : undefined;
      const wa: Array<{ r: AutocannonResult; cpuS: number }> = [];
      const wb: Array<{ r: AutocannonResult; cpuS: number }> = [];
      const rounds: PairedHttpResult['rounds'] = [];
      for (let i = 0; i < o.rounds; i++) {
        const first = i % 2 === 0 ? 'a' : 'b';
        const runA = async (): Promise<void> => void wa.push(await loadWindow(sa, o.a.port, l, o.roundMs));
        const runB = async (): Promise<void> => void wb.push(await loadWindow(sb, o.b.port, l, o.roundMs));
        if (first === 'a') await runA().then(runB);
        else await runB().then(runA);
        const rate = (w: { r: AutocannonResult }): number => Math.round((w.r['2xx'] * perRequest(route)) / w.r.duration);
        rounds.push({ first, a_entries_per_s: rate(wa[i]!), b_entries_per_s: rate(wb[i]!) });
      }
      const common = { ...l, warmupMs: o.warmupMs };
      const { ratio, ratio_p25, ratio_p75 } = pairedStats(
        rounds.map((r) => Math.max(1, r.b_entries_per_s)),
        rounds.map((r) => r.a_entries_per_s),
      );
      return { a: served({ ...common, target: o.a.target }, sa.pid, wa, warmA), b: served({ ...common, target: o.b.target }, sb.pid, wb, warmB), ratio: { ratio, ratio_p25, ratio_p75 }, rounds };
    } finally {
      await sb.stop();
    }
  } finally {
    await sa.stop();
  }
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runHttpLoad({
    target: (flag('--server') as HttpTarget | undefined) ?? 'gasoline',
    port: Number(flag('--port') ?? 7991),
    durationMs: Number(flag('--seconds') ?? 10) * 1000,
    connections: Number(flag('--connections') ?? 10),
  });
  console.log(JSON.stringify(r, null, 2));
}
