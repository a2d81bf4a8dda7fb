/**
 * HTTP load profile: autocannon against `POST /logs` with 50-entry JSON batches at 10
 * connections for a bounded time; req/s, entries/s, and latency percentiles from autocannon's
 * own HDR histogram. Runs against Gasoline, the ceiling server (answers without parsing), and
 * the Go reference implementation when `@brennhill/gasoline-linux-x64` happens to be installed.
 *
 *   node dist/bench/load/http-load.js [--server gasoline|ceiling|go] [--seconds 10] [--port P]
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
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
}

export interface HttpLoadResult {
  target: HttpTarget;
  skipped?: string;
  connections: number;
  duration_s: number;
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

const GO_PACKAGE = '@brennhill/gasoline-linux-x64';

/** The Go reference binary, if its platform package is installed (we never install it). */
export function findGoBinary(): string | null {
  const dir = join(ROOT, 'node_modules', GO_PACKAGE);
  if (!existsSync(dir)) return null;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) stack.push(p);
      else if (/^gasoline(\.exe)?$/.test(name) && st.mode & 0o111) return p;
    }
  }
  return null;
}

function skipped(o: HttpLoadOptions, why: string): HttpLoadResult {
  return {
    target: o.target,
    skipped: why,
    connections: o.connections,
    duration_s: 0,
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
  if (o.target === 'go') {
    const bin = findGoBinary();
    if (!bin) return skipped(o, `${GO_PACKAGE} is not installed`);
    const child = spawn(bin, ['--port', String(o.port)], { stdio: 'ignore', env: { ...process.env, HOME: join(ROOT, 'bench', 'results', '.go-home') } });
    if (!(await waitForPort(o.port, 10_000))) {
      child.kill('SIGKILL');
      return skipped(o, `${bin} did not answer on 127.0.0.1:${o.port}`);
    }
    pid = child.pid!;
    stop = async () => {
      child.kill('SIGTERM');
    };
  } else {
    const srv = await startServer({ kind: o.target, port: o.port, threads: o.serverThreads });
    pid = srv.pid;
    stop = srv.stop;
  }
  try {
    const body = logsBody();
    const cpu0 = cpuSeconds(pid);
    const t0 = Date.now();
    const r = await autocannon({
      url: `http://127.0.0.1:${o.port}/logs`,
      method: 'POST',
      connections: o.connections,
      pipelining: 1,
      duration: Math.max(1, Math.round(o.durationMs / 1000)),
      headers: { 'content-type': 'application/json' },
      body,
    });
    const cpu = (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
    const ok = r['2xx'];
    const codes: Record<string, number> = {};
    for (const [c, s] of Object.entries(r.statusCodeStats ?? {})) codes[c] = s.count;
    return {
      target: o.target,
      connections: o.connections,
      duration_s: r.duration,
      req_per_s: Math.round(ok / r.duration),
      entries_per_s: Math.round((ok * ENTRIES_PER_REQUEST) / r.duration),
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
