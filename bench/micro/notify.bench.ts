/**
 * Notification serialization: the synchronous main-thread cost of turning one alert into a
 * `notifications/message` line on stdout (issue 7 SLO: < 0.5 ms), per call, HDR histogram:
 *
 *   stream   StreamState.offer (src/domain/streaming): filter, dedup, bounded wire form, throttle
 *            check, envelope — then the one stdout writer's JSON.stringify and stream write. The
 *            window is reopened (re-enable) before each call, outside the timing, so every offer
 *            is sent at once as a probe's alert is.
 *   writer   the stdout writer alone on a ready envelope (what the stream row includes).
 *
 * The sink accepts at once, so only our side is timed.
 * Run: `node dist/bench/micro/notify.bench.js` (after `pnpm build`); `pnpm bench` runs it too.
 */
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { StdoutWriter } from '../../src/mcp/stdout-writer.js';
import type { Alert } from '../../src/domain/alerts/alert.js';
import { StreamState, type StreamNotification } from '../../src/domain/streaming/stream-state.js';
import { newHistogram, percentiles, type Percentiles } from '../load/histogram.js';

export interface NotifyResult {
  name: string;
  calls: number;
  line_bytes: number;
  latency: Percentiles;
  p50Us: number;
  p99Us: number;
}

/** An alert shaped like the detector's 5xx one, with a realistic detail (its response excerpt). */
function alert(i: number): Alert {
  return {
    severity: 'error',
    category: 'anomaly',
    title: `GET https://api.example.test/v1/orders/${i} → 503 Service Unavailable`,
    detail: `503 after 1204 ms; response: {"error":"upstream timeout","retry_after":2,"trace":"${'x'.repeat(200)}"}`,
    timestamp: new Date(1_732_280_000_000 + i).toISOString(),
    source: 'anomaly_detector',
    url: `https://api.example.test/v1/orders/${i}`,
    dedup_key: `net:GET api.example.test/v1/orders/<n> 503`,
    correlation_id: `c-${i.toString(36)}`,
    count: 1,
    context: { page_url: 'https://app.example.test/checkout' },
  };
}

function streamRow(calls: number, writer: StdoutWriter): Promise<NotifyResult> | NotifyResult {
  const stream = new StreamState({ emit: (n: StreamNotification) => writer.write(n, 'notification').then(() => true) });
  const enable = { streaming_action: 'enable', throttle_seconds: 1 };
  stream.configure(enable);
  const h = newHistogram();
  let lineBytes = 0;
  for (let i = 0; i < calls + 2000; i++) {
    // a unique title per alert: the stream's dedup must not swallow it
    const a = alert(i);
    a.title = `Server error: GET /v1/orders/${i.toString(36)} → 503`;
    stream.configure(enable); // reopen the throttle window, untimed
    const t0 = process.hrtime.bigint();
    stream.offer({ alert: a, edgeTime: 0 });
    const ns = Number(process.hrtime.bigint() - t0);
    if (i >= 2000) h.recordValue(Math.max(1, Math.round(ns / 1000))); // the first 2000 warm the JIT
    if (i === 2000) lineBytes = writer.stats.bytes;
  }
  const lat = percentiles(h);
  const per = Math.round((writer.stats.bytes - lineBytes) / calls);
  stream.close();
  return { name: 'alert → StreamState.offer → notifications/message line (filter, dedup, wire form, envelope, writer)', calls, line_bytes: per, latency: lat, p50Us: Math.round(lat.p50_ms * 1000), p99Us: Math.round(lat.p99_ms * 1000) };
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
  const stream = await streamRow(calls, writer);
  await new Promise((r) => setImmediate(r));
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
  return [stream, { name: 'notification envelope → stdout writer alone (stringify + write)', calls, line_bytes: lineBytes, latency: lat, p50Us: Math.round(lat.p50_ms * 1000), p99Us: Math.round(lat.p99_ms * 1000) }];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await runNotifyBench({ quick: process.argv.includes('--quick') }), null, 2));
}
