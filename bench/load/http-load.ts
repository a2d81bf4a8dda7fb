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

export async function runHttpLoad(o: HttpLoadOptions): Promise<HttpLoadResult> {
  let pid: number;
  let stop: () => Promise<unknown>;
  const route = o.route ?? '/logs';
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.target === 'go') {
    const got = fetchGoBinary();
    if ('skipped' in got) return skipped(o, got.skipped);
    const bin = got.bin;
    // a scratch HOME and state dir: the reference must not touch the user's real daemon or files
    const home = mkdtempSync(join(tmpdir(), 'gasoline-go-home-'));
    const child = spawn(bin, ['--daemon', '--port', String(o.port), '--state-dir', join(home, 'state')], { stdio: 'ignore', env: { ...process.env, HOME: home } });
    // it refuses telemetry without its extension's client header
    headers['x-gasoline-client'] = `gasoline-extension/${GO_VERSION}`;
    if (!(await waitForPort(o.port, 10_000))) {
      child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
      return skipped(o, `${bin} did not answer on 127.0.0.1:${o.port}`);
    }
    pid = child.pid!;
    stop = async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
      // its scratch HOME and state dir were left in the temp dir by every run
      rmSync(home, { recursive: true, force: true });
    };
  } else {
    const srv = await startServer({ kind: o.target, port: o.port, threads: o.serverThreads, ...(o.root ? { root: o.root } : {}) });
    pid = srv.pid;
    stop = srv.stop;
  }
  try {
    const body = routeBody(route);
    const load = (ms: number): Promise<AutocannonResult> =>
      autocannon({
        url: `http://127.0.0.1:${o.port}${route}`,
        method: route === '/health' ? 'GET' : 'POST',
        connections: o.connections,
        pipelining: 1,
        duration: Math.max(1, Math.round(ms / 1000)),
        ...(route === '/health' ? {} : { headers, body }),
      });
    const warm = o.warmupMs ? await load(o.warmupMs) : undefined;
    const perRequest = route === '/logs' || route === '/network-bodies' ? ENTRIES_PER_REQUEST : 1;
    const cpu0 = cpuSeconds(pid);
    const t0 = Date.now();
    const r = await load(o.durationMs);
    const cpu = (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
    const ok = r['2xx'];
    const codes: Record<string, number> = {};
    for (const [c, s] of Object.entries(r.statusCodeStats ?? {})) codes[c] = s.count;
    return {
      target: o.target,
      route,
      connections: o.connections,
      duration_s: r.duration,
      warmup_s: (o.warmupMs ?? 0) / 1000,
      warmup_entries_per_s: warm ? Math.round((warm['2xx'] * perRequest) / warm.duration) : null,
      req_per_s: Math.round(ok / r.duration),
      entries_per_s: Math.round((ok * perRequest) / r.duration),
      latency_p50_ms: r.latency.p50,
      latency_p99_ms: r.latency.p99,
      latency_p999_ms: r.latency.p99_9,
      ok_2xx: ok,
      non2xx: r.non2xx,
      status_codes: codes,
      errors: r.errors + r.timeouts,
      body_bytes: body.length,
      server_cpu_pct: Math.round(cpu * 100),
      server_peak_rss_mb: peakRssMb(pid),
    };
  } finally {
    await stop();
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
