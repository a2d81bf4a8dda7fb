/**
 * The one WebSocket to the Gasoline server (PROTOCOL.md v1): hello/welcome, batching, acks,
 * resend from `resume_from_seq`, backoff, keepalive. Platform-free on purpose (socket factory,
 * clock and random are injected) so Node tests drive it against the real server.
 *
 * Delivery model: records wait in `pending` (grouped per tab and page) and only become numbered
 * batches while a welcomed connection exists and the unacknowledged window has room. Numbered
 * batches stay in `unacked` until a cumulative ack covers them and are resent, same seq, after a
 * reconnect or a nack. The server applies each (session, seq) at most once, so a resend never
 * duplicates, and no numbered batch is ever dropped, so the server never sees a gap.
 */
import { Packr, pack, unpack } from 'msgpackr';
import type { BatchFrame, HelloFrame, RecordKind, RecordsByKind, ResultFrame, ServerFrame, WireRecord } from '../shared/protocol.js';
import { RECORD_KINDS } from '../shared/protocol.js';
import type { PanelTokenFrame } from './panel-token.js';

/**
 * Batches in msgpackr's record extension: each record shape's keys are written once per frame, so
 * the frame is smaller and the server decodes it ~1.7× faster than plain maps, and still stores a
 * record it did not change as these bytes (docs/ARCHITECTURE.md "Records kept as their bytes").
 * Every frame is self-contained: a Packr without shared structures defines each shape in the frame.
 */
const batchPackr = new Packr({ useRecords: true });

/** The subset of the browser WebSocket we use; `ws` in Node fits it too. */
export interface SocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

const OPEN = 1;

export interface TransportOptions {
  url: string;
  version: string;
  session: string;
  createSocket: (url: string) => SocketLike;
  /** app-level ping period; MV3 kills a worker 30 s after its last WebSocket message */
  keepaliveMs?: number;
  flushMs?: number;
  maxRecordsPerBatch?: number;
  /** a batch is cut once its records' JSON size passes this; the server's max_frame is 1 MiB */
  maxBatchBytes?: number;
  /** numbered batches in flight; bounds memory and resend cost */
  maxUnacked?: number;
  /** records waiting for a connection; beyond it new records are dropped and counted */
  maxPendingRecords?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
  random?: () => number;
  onStatus?: (s: TransportStatus) => void;
  onCommand?: (frame: Extract<ServerFrame, { t: 'cmd' }>) => void;
  /** frames this class does not act on (e.g. `panel_token` replies) and every `error` frame; true = consumed */
  onOther?: (frame: Record<string, unknown>) => boolean;
  /**
   * Pairing (docs/SECURITY.md): with it, nothing but hello goes to a server until its welcome
   * proved our secret, and our proof answers it. Absent: no pairing (plain test producers).
   */
  auth?: HandshakeAuth;
}

export interface HandshakeAuth {
  /** the pairing secret (hex), or null while not paired */
  key(): string | null;
  nonce(): string;
  proofs(key: string, producerNonce: string, serverNonce: string): Promise<{ server: string; producer: string }>;
  same(given: unknown, expected: string): boolean;
}

/**
 * Why a server was not given any telemetry: we are not paired (`unpaired`, with the server's
 * trust-on-first-use offer when it made one), it proved nothing (`no_proof`: not gasoline, or a
 * gasoline without pairing), or its proof was wrong (`impostor`: another process on the port, or a
 * daemon whose secret was reset).
 */
export type RefusedWhy = 'unpaired' | 'no_proof' | 'impostor';

export type ConnState =
  | { kind: 'stopped' }
  | { kind: 'connecting'; attempt: number }
  | { kind: 'handshake' }
  | { kind: 'connected'; since: number; server_version: string }
  | { kind: 'backoff'; attempt: number; retry_at: number; last_error: string }
  | { kind: 'refused'; why: RefusedWhy; reason: string; tofu: boolean; attempt: number; retry_at: number };

export interface TransportCounters {
  records_in: number;
  records_accepted: number;
  records_rejected: number;
  /** dropped in the extension because nothing could take them (queue full, frame too big) */
  records_dropped: number;
  batches_sent: number;
  batches_acked: number;
  batches_resent: number;
  nacks: number;
  connects: number;
  /** command results replaced by an error because they exceeded max_frame */
  results_too_large: number;
}

export interface TransportStatus {
  url: string;
  session: string;
  state: ConnState;
  pending_records: number;
  unacked_batches: number;
  last_acked_seq: number;
  counters: TransportCounters;
  last_error: string | null;
}

interface Group {
  tabId: number | undefined;
  pageUrl: string;
  records: Partial<Record<RecordKind, WireRecord[]>>;
  count: number;
  bytes: number;
}

interface Unacked {
  seq: number;
  bytes: Uint8Array;
  records: number;
}

export class Transport {
  private readonly o: Required<Omit<TransportOptions, 'onStatus' | 'onCommand' | 'onOther' | 'auth'>> & Pick<TransportOptions, 'onStatus' | 'onCommand' | 'onOther' | 'auth'>;
  /** this connection's hello nonce (pairing) */
  private nonce = '';
  private socket: SocketLike | null = null;
  private state: ConnState = { kind: 'stopped' };
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private keepaliveTimer: ReturnType<typeof setInterval> | undefined;
  private resendTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly groups = new Map<string, Group>();
  private pendingCount = 0;
  private readonly unacked: Unacked[] = [];
  private nextSeq = 1;
  private lastAcked = -1;
  private maxEvents: number;
  private maxFrame = 1024 * 1024;
  private lastError: string | null = null;
  private awaitingPong = false;
  readonly counters: TransportCounters = {
    records_in: 0,
    records_accepted: 0,
    records_rejected: 0,
    records_dropped: 0,
    batches_sent: 0,
    batches_acked: 0,
    batches_resent: 0,
    nacks: 0,
    connects: 0,
    results_too_large: 0,
  };

  constructor(opts: TransportOptions) {
    this.o = {
      keepaliveMs: 20_000,
      flushMs: 100,
      maxRecordsPerBatch: 100,
      maxBatchBytes: 256 * 1024,
      maxUnacked: 64,
      maxPendingRecords: 10_000,
      backoffMinMs: 250,
      backoffMaxMs: 30_000,
      random: Math.random,
      ...opts,
    };
    this.maxEvents = this.o.maxRecordsPerBatch;
  }

  start(): void {
    if (this.state.kind !== 'stopped') return;
    this.connect();
  }

  /** Reconnects now if we are waiting out a backoff (e.g. the browser just woke the worker). */
  poke(): void {
    if (this.state.kind === 'backoff' || this.state.kind === 'refused') {
      clearTimeout(this.reconnectTimer);
      this.connect();
    }
  }

  stop(): void {
    this.state = { kind: 'stopped' };
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.flushTimer);
    clearTimeout(this.resendTimer);
    clearInterval(this.keepaliveTimer);
    this.flushTimer = undefined;
    this.resendTimer = undefined;
    this.dropSocket(1000, 'stopped');
    this.emitStatus();
  }

  /** Lets go of the socket without hearing from it again, and closes it. */
  private dropSocket(code: number, reason: string): void {
    const s = this.socket;
    this.socket = null;
    if (!s) return;
    s.onclose = s.onmessage = s.onopen = null;
    // closing a socket that is still connecting reports an error afterwards; it must land on a
    // handler (a WebSocket without one, as in Node's ws, would throw it at the top level)
    s.onerror = () => undefined;
    try {
      s.close(code, reason);
    } catch {
      // already closed
    }
  }

  get connected(): boolean {
    return this.state.kind === 'connected';
  }

  status(): TransportStatus {
    return {
      url: this.o.url,
      session: this.o.session,
      state: this.state,
      pending_records: this.pendingCount,
      unacked_batches: this.unacked.length,
      last_acked_seq: this.lastAcked,
      counters: { ...this.counters },
      last_error: this.lastError,
    };
  }

  /** Queues records of one tab/page; they leave within flushMs or as soon as a batch is full. */
  add(tabId: number | undefined, pageUrl: string, records: RecordsByKind): void {
    const key = `${tabId ?? ''}\n${pageUrl}`;
    let g = this.groups.get(key);
    for (const kind of RECORD_KINDS) {
      const list = records[kind];
      if (!list) continue;
      for (const r of list) {
        this.counters.records_in++;
        if (this.pendingCount >= this.o.maxPendingRecords) {
          this.counters.records_dropped++;
          continue;
        }
        if (!g) this.groups.set(key, (g = { tabId, pageUrl, records: {}, count: 0, bytes: 0 }));
        (g.records[kind] ??= []).push(r);
        g.count++;
        g.bytes += approxSize(r);
        this.pendingCount++;
      }
    }
    if (!g) return;
    if (g.count >= this.maxEvents || g.bytes >= this.o.maxBatchBytes) this.flush();
    else this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, this.o.flushMs);
  }

  /** Sends a non-batch frame (results, pings, panel token requests) if connected; false when it could not. */
  send(frame: ResultFrame | { t: 'ping' | 'pong'; ts: number } | PanelTokenFrame): boolean {
    if (this.state.kind !== 'connected' || !this.socket || this.socket.readyState !== OPEN) return false;
    this.socket.send(pack(frame));
    return true;
  }

  /**
   * Sends a command's result. One larger than the server's max_frame would get the socket closed
   * (1009) and lose every batch in flight with it, so it is replaced by an error result that says
   * how large it was; the connection keeps working.
   */
  sendResult(frame: ResultFrame): boolean {
    if (this.state.kind !== 'connected' || !this.socket || this.socket.readyState !== OPEN) return false;
    let bytes = pack(frame);
    if (bytes.byteLength > this.maxFrame) {
      this.counters.results_too_large++;
      bytes = pack({ t: 'result', id: frame.id, status: 'error', error: `result_too_large: the answer was ${bytes.byteLength} bytes, over max_frame ${this.maxFrame}; narrow the query (a more specific selector, no children or styles)` } satisfies ResultFrame);
    }
    this.socket.send(bytes);
    return true;
  }

  // ---- connection ----

  private connect(): void {
    clearTimeout(this.reconnectTimer);
    this.state = { kind: 'connecting', attempt: this.attempt };
    this.emitStatus();
    let s: SocketLike;
    try {
      s = this.o.createSocket(this.o.url);
    } catch (e) {
      this.failed(`cannot open ${this.o.url}: ${String(e)}`);
      return;
    }
    s.binaryType = 'arraybuffer';
    this.socket = s;
    s.onopen = () => {
      if (this.socket !== s) return;
      this.state = { kind: 'handshake' };
      const hello: HelloFrame = { t: 'hello', v: 1, client: 'extension', version: this.o.version, session: this.o.session };
      // Lets a server that forgot this session (restart, eviction) re-baseline instead of
      // treating our resent batches as a fresh start.
      if (this.lastAcked >= 0) hello.last_acked_seq = this.lastAcked;
      if (this.o.auth) {
        this.nonce = this.o.auth.nonce();
        hello.auth = { v: 1, nonce: this.nonce };
      }
      s.send(pack(hello));
    };
    s.onmessage = (ev) => {
      if (this.socket !== s) return;
      let frame: ServerFrame;
      try {
        frame = unpack(toBytes(ev.data)) as ServerFrame;
      } catch (e) {
        this.lastError = `undecodable frame from server: ${String(e)}`;
        return;
      }
      this.onFrame(frame);
    };
    s.onerror = () => {
      // onclose follows with the code; nothing to do here
    };
    s.onclose = (ev) => {
      if (this.socket !== s) return;
      this.socket = null;
      this.failed(ev.code === 1006 || !ev.reason ? `connection closed (${ev.code})` : `closed ${ev.code}: ${ev.reason}`);
    };
  }

  private failed(why: string, refused?: { why: RefusedWhy; tofu: boolean }): void {
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
    clearTimeout(this.resendTimer);
    this.resendTimer = undefined;
    if (this.state.kind === 'stopped') return;
    this.lastError = why;
    // Exponential backoff with jitter: many tabs' worth of browsers must not reconnect in lockstep.
    const base = Math.min(this.o.backoffMaxMs, this.o.backoffMinMs * 2 ** Math.min(this.attempt, 20));
    const delay = Math.round(base / 2 + (this.o.random() * base) / 2);
    this.attempt++;
    this.state = refused
      ? { kind: 'refused', why: refused.why, reason: why, tofu: refused.tofu, attempt: this.attempt, retry_at: Date.now() + delay }
      : { kind: 'backoff', attempt: this.attempt, retry_at: Date.now() + delay, last_error: why };
    this.scheduleRetry(this.state);
  }

  private scheduleRetry(st: { retry_at: number }): void {
    this.emitStatus();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.connect(), Math.max(0, st.retry_at - Date.now()));
  }

  /**
   * No telemetry for this server: say why, close, retry later (records keep waiting, bounded by
   * maxPendingRecords, as during an outage). The server gets nothing but our hello.
   */
  private refuse(why: RefusedWhy, reason: string, tofu = false): void {
    this.dropSocket(4001, `pairing: ${why}`);
    this.failed(reason, { why, tofu });
  }

  private onFrame(f: ServerFrame): void {
    switch (f.t) {
      case 'welcome':
        return this.o.auth ? this.checkWelcome(f) : this.onWelcome(f);
      case 'ack':
        return this.onAck(f);
      case 'nack':
        this.counters.nacks++;
        this.lastError = `nack ${f.seq}: ${f.code ?? 'unknown'}`;
        return this.pauseThenResend(f.retry_after_ms, f.resume_from_seq);
      case 'error':
        // an answer to one of our own requests (an older server's unknown_frame_type) is no connection error
        if (this.o.onOther?.(f as unknown as Record<string, unknown>)) return;
        this.lastError = `${f.code}: ${f.message ?? ''}`;
        // The server answers `error overloaded` when it could not even queue a batch: not applied.
        if (f.code === 'overloaded') this.pauseThenResend(f.retry_after_ms, undefined);
        return this.emitStatus();
      case 'ping':
        this.send({ t: 'pong', ts: f.ts });
        return;
      case 'pong':
        this.awaitingPong = false;
        return;
      case 'cmd':
        this.o.onCommand?.(f);
        return;
      default:
        // A newer server may send frame types we do not know yet (PROTOCOL: extend compatibly).
        this.o.onOther?.(f as unknown as Record<string, unknown>);
        return;
    }
  }

  /** The welcome must prove our secret before anything else is sent; then our proof answers it. */
  private checkWelcome(f: Extract<ServerFrame, { t: 'welcome' }>): void {
    const auth = this.o.auth!;
    const s = this.socket;
    const proof = f.auth;
    const key = auth.key();
    if (!key) return this.refuse('unpaired', 'not paired with this server: run `gasoline pair` and type its code below', proof?.tofu === true);
    if (!proof || typeof proof.nonce !== 'string') return this.refuse('no_proof', 'the server on this port proved no pairing: it is not gasoline, or a gasoline too old to pair (update it)');
    auth.proofs(key, this.nonce, proof.nonce).then(
      (p) => {
        if (this.socket !== s || !s) return;
        if (!auth.same(proof.proof, p.server)) return this.refuse('impostor', 'the server on this port is not the one we are paired with (another process holds the port, or its pairing was reset: pair again)');
        s.send(pack({ t: 'auth', proof: p.producer }));
        this.onWelcome(f);
      },
      (e: unknown) => {
        if (this.socket === s) this.refuse('impostor', `pairing proof could not be computed: ${String(e)}`);
      },
    );
  }

  private onWelcome(f: Extract<ServerFrame, { t: 'welcome' }>): void {
    this.attempt = 0;
    this.counters.connects++;
    this.state = { kind: 'connected', since: Date.now(), server_version: f.server_version ?? '?' };
    if (f.max_events_per_batch) this.maxEvents = Math.max(1, Math.min(this.o.maxRecordsPerBatch, f.max_events_per_batch));
    if (f.max_frame) this.maxFrame = f.max_frame;
    this.dropBelow(f.resume_from_seq);
    if (this.unacked.length === 0 && this.nextSeq < f.resume_from_seq) this.nextSeq = f.resume_from_seq;
    this.awaitingPong = false;
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = setInterval(() => this.keepalive(), this.o.keepaliveMs);
    this.resendAll();
    this.flush();
    this.emitStatus();
  }

  private keepalive(): void {
    if (this.awaitingPong && this.socket) {
      // No pong for a whole period: the connection is dead without having told us.
      this.socket.close(4000, 'no pong');
      return;
    }
    this.awaitingPong = this.send({ t: 'ping', ts: Date.now() });
  }

  private onAck(f: Extract<ServerFrame, { t: 'ack' }>): void {
    this.counters.records_accepted += f.accepted ?? 0;
    this.counters.records_rejected += f.rejected ?? 0;
    if (f.errors?.length) this.lastError = `server rejected ${f.errors.length} record(s): ${f.errors[0]!.code} ${f.errors[0]!.message}`;
    this.dropBelow(f.seq + 1);
    if (f.seq > this.lastAcked && f.seq < this.nextSeq) this.lastAcked = f.seq;
    this.flush();
    this.emitStatus();
  }

  /** Forgets numbered batches the server has applied (everything below `seq`). */
  private dropBelow(seq: number): void {
    let n = 0;
    while (n < this.unacked.length && this.unacked[n]!.seq < seq) n++;
    if (n > 0) {
      this.lastAcked = Math.max(this.lastAcked, this.unacked[n - 1]!.seq);
      this.unacked.splice(0, n);
      this.counters.batches_acked += n;
    }
  }

  private pauseThenResend(retryAfterMs: number | undefined, resumeFrom: number | undefined): void {
    // Nacks for the batches already in flight behind the first one are expected; one pause covers them.
    if (this.resendTimer !== undefined) return;
    if (resumeFrom !== undefined) this.dropBelow(resumeFrom);
    this.resendTimer = setTimeout(() => {
      this.resendTimer = undefined;
      if (this.state.kind !== 'connected') return;
      this.resendAll();
      this.flush();
    }, Math.max(50, retryAfterMs ?? 500));
    this.emitStatus();
  }

  private resendAll(): void {
    const s = this.socket;
    if (!s || s.readyState !== OPEN) return;
    for (const b of this.unacked) {
      s.send(b.bytes);
      this.counters.batches_resent++;
    }
  }

  // ---- batching ----

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.state.kind !== 'connected' || this.resendTimer !== undefined) return;
    const s = this.socket;
    if (!s || s.readyState !== OPEN) return;
    for (const [key, g] of this.groups) {
      while (g.count > 0) {
        if (this.unacked.length >= this.o.maxUnacked) return;
        const b = this.cut(g);
        if (b) {
          this.unacked.push(b);
          this.counters.batches_sent++;
          s.send(b.bytes);
        }
      }
      this.groups.delete(key);
    }
  }

  /** Takes up to one batch worth of records off a group and numbers it. */
  private cut(g: Group): Unacked | null {
    const take: RecordsByKind = {};
    let n = 0;
    let bytes = 0;
    for (const kind of RECORD_KINDS) {
      const list = g.records[kind];
      if (!list || list.length === 0) continue;
      let i = 0;
      while (i < list.length && n < this.maxEvents && (n === 0 || bytes < this.o.maxBatchBytes)) {
        bytes += approxSize(list[i]!);
        i++;
        n++;
      }
      take[kind] = list.splice(0, i);
      if (n >= this.maxEvents || bytes >= this.o.maxBatchBytes) break;
    }
    g.count -= n;
    g.bytes = Math.max(0, g.bytes - bytes);
    this.pendingCount -= n;
    const frame: BatchFrame = { t: 'batch', seq: this.nextSeq, sent_at: Date.now(), ...take };
    if (g.tabId !== undefined) frame.tab_id = g.tabId;
    if (g.pageUrl) frame.page_url = g.pageUrl;
    const packed = batchPackr.pack(frame);
    if (packed.byteLength > this.maxFrame) {
      // Only a pathological single record can get here (the page hook caps every field);
      // the server would close the socket with 1009, so the batch is dropped instead.
      this.counters.records_dropped += n;
      this.lastError = `dropped a batch of ${n} record(s): ${packed.byteLength} bytes > max_frame ${this.maxFrame}`;
      return null;
    }
    this.nextSeq++;
    return { seq: frame.seq, bytes: packed, records: n };
  }

  private emitStatus(): void {
    this.o.onStatus?.(this.status());
  }
}

function approxSize(r: WireRecord): number {
  try {
    return JSON.stringify(r).length;
  } catch {
    return 1024;
  }
}

function toBytes(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (Array.isArray(data)) {
    // `ws` in Node may hand over fragments
    const parts = data as Uint8Array[];
    const out = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.byteLength;
    }
    return out;
  }
  throw new TypeError('binary frame expected');
}
