/**
 * WebSocket load producer speaking PROTOCOL v1: hello → welcome → windowed batches.
 *
 * Built so that it is not the bottleneck: frames are pre-encoded once (frames.ts) and only the
 * seq/sent_at bytes are patched per send; `ws` copies while masking, so one pool frame can be
 * re-patched right after `send`. Producers run inside worker_threads (several connections per
 * thread) so the bench's main thread stays free to sample the server.
 *
 * Flow control: at most `window` unacknowledged batches per session. Acks are cumulative. A nack
 * (or an `overloaded` error frame) rewinds to `resume_from_seq` (go-back-N; the server applies a
 * session's batches strictly in order) after `retry_after_ms`. Ack latency is measured from the
 * first send of a batch — or, open loop, from when it was due — to the ack that covers it, so
 * retries and queueing count against us (no coordinated omission).
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import { buildFramePool, helloFrame, stamp, FIRST_SEQ, POOL_FRAMES, type FramePool, type Mix } from './frames.js';
import { lowerOwnPriority } from '../../src/pool/thread-priority.js';
import { encodeHistogram, mergeHistograms, newHistogram, percentiles, type Histogram, type Percentiles } from './histogram.js';

export interface ProducerRunOptions {
  url: string;
  /** worker threads hosting producers */
  threads: number;
  /** connections (one session each) per thread */
  connectionsPerThread: number;
  /** unacknowledged batches allowed per session */
  window: number;
  mode: 'closed' | 'open';
  /** open loop only: total target events/s over all connections */
  rate?: number;
  durationMs: number;
  /** after the send window: how long to wait for outstanding acks */
  drainMs: number;
  seed?: number;
  /** open loop only: stop scheduling after this many events in total (a burst of exactly N) */
  totalEvents?: number;
  /** what the batches hold (frames.ts); mixed by default */
  mix?: Mix;
}

interface ThreadInit extends ProducerRunOptions {
  kind: 'gasoline-bench-producer';
  thread: number;
}

export interface ThreadResult {
  kind: 'result';
  thread: number;
  connections: number;
  connected: number;
  framesSent: number;
  bytesSent: number;
  resends: number;
  /** events covered by acks (100 per newly acknowledged batch), inside the send window / in total */
  eventsAckedInWindow: number;
  eventsAcked: number;
  /** what the server said in acks: sum of `accepted` / `rejected` */
  acceptedReported: number;
  rejectedReported: number;
  nacks: Record<string, number>;
  errorFrames: Record<string, number>;
  closes: Record<string, number>;
  unacked: number;
  windowMs: number;
  /** event-loop utilisation of this producer thread during the window (1 = saturated) */
  elu: number;
  histogram: string;
  frameBytes: number;
  recordJsonBytes: number;
}

export interface ProducerRunResult {
  threads: number;
  connections: number;
  connected: number;
  window: number;
  mode: 'closed' | 'open';
  targetRate: number | null;
  durationMs: number;
  events_per_s: number;
  mb_per_s: number;
  framesSent: number;
  resends: number;
  eventsAcked: number;
  acceptedReported: number;
  rejectedReported: number;
  nacks: Record<string, number>;
  errorFrames: Record<string, number>;
  closes: Record<string, number>;
  unacked: number;
  ack_latency: Percentiles;
  /** max event-loop utilisation over producer threads: near 1 means the producer limits the result */
  producer_elu_max: number;
  frame_bytes: number;
  record_json_bytes: number;
}

const bump = (m: Record<string, number>, k: string, n = 1): void => {
  m[k] = (m[k] ?? 0) + n;
};

class Producer {
  private ws: WebSocket | null = null;
  ready = false;
  closed = false;
  /** next seq to send; highest seq covered by an ack; highest seq ever sent */
  next = FIRST_SEQ;
  acked = FIRST_SEQ - 1;
  private highestSent = FIRST_SEQ - 1;
  private pausedUntil = 0;
  private resumeTimer: NodeJS.Timeout | undefined;
  /** first-send (or due) time per seq, by seq & mask */
  private readonly sentAt: Float64Array;
  private readonly mask: number;
  /** open loop: batches due so far that have not been sent */
  backlog = 0;
  private dueTimes: number[] = [];

  constructor(
    private readonly o: ThreadInit,
    private readonly pool: FramePool,
    private readonly session: string,
    private readonly s: ThreadState,
  ) {
    let size = 1;
    while (size < o.window * 4) size <<= 1;
    this.sentAt = new Float64Array(size);
    this.mask = size - 1;
  }

  connect(): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(this.o.url, { perMessageDeflate: false, skipUTF8Validation: true, maxPayload: 16 * 1024 * 1024 });
      this.ws = ws;
      ws.binaryType = 'nodebuffer';
      let settled = false;
      const settle = (): void => {
        if (!settled) {
          settled = true;
          resolve();
        }
      };
      ws.on('open', () => ws.send(helloFrame(this.session, 'bench-0.1.0'), { binary: true, compress: false }));
      ws.on('message', (data: Buffer) => {
        const m = unpack(data) as Record<string, unknown>;
        if (m.t === 'welcome') {
          this.ready = true;
          // a fresh session is told 0 (no baseline): start at FIRST_SEQ; a known one may be further on
          const resume = typeof m.resume_from_seq === 'number' ? m.resume_from_seq : 0;
          if (resume > this.next) {
            this.next = resume;
            this.acked = this.highestSent = resume - 1;
          }
          settle();
          return;
        }
        this.onFrame(m);
      });
      ws.on('close', (code: number) => {
        this.closed = true;
        this.ready = false;
        bump(this.s.closes, String(code));
        clearTimeout(this.resumeTimer);
        settle();
      });
      ws.on('error', (e: Error) => {
        bump(this.s.closes, `error:${e.message.slice(0, 60)}`);
        settle();
      });
    });
  }

  private onFrame(m: Record<string, unknown>): void {
    const s = this.s;
    switch (m.t) {
      case 'ack': {
        const seq = m.seq as number;
        s.acceptedReported += (m.accepted as number) ?? 0;
        s.rejectedReported += (m.rejected as number) ?? 0;
        if (seq <= this.acked) return;
        const now = performance.now();
        const upto = Math.min(seq, this.highestSent);
        for (let q = this.acked + 1; q <= upto; q++) {
          s.hist.recordValue(Math.max(1, Math.round((now - this.sentAt[q & this.mask]!) * 1000)));
        }
        const n = (upto - this.acked) * this.pool.recordsPerFrame;
        s.eventsAcked += n;
        if (s.inWindow) s.eventsAckedInWindow += n;
        this.acked = upto;
        if (this.next <= this.acked) this.next = this.acked + 1;
        this.pump();
        return;
      }
      case 'nack': {
        bump(s.nacks, String(m.code ?? 'unknown'));
        const seq = m.seq as number;
        // stale: this seq was already rewound over and not sent again yet
        if (seq >= this.next) return;
        const resume = typeof m.resume_from_seq === 'number' ? m.resume_from_seq : seq;
        this.rewind(resume, typeof m.retry_after_ms === 'number' ? m.retry_after_ms : 50);
        return;
      }
      case 'error':
        bump(s.errorFrames, String(m.code ?? 'unknown'));
        if (m.code === 'overloaded') this.rewind(this.acked + 1, typeof m.retry_after_ms === 'number' ? m.retry_after_ms : 50);
        return;
      default:
        return;
    }
  }

  private rewind(resume: number, delayMs: number): void {
    const to = Math.max(resume, this.acked + 1);
    if (to < this.next) {
      this.s.resends += this.next - to;
      this.next = to;
    }
    this.pausedUntil = performance.now() + delayMs;
    clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => this.pump(), delayMs);
  }

  /** Sends while the window allows (closed loop: always has work; open loop: only what is due). */
  pump(): void {
    const ws = this.ws;
    if (!ws || !this.ready || this.closed || !this.s.sending) return;
    const now = performance.now();
    if (now < this.pausedUntil) return;
    const open = this.o.mode === 'open';
    while (this.next - this.acked - 1 < this.o.window) {
      const seq = this.next;
      const fresh = seq > this.highestSent;
      if (fresh && open) {
        if (this.backlog <= 0) break;
        this.backlog--;
        this.sentAt[seq & this.mask] = this.dueTimes.shift() ?? now;
      } else if (fresh) {
        this.sentAt[seq & this.mask] = now;
      }
      const f = stamp(this.pool, seq, Date.now());
      ws.send(f, { binary: true, compress: false });
      this.s.framesSent++;
      this.s.bytesSent += f.length;
      if (fresh) this.highestSent = seq;
      this.next = seq + 1;
    }
  }

  /** open loop: one more batch became due at `due` (performance.now() time) */
  due(due: number): void {
    this.backlog++;
    this.dueTimes.push(due);
  }

  get unacked(): number {
    return this.highestSent - this.acked;
  }

  close(): void {
    clearTimeout(this.resumeTimer);
    if (this.ws && !this.closed) this.ws.close(1000, 'bench done');
  }
}

interface ThreadState {
  hist: Histogram;
  sending: boolean;
  inWindow: boolean;
  framesSent: number;
  bytesSent: number;
  resends: number;
  eventsAcked: number;
  eventsAckedInWindow: number;
  acceptedReported: number;
  rejectedReported: number;
  nacks: Record<string, number>;
  errorFrames: Record<string, number>;
  closes: Record<string, number>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function runThread(o: ThreadInit): Promise<ThreadResult> {
  const pool = buildFramePool((o.seed ?? 42) + o.thread, POOL_FRAMES, o.mix ?? 'mixed');
  const s: ThreadState = {
    hist: newHistogram(),
    sending: false,
    inWindow: false,
    framesSent: 0,
    bytesSent: 0,
    resends: 0,
    eventsAcked: 0,
    eventsAckedInWindow: 0,
    acceptedReported: 0,
    rejectedReported: 0,
    nacks: {},
    errorFrames: {},
    closes: {},
  };
  const tag = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${o.thread}`;
  const producers = Array.from({ length: o.connectionsPerThread }, (_, i) => new Producer(o, pool, `bench-${tag}-${i}`, s));
  await Promise.all(producers.map((p) => p.connect()));
  const live = producers.filter((p) => p.ready);

  s.sending = true;
  s.inWindow = true;
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  let ticker: NodeJS.Timeout | undefined;
  if (o.mode === 'open') {
    // events/s for this thread, spread evenly over its connections, in whole batches
    const perConn = (o.rate ?? 100_000) / o.threads / Math.max(1, live.length) / pool.recordsPerFrame;
    const scheduled = live.map(() => 0);
    const limit = o.totalEvents ? Math.ceil(o.totalEvents / o.threads / Math.max(1, live.length) / pool.recordsPerFrame) : Infinity;
    ticker = setInterval(() => {
      const now = performance.now();
      live.forEach((p, i) => {
        const dueCount = Math.min(limit, Math.floor(((now - t0) / 1000) * perConn));
        while (scheduled[i]! < dueCount) {
          // batch k falls due when (k + 1) / perConn seconds have passed
          p.due(t0 + ((scheduled[i]! + 1) / perConn) * 1000);
          scheduled[i]!++;
        }
        p.pump();
      });
    }, 1);
  } else {
    for (const p of live) p.pump();
  }
  await sleep(o.durationMs);
  s.sending = false;
  s.inWindow = false;
  const windowMs = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  clearInterval(ticker);

  const deadline = performance.now() + o.drainMs;
  while (performance.now() < deadline && live.some((p) => p.unacked > 0 && !p.closed)) await sleep(5);
  const unacked = live.reduce((n, p) => n + p.unacked, 0);
  for (const p of producers) p.close();
  await sleep(20);
  return {
    kind: 'result',
    thread: o.thread,
    connections: producers.length,
    connected: live.length,
    framesSent: s.framesSent,
    bytesSent: s.bytesSent,
    resends: s.resends,
    eventsAckedInWindow: s.eventsAckedInWindow,
    eventsAcked: s.eventsAcked,
    acceptedReported: s.acceptedReported,
    rejectedReported: s.rejectedReported,
    nacks: s.nacks,
    errorFrames: s.errorFrames,
    closes: s.closes,
    unacked,
    windowMs,
    elu,
    histogram: encodeHistogram(s.hist),
    frameBytes: pool.frameBytes,
    recordJsonBytes: pool.recordJsonBytes,
  };
}

/** Runs `threads` worker threads of producers and aggregates what they measured. */
export async function runProducers(o: ProducerRunOptions): Promise<ProducerRunResult> {
  const results = await Promise.all(
    Array.from({ length: o.threads }, (_, thread) => {
      const init: ThreadInit = { ...o, kind: 'gasoline-bench-producer', thread };
      return new Promise<ThreadResult>((resolve, reject) => {
        const w = new Worker(new URL(import.meta.url), { workerData: init });
        w.once('message', (m: ThreadResult) => {
          resolve(m);
          void w.terminate();
        });
        w.once('error', reject);
        w.once('exit', (code) => reject(new Error(`producer thread ${thread} exited with ${code} before reporting`)));
      });
    }),
  );
  const windowMs = Math.max(...results.map((r) => r.windowMs));
  const sum = (f: (r: ThreadResult) => number): number => results.reduce((n, r) => n + f(r), 0);
  const merge = (f: (r: ThreadResult) => Record<string, number>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(f(r))) bump(out, k, v);
    return out;
  };
  const eventsInWindow = sum((r) => r.eventsAckedInWindow);
  const frameBytes = results[0]?.frameBytes ?? 0;
  const recordsPerFrame = 100;
  return {
    threads: o.threads,
    connections: sum((r) => r.connections),
    connected: sum((r) => r.connected),
    window: o.window,
    mode: o.mode,
    targetRate: o.mode === 'open' ? (o.rate ?? null) : null,
    durationMs: Math.round(windowMs),
    events_per_s: Math.round(eventsInWindow / (windowMs / 1000)),
    mb_per_s: Math.round(((eventsInWindow / recordsPerFrame) * frameBytes) / (windowMs / 1000) / 1e4) / 100,
    framesSent: sum((r) => r.framesSent),
    resends: sum((r) => r.resends),
    eventsAcked: sum((r) => r.eventsAcked),
    acceptedReported: sum((r) => r.acceptedReported),
    rejectedReported: sum((r) => r.rejectedReported),
    nacks: merge((r) => r.nacks),
    errorFrames: merge((r) => r.errorFrames),
    closes: merge((r) => r.closes),
    unacked: sum((r) => r.unacked),
    ack_latency: percentiles(mergeHistograms(results.map((r) => r.histogram))),
    producer_elu_max: Math.round(Math.max(...results.map((r) => r.elu)) * 100) / 100,
    frame_bytes: frameBytes,
    record_json_bytes: results[0]?.recordJsonBytes ?? 0,
  };
}

/**
 * Producers share this machine's cores with the server and with the bench's own MCP client, which
 * timestamps notifications: a load generator that takes a core when the server or the probe
 * wakes up measures itself. So its threads yield (nice 10, this thread only: the same per-thread
 * setpriority the daemon's ingest workers use, src/pool/thread-priority.ts), as they would on a
 * separate machine. Elsewhere than Linux the load runs at normal priority.
 */
const PRODUCER_NICE = 10;

if (!isMainThread && (workerData as { kind?: string } | null)?.kind === 'gasoline-bench-producer') {
  const init = workerData as ThreadInit;
  lowerOwnPriority(PRODUCER_NICE);
  runThread(init).then(
    (r) => {
      parentPort!.postMessage(r);
      // sockets are closed; let the thread end on its own
    },
    (e: unknown) => {
      throw e;
    },
  );
}
