/**
 * observe({what:"errors"}) latency seen by a real MCP client over stdio, while producers push
 * WebSocket ingest at a fixed rate into the same process (--standalone, the single-process mode).
 * Before the load, the same call on the idle server: the floor a loaded p99 is read against.
 *   node dist/bench/load/observe-load.js [--rate 150000] [--seconds 10] [--every 50]
 * GASOLINE_BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p") goes to the server's node,
 * to see where a read's time goes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { newHistogram, percentiles, type Percentiles } from './histogram.js';
import { runProducers } from './producer.js';
import { ROOT } from './server-proc.js';

export interface ObserveLoadResult {
  ingest_rate_target: number;
  ingest_events_per_s: number;
  observe_calls: number;
  observe_latency: Percentiles;
  /** the same call before any load: what the machine and the MCP path cost with nothing to read */
  observe_idle_latency: Percentiles;
  errors: number;
}

/** idle calls measured, after as many unmeasured ones compile the path (an agent pays that once) */
const IDLE_CALLS = 30;

export async function runObserveLoad(o: { port: number; rate: number; durationMs: number; everyMs?: number }): Promise<ObserveLoadResult> {
  const nodeArgs = process.env.GASOLINE_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin/gasoline'), '--standalone'], {
    cwd: ROOT,
    env: { ...process.env, GASOLINE_PORT: String(o.port), GASOLINE_LOG_LEVEL: 'info', GASOLINE_STATE_DIR: mkdtempSync(join(tmpdir(), 'gasoline-bench-')) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const waiting = new Map<number, (msg: Record<string, unknown>) => void>();
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
      buf = buf.slice(nl + 1);
      const w = waiting.get(msg.id as number);
      if (w) {
        waiting.delete(msg.id as number);
        w(msg);
      }
    }
  });
  let nextId = 1;
  const rpc = (method: string, params: unknown): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  try {
    const t0 = Date.now();
    while (!err.includes('listening')) {
      if (Date.now() - t0 > 20_000) throw new Error(`gasoline did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const call = async (): Promise<{ us: number; failed: boolean }> => {
      const s = process.hrtime.bigint();
      const r = await rpc('tools/call', { name: 'observe', arguments: { what: 'errors', limit: 50 } });
      const us = Number(process.hrtime.bigint() - s) / 1000;
      return { us: Math.max(1, Math.round(us)), failed: Boolean((r.result as { isError?: boolean } | undefined)?.isError || r.error) };
    };
    const idle = newHistogram();
    for (let i = 0; i < 2 * IDLE_CALLS; i++) {
      const r = await call();
      if (i >= IDLE_CALLS) idle.recordValue(r.us);
      await new Promise((r2) => setTimeout(r2, 20));
    }
    const hist = newHistogram();
    let calls = 0;
    let errors = 0;
    let done = false;
    const producing = runProducers({ url: `ws://127.0.0.1:${o.port}/ws`, threads: 1, connectionsPerThread: 4, window: 16, mode: 'open', rate: o.rate, durationMs: o.durationMs, drainMs: 2000 }).finally(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 1000)); // let ingest reach its rate first
    while (!done) {
      const r = await call();
      hist.recordValue(r.us);
      calls++;
      if (r.failed) errors++;
      await new Promise((r2) => setTimeout(r2, o.everyMs ?? 50));
    }
    const prod = await producing;
    return { ingest_rate_target: o.rate, ingest_events_per_s: prod.events_per_s, observe_calls: calls, observe_latency: percentiles(hist), observe_idle_latency: percentiles(idle), errors };
  } finally {
    child.stdin.end();
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    await new Promise((r) => child.once('exit', r));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (n: string, d: number): number => {
    const i = process.argv.indexOf(`--${n}`);
    return i > 0 ? Number(process.argv[i + 1]) : d;
  };
  console.log(JSON.stringify(await runObserveLoad({ port: arg('port', 7951), rate: arg('rate', 150_000), durationMs: arg('seconds', 10) * 1000, everyMs: arg('every', 50) }), null, 2));
}
