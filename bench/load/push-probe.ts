/**
 * Push latency, end to end: a frame holding one 5xx network record is sent over its own
 * WebSocket session, stamped at send; the sample ends when the `notifications/message` naming
 * that record's URL arrives on the MCP client's stdout. Both stamps come from this thread's
 * `performance.now()`, so there is no clock skew. Each sample has a unique URL (dedup must not
 * swallow it) and streaming is re-enabled before each one, which resets throttle and rate limit;
 * the re-enable is timed too (the `configure` latency).
 *
 * Streaming is issue 5's (`configure({action:"streaming", ...})`). When the server under test
 * does not offer it, the probe says "unavailable" with the reason and records nothing: a missing
 * figure is never replaced by a made-up one. A sample whose notification does not arrive within
 * `timeoutMs` is recorded at the timeout (no coordinated omission) and counted as missed.
 */
import { performance } from 'node:perf_hooks';
import { Packr, unpack } from 'msgpackr';
import WebSocket from 'ws';
import { newHistogram, percentiles, type Histogram, type Percentiles } from './histogram.js';
import { toolText, type McpProc } from './mcp-client.js';

export interface StreamingSupport {
  available: boolean;
  reason?: string;
  /** enable arguments the server's schema accepts */
  enableArgs: Record<string, unknown>;
}

type Schema = { properties?: Record<string, { enum?: unknown[]; minimum?: number; type?: string; items?: { enum?: unknown[] } }> };

/** Looks for issue 5's interface in the server's own tools/list. */
export async function detectStreaming(mcp: McpProc): Promise<StreamingSupport> {
  const tools = await mcp.tools();
  const configure = tools.find((t) => t.name === 'configure');
  const props = (configure?.inputSchema as Schema | undefined)?.properties ?? {};
  const actions = props.action?.enum ?? [];
  if (!actions.includes('streaming')) {
    return { available: false, reason: 'the server under test has no configure({action:"streaming"}) (issue 5 not merged)', enableArgs: {} };
  }
  const enableArgs: Record<string, unknown> = { action: 'streaming', streaming_action: 'enable' };
  // the smallest throttle the schema allows: the probe measures delivery, not the throttle window
  if (props.throttle_seconds) enableArgs.throttle_seconds = props.throttle_seconds.minimum ?? 0;
  // Background load raises alerts of its own (its 5xx records, new console errors). Were they
  // delivered too, the one sent at re-enable would hold the probe's behind the throttle window
  // (≥ 1 s) and the probe would time the throttle. So delivery is narrowed to network errors on
  // the probe's host; every background alert is still detected, carried to main and filtered by
  // StreamState — the same path, minus the stdout line.
  if (props.url_filter) enableArgs.url_filter = PROBE_HOST;
  if (props.events?.items?.enum?.includes('network_errors')) enableArgs.events = ['network_errors'];
  return { available: true, enableArgs };
}

export interface PushProbeResult {
  /** unavailable: the server has no streaming (not measured); error: it has, and the probe failed */
  status: 'ok' | 'unavailable' | 'error';
  reason?: string;
  samples: number;
  missed: number;
  /** probe frames refused (nacked) under overload: no alert could follow, so not a sample */
  refused: number;
  accepted: number;
  push_latency: Percentiles | null;
  configure_latency: Percentiles | null;
  /** what `streaming_action:"status"` said at the end (the server's own emission latency) */
  server_status?: unknown;
}

export interface PushProbe {
  /** resolves after the last sample once `stop()` was called */
  stop: () => Promise<PushProbeResult>;
}

const packr = new Packr({ useRecords: true });
const PROBE_HOST = 'probe.example.test';

export function unavailableProbe(reason: string): PushProbeResult {
  return { status: 'unavailable', reason, samples: 0, missed: 0, refused: 0, accepted: 0, push_latency: null, configure_latency: null };
}

/** Starts sampling every `intervalMs` until stopped. */
export async function startPushProbe(o: {
  mcp: McpProc;
  port: number;
  support: StreamingSupport;
  intervalMs: number;
  timeoutMs?: number;
  tag: string;
  /**
   * the probe's URL host (default probe.example.test). Probes of several clients on one daemon
   * each use their own: the detectors' allowance is per host (20 alerts/s), and each client's
   * url_filter then lets only its own probe's alerts through.
   */
  host?: string;
}): Promise<PushProbe> {
  if (!o.support.available) {
    const r = unavailableProbe(o.support.reason ?? 'streaming unavailable');
    return { stop: async () => r };
  }
  const timeoutMs = o.timeoutMs ?? 2000;
  const host = o.host ?? PROBE_HOST;
  const enableArgs = 'url_filter' in o.support.enableArgs ? { ...o.support.enableArgs, url_filter: host } : o.support.enableArgs;
  const push: Histogram = newHistogram();
  const conf: Histogram = newHistogram();
  let samples = 0;
  let missed = 0;
  let stopping = false;
  /** events the server acknowledged on the probe's session (for the accounting check) */
  let accepted = 0;
  /** probe frames nacked by admission control: not push samples, counted apart */
  let refused = 0;

  const ws = new WebSocket(`ws://127.0.0.1:${o.port}/ws`, { perMessageDeflate: false });
  ws.binaryType = 'nodebuffer';
  const session = `bench-probe-${o.tag}-${process.pid}-${Date.now().toString(36)}`;
  let seq = 1;
  // one waiter at a time: the notification carrying this sample's URL ends it
  let waiter: { token: string; seq: number; resolve: (at: number) => void } | null = null;
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.on('open', () => ws.send(packr.pack({ t: 'hello', v: 1, client: 'bench', version: 'probe-1', session })));
    ws.on('message', (d: Buffer) => {
      const m = unpack(d) as Record<string, unknown>;
      if (m.t === 'ack') accepted += (m.accepted as number) ?? 0;
      // admission control refused the probe's own frame (overload): no alert can follow
      if (m.t === 'nack' && waiter && m.seq === waiter.seq) {
        // the batch was not applied: the next probe frame reuses its seq
        seq = typeof m.resume_from_seq === 'number' ? m.resume_from_seq : waiter.seq;
        const w = waiter;
        waiter = null;
        w.resolve(-1);
      }
      if (m.t === 'welcome') {
        if (typeof m.resume_from_seq === 'number' && m.resume_from_seq > seq) seq = m.resume_from_seq;
        resolve();
      }
    });
  });

  const off = o.mcp.onNotification((_msg, at, line) => {
    if (waiter && line.includes(waiter.token)) {
      const w = waiter;
      waiter = null;
      w.resolve(at);
    }
  });

  const loop = (async () => {
    let i = 0;
    while (!stopping) {
      const c = await o.mcp.callTool('configure', enableArgs);
      conf.recordValue(c.us);
      if (toolText(c).isError) throw new Error(`streaming enable failed: ${toolText(c).text.slice(0, 300)}`);
      const token = `probe-${o.tag}-${session.slice(-6)}-${i++}`;
      const url = `https://${host}/${token}`;
      const arrived = new Promise<number | null>((resolve) => {
        const t = setTimeout(() => {
          waiter = null;
          resolve(null);
        }, timeoutMs);
        waiter = {
          token,
          seq,
          resolve: (at) => {
            clearTimeout(t);
            resolve(at);
          },
        };
      });
      const now = Date.now();
      const frame = packr.pack({ t: 'batch', seq: seq++, sent_at: now, network: [{ ts: now, method: 'GET', url, status: 503, duration: 12, initiator_type: 'fetch' }] });
      const t0 = performance.now();
      ws.send(frame);
      const at = await arrived;
      if (at === -1) {
        refused++;
        await new Promise((r) => setTimeout(r, o.intervalMs));
        continue;
      }
      samples++;
      if (at === null) {
        missed++;
        push.recordValue(timeoutMs * 1000);
      } else push.recordValue(Math.max(1, Math.round((at - t0) * 1000)));
      await new Promise((r) => setTimeout(r, o.intervalMs));
    }
  })();

  return {
    stop: async () => {
      stopping = true;
      let failure: string | undefined;
      await loop.catch((e: unknown) => (failure = (e as Error).message));
      off();
      // the last probe frame's ack may still be on its way
      const until = Date.now() + 1000;
      while (accepted < samples && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      ws.close(1000, 'probe done');
      let server_status: unknown;
      try {
        server_status = toolText(await o.mcp.callTool('configure', { action: 'streaming', streaming_action: 'status' })).json;
      } catch {
        server_status = null;
      }
      if (failure) return { ...unavailableProbe(failure), status: 'error', accepted, refused, server_status };
      return { status: 'ok', samples, missed, refused, accepted, push_latency: percentiles(push), configure_latency: percentiles(conf), server_status };
    },
  };
}
