/**
 * Notification serialization: the synchronous main-thread cost of turning one alert into a
 * `notifications/message` line on stdout — JSON-RPC envelope, JSON.stringify, the one stdout
 * writer (src/mcp/stdout-writer.ts) and the stream write — into a sink that accepts at once, so
 * only our side is timed (issue 7 SLO: < 0.5 ms). Per-call times go into an HDR histogram.
 * Run: `node dist/bench/micro/notify.bench.js` (after `pnpm build`); `pnpm bench` runs it too.
 */
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { StdoutWriter } from '../../src/mcp/stdout-writer.js';
import { newHistogram, percentiles, type Percentiles } from '../load/histogram.js';

export interface NotifyResult {
  name: string;
  calls: number;
  line_bytes: number;
  latency: Percentiles;
  p50Us: number;
  p99Us: number;
}

/** An alert shaped like issue 5's, with a realistic detail (a 5xx with its response excerpt). */
function alert(i: number): Record<string, unknown> {
  return {
    severity: 'error',
    category: 'network',
    title: `GET https://api.example.test/v1/orders/${i} → 503 Service Unavailable`,
    detail: `503 after 1204 ms; response: {"error":"upstream timeout","retry_after":2,"trace":"${'x'.repeat(200)}"}`,
    timestamp: new Date(1_732_280_000_000 + i).toISOString(),
    source: 'network',
    url: `https://api.example.test/v1/orders/${i}`,
    dedup_key: `network:5xx:GET:api.example.test/v1/orders/:id:${i}`,
    correlation_id: `c-${i.toString(36)}`,
    count: 1,
    tab_id: 7,
  };
}

export async function runNotifyBench(o: { quick?: boolean } = {}): Promise<NotifyResult[]> {
  const sink = new Writable({
    highWaterMark: 1 << 24,
    write(_chunk, _enc, cb) {
      cb();
    },
  });
  const writer = new StdoutWriter(sink);
  const calls = o.quick ? 20_000 : 100_000;
  let lineBytes = 0;
  // warm the JIT on the same path first
  for (let i = 0; i < 5000; i++) void writer.write({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: 'gasoline', data: alert(i) } }, 'notification');
  await new Promise((r) => setImmediate(r));
  const h = newHistogram();
  const alerts = Array.from({ length: 1024 }, (_, i) => alert(i));
  for (let i = 0; i < calls; i++) {
    const msg = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: 'gasoline', data: alerts[i & 1023] } };
    const t0 = process.hrtime.bigint();
    void writer.write(msg, 'notification');
    const ns = Number(process.hrtime.bigint() - t0);
    // the histogram is in µs with 3 significant digits; sub-µs values are kept as 1 µs
    h.recordValue(Math.max(1, Math.round(ns / 1000)));
    if ((i & 1023) === 0) await new Promise((r) => setImmediate(r)); // let the sink drain, as the event loop would
  }
  lineBytes = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: 'gasoline', data: alerts[0] } }).length + 1;
  const lat = percentiles(h);
  return [{ name: 'notification → stdout line (envelope + stringify + writer)', calls, line_bytes: lineBytes, latency: lat, p50Us: Math.round(lat.p50_ms * 1000), p99Us: Math.round(lat.p99_ms * 1000) }];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await runNotifyBench({ quick: process.argv.includes('--quick') }), null, 2));
}
