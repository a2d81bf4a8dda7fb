/**
 * WebSocket `/ws` (PROTOCOL.md §1). Per frame the edge does one thing: copy the bytes into the
 * shared input arena. Decoding, validation and storage happen in the workers; this module keeps
 * the per-connection and per-session state machine (hello → ready), ordering per session,
 * acks (cumulative, coalesced per task), nacks, backpressure and closes.
 */
import { pack, unpack } from 'msgpackr';
import { ERRORS, type ErrorCode } from '../errors.js';
import type { ItemOutcome, RecordError, WsItem } from '../pool/messages.js';
import type { Pending } from '../pool/dispatcher.js';
import type { IngestPool } from '../pool/ingest-pool.js';
import type { ArenaSlice } from '../pool/input-arena.js';
import type { Config } from '../config.js';
import { log } from '../log.js';
import { admit, type Trust } from './admission.js';
import type { EdgeStats } from './edge-stats.js';
import type { Guard } from './guard.js';
import { SessionTable, type Session } from './sessions.js';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket } from './uws.js';
import { VERSION } from '../version.js';
import type { Challenge, Pairing } from '../pairing/index.js';
import type { HelloAuth } from '../domain/ingest/outcome.js';
import type { ExchangeKeys } from '../pairing/proof.js';
import type { PanelTokens } from '../pairing/panel-tokens.js';
import { MCP_PATH } from '../daemon/contract.js';
import { peekBatchSeq } from '../domain/wire/peek-seq.js';
import { Cadence } from '../cadence.js';

interface QueuedFrame {
  conn: Conn;
  slice: ArenaSlice;
  recvTime: number;
  /** epoch ms with sub-ms precision, for alert latency */
  edgeAt: number;
  /** its batch seq, when read on arrival (null: read, and not plainly a batch); see seqOf */
  seq?: number | null;
}

interface PendingAck {
  seq: number;
  accepted: number;
  rejected: number;
  errors: RecordError[];
}

export interface ProducerInfo {
  id: number;
  client: string;
  version: string;
  session: string;
  connected_at: string;
  /** proved the pairing secret on this connection (docs/SECURITY.md); only such a producer gets commands */
  verified: boolean;
}

export class Conn {
  state: 'new' | 'awaiting_hello' | 'ready' | 'pairing' | 'closed' = 'new';
  /** the welcome's challenge, until the producer's `auth` frame answers it (its first frame after hello) */
  challenge: Challenge | null = null;
  /** proved the pairing secret: the one flag commands, results and record marking follow */
  verified = false;
  /** a pairing exchange in progress (state 'pairing'); 'busy' while its code is being checked */
  exchange: ExchangeKeys | 'busy' | null = null;
  session: Session | null = null;
  readonly waiting: QueuedFrame[] = [];
  helloTimer: NodeJS.Timeout | undefined;
  pendingAck: PendingAck | null = null;
  /** non-ack frames held while the client is not reading (bounded) */
  readonly deferred: Uint8Array[] = [];
  producer: ProducerInfo | null = null;
  /** when the last complete frame (message, ping or pong) arrived: the frame deadline counts from here */
  lastFrameAt = Date.now();
  /** a ping went out for the frame deadline and no frame came since */
  pinged = false;
  constructor(
    readonly id: number,
    public ws: WebSocket<ConnData> | null,
    /** the peer address as uWS reports it, for the per-peer cap */
    readonly peer = '',
    readonly trust: Trust = 'none',
  ) {}

  /**
   * An "authenticated producer" for connection slots: our extension's Origin and a hello. Commands
   * and results need more: `verified`, the pairing proof (an Origin header proves nothing to a
   * local process).
   */
  get authenticated(): boolean {
    return this.trust === 'extension_origin' && this.state === 'ready';
  }
}

export interface ConnData {
  conn: Conn;
}

export interface WsEdgeOptions {
  config: Readonly<Config>;
  pool: IngestPool;
  guard: Guard;
  stats: EdgeStats;
  /** `result` frames (answers to our commands) go here */
  onResult?: (conn: Conn, r: Extract<ItemOutcome, { kind: 'result' }>) => void;
  onProducerChange?: (event: 'connected' | 'disconnected', p: ProducerInfo) => void;
  /** the pairing secret and policy; without it no producer is ever verified */
  pairing?: Pairing;
  /** the side panel's /mcp tokens, issued to verified producers; without it every ask is refused */
  panelTokens?: PanelTokens;
}

/** an `auth` or `pair` frame is a few hundred bytes; anything larger is not one (decoded on main) */
const MAX_PAIRING_FRAME = 1024;

const MAX_DEFERRED = 256;
/** the reason uWS (WebSocketProtocol.h, ERR_TOO_BIG_MESSAGE) gives when it cuts an over-long frame */
const UWS_TOO_BIG = 'Received too big message';
const MAX_WAITING_BEFORE_HELLO = 64;

export class WsEdge {
  readonly conns = new Set<Conn>();
  readonly sessions: SessionTable;
  private readonly queues = new Map<Session, QueuedFrame[]>();
  private readonly queuedBytes = new Map<Session, number>();
  /** One producer may hold at most this much of the input arena waiting for its turn. */
  private readonly sessionQueueCap: number;
  private nextConnId = 1;
  private accepting = true;
  /** the frame-deadline sweep: runs while a connection is open (Cadence) */
  private deadlineSweep: Cadence | undefined;
  /** records stored from producers that did not prove pairing ("mark"), and refusals ("refuse") */
  readonly unverified = { records: 0, batches: 0, results_dropped: 0, refused: 0 };

  constructor(private readonly o: WsEdgeOptions) {
    this.sessions = new SessionTable(o.config.limits.max_sessions);
    this.sessionQueueCap = Math.max(o.config.limits.max_frame * 2, Math.floor(o.config.pool.input_bytes / 8));
    o.stats.live = () => {
      let unauthenticated = 0;
      for (const c of this.conns) if (!c.authenticated) unauthenticated++;
      return { authenticated_open: this.conns.size - unauthenticated, unauthenticated_open: unauthenticated };
    };
  }

  producers(): ProducerInfo[] {
    const out: ProducerInfo[] = [];
    for (const c of this.conns) if (c.producer && c.state === 'ready') out.push(c.producer);
    return out;
  }

  /**
   * Where commands go: the newest authenticated extension connection. A restarted service worker
   * opens a new socket while the old one may linger until its close is seen; the new one is the
   * live one. A producer that only SAYS it is the extension (no Origin of ours) is never sent a
   * command — it would read what the agent types and could forge the answers (issue #18).
   */
  commandRoute(): { producer: ProducerInfo } | { refused: 'no_extension' | 'extension_unverified' } {
    let best: Conn | null = null;
    let unverified = false;
    for (const c of this.conns) {
      if (c.state !== 'ready' || c.producer?.client !== 'extension') continue;
      if (!c.authenticated || !c.verified) unverified = true;
      else if (!best || c.id > best.id) best = c;
    }
    if (best) return { producer: best.producer! };
    return { refused: unverified ? 'extension_unverified' : 'no_extension' };
  }

  /** The connection id commands would go to, or null. */
  commandTarget(): number | null {
    const r = this.commandRoute();
    return 'producer' in r ? r.producer.id : null;
  }

  /** Sends one frame on connection `connId`; false when it is gone. */
  sendTo(connId: number, frame: Record<string, unknown>): boolean {
    for (const c of this.conns) {
      if (c.id !== connId) continue;
      if (c.state !== 'ready') return false;
      this.send(c, frame);
      return true;
    }
    return false;
  }

  attach(app: TemplatedApp): void {
    const limits = this.o.config.limits;
    app.ws<ConnData>('/ws', {
      // uWS checks a frame's ANNOUNCED length against this when the header arrives, and otherwise
      // reserves the whole announced length up front (60 sockets announcing 15 MiB held 901 MB,
      // issue #18). So the cap is max_frame itself. The price: uWS refuses by closing the TCP
      // socket without a close frame (the client sees 1006; we count frame_too_large from the
      // reason uWS hands our close handler). welcome announces max_frame, so only a producer
      // that ignores it meets this.
      maxPayloadLength: limits.max_frame,
      maxBackpressure: limits.ws_max_backpressure,
      closeOnBackpressureLimit: 0,
      idleTimeout: limits.idle_timeout_s,
      sendPingsAutomatically: true,
      upgrade: (res, req, ctx) => this.upgrade(res, req, ctx),
      open: (ws) => this.open(ws),
      message: (ws, msg, isBinary) => this.message(ws, msg, isBinary),
      ping: (ws) => this.frameDone(ws.getUserData().conn, Date.now()),
      pong: (ws) => this.frameDone(ws.getUserData().conn, Date.now()),
      drain: (ws) => this.drain(ws.getUserData().conn),
      close: (ws, code, message) => this.closed(ws.getUserData().conn, code, message),
    });
    const deadline = limits.frame_deadline_ms;
    const every = Math.min(1000, Math.ceil(deadline / 4));
    this.deadlineSweep = new Cadence(() => {
      this.sweepDeadlines(Date.now(), deadline);
      return this.conns.size > 0 ? every : null;
    }, every);
  }

  /**
   * The frame deadline. uWS resets its idle timer on every byte received, so a frame trickled a
   * few bytes at a time never idles out while its buffer (up to max_frame) is held. A connection
   * must complete a frame within `frame_deadline_ms`; a quiet one is pinged at half of it, and a
   * healthy client's pong is a complete frame. A client in the middle of a frame cannot answer.
   */
  private sweepDeadlines(now: number, deadline: number): void {
    for (const c of this.conns) {
      const quiet = now - c.lastFrameAt;
      if (quiet > deadline) this.closeWith(c, 'frame_timeout', `no complete frame for ${quiet} ms (frame_deadline_ms ${deadline})`);
      else if (quiet > deadline / 2 && !c.pinged && c.ws && c.state !== 'closed') {
        c.pinged = true;
        c.ws.ping();
      }
    }
  }

  private frameDone(conn: Conn, now: number): void {
    conn.lastFrameAt = now;
    conn.pinged = false;
  }

  stopAccepting(): void {
    this.accepting = false;
  }

  /** Lets producers in again after stopAccepting (an operator's pause, and outage tests). */
  resumeAccepting(): void {
    this.accepting = true;
  }

  /** Sends what is owed and closes every socket with `code` (1001 on shutdown). */
  closeAll(code: ErrorCode): void {
    this.deadlineSweep?.close();
    for (const c of [...this.conns]) {
      this.flushAck(c);
      this.closeWith(c, code);
    }
  }

  private upgrade(res: HttpResponse, req: HttpRequest, ctx: unknown): void {
    // Headers must be read synchronously: the request object dies with this callback.
    const host = req.getHeader('host');
    const origin = req.getHeader('origin');
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const guard = this.o.guard;
    let code: ErrorCode | null = guard.check(host, origin) ?? (!this.accepting ? 'shutting_down' : null);
    const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
    const trust = guard.trust(origin);
    if (!code) {
      const limits = this.o.config.limits;
      const decision = admit([...this.conns], { peer, trust }, limits);
      if (!decision.admit) code = 'too_many_connections';
      else for (const c of decision.shed) this.closeWith(c, 'connection_shed', `the oldest unauthenticated connection makes room (max_connections ${limits.max_connections}, max_unauthenticated ${limits.max_unauthenticated}, per peer ${limits.max_unauthenticated_per_peer})`);
    }
    if (code) {
      this.o.stats.bump(this.o.stats.refused, code);
      res.cork(() => {
        res.writeStatus(`${ERRORS[code].http} ${code}`).writeHeader('content-type', 'application/json').end(JSON.stringify({ error: code, message: ERRORS[code].summary }), true);
      });
      return;
    }
    const conn = new Conn(this.nextConnId++, null, peer, trust);
    res.upgrade<ConnData>({ conn }, key, protocol, extensions, ctx as never);
  }

  private open(ws: WebSocket<ConnData>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    conn.lastFrameAt = Date.now();
    this.conns.add(conn);
    this.deadlineSweep?.wake();
    this.o.stats.connectionsOpen++;
    this.o.stats.connectionsTotal++;
    conn.helloTimer = setTimeout(() => {
      if (conn.state === 'new' || conn.state === 'awaiting_hello') this.closeWith(conn, 'hello_timeout');
    }, this.o.config.limits.hello_timeout_ms);
    conn.helloTimer.unref();
  }

  private message(ws: WebSocket<ConnData>, msg: ArrayBuffer, isBinary: boolean): void {
    const conn = ws.getUserData().conn;
    const stats = this.o.stats;
    const now = Date.now();
    this.frameDone(conn, now);
    stats.framesReceived++;
    stats.bytesReceived += msg.byteLength;
    if (conn.state === 'closed') return;
    if (!isBinary) {
      this.closeWith(conn, 'text_frame');
      return;
    }
    if (msg.byteLength > this.o.config.limits.max_frame) {
      this.closeWith(conn, 'frame_too_large', `frame of ${msg.byteLength} bytes; max_frame is ${this.o.config.limits.max_frame}`);
      return;
    }
    if (conn.state === 'pairing') return this.pairFrame(conn, msg);
    if (conn.challenge && conn.state === 'ready' && this.proofFrame(conn, msg)) return;
    // an idle session's batch is read now, and refused before it takes arena space (refuseOnArrival)
    const seq = conn.state === 'ready' && this.idle(conn.session!) ? (peekBatchSeq(new Uint8Array(msg)) ?? null) : undefined;
    if (seq != null && this.refuseOnArrival(conn.session!, conn, seq)) return;
    // The one copy: uWS neuters `msg` when this callback returns.
    const slice = this.o.pool.arena.copyIn(new Uint8Array(msg));
    if (!slice) {
      this.closeWith(conn, 'input_full');
      return;
    }
    const frame: QueuedFrame = { conn, slice, recvTime: now, edgeAt: performance.timeOrigin + performance.now(), ...(seq !== undefined ? { seq } : {}) };
    switch (conn.state) {
      case 'new':
        conn.state = 'awaiting_hello';
        // The client met its deadline when its first frame arrived; how long our workers take to
        // decode it (hundreds of hellos at once, a loaded machine) is not its fault.
        clearTimeout(conn.helloTimer);
        this.dispatchHello(frame);
        return;
      case 'awaiting_hello':
        if (conn.waiting.length >= MAX_WAITING_BEFORE_HELLO) {
          this.o.pool.arena.release(slice);
          this.closeWith(conn, 'hello_required');
          return;
        }
        conn.waiting.push(frame);
        return;
      case 'ready':
        this.enqueue(conn.session!, frame);
        return;
    }
  }

  private dispatchHello(f: QueuedFrame): void {
    const pool = this.o.pool;
    const slot = pool.slotAlloc.alloc();
    if (slot === undefined) {
      pool.arena.release(f.slice);
      this.closeWith(f.conn, 'overloaded');
      return;
    }
    pool.dispatcher.submit(
      { src: 'ws', off: f.slice.off, len: f.slice.len, slot, shed: false, session: null, applied: -1, edgeAt: f.edgeAt },
      f.recvTime,
      (r) => {
        pool.arena.release(f.slice);
        pool.slotAlloc.release(slot);
        this.helloResult(f.conn, r);
      },
      true,
    );
  }

  private helloResult(conn: Conn, r: ItemOutcome): void {
    if (conn.state === 'closed') return;
    if (r.kind !== 'hello') {
      if (r.kind === 'rejected') this.o.stats.bump(this.o.stats.frameErrors, r.code);
      const why = r.kind === 'rejected' ? `${r.code}: ${r.message}` : `got ${r.kind}`;
      this.closeWith(conn, 'hello_required', `first frame must be hello (${why})`);
      this.discardWaiting(conn);
      return;
    }
    if (r.v !== 1) {
      this.closeWith(conn, 'unsupported_version', `protocol v${r.v} is not supported; this server speaks v1`);
      this.discardWaiting(conn);
      return;
    }
    const pairing = this.o.pairing;
    if (r.auth?.pair) {
      this.discardWaiting(conn);
      this.beginPair(conn, r.auth);
      return;
    }
    if (pairing?.policy === 'refuse' && r.auth?.v !== 1) {
      this.unverified.refused++;
      this.closeWith(conn, 'producer_unpaired', 'this server takes records only from a paired producer (pairing.unpaired "refuse"); pair it: gasoline pair');
      this.discardWaiting(conn);
      return;
    }
    const session = this.sessions.attach(r.session, r.last_acked_seq, Date.now());
    if (!session) {
      this.closeWith(conn, 'too_many_connections', 'session table full');
      this.discardWaiting(conn);
      return;
    }
    clearTimeout(conn.helloTimer);
    conn.session = session;
    conn.state = 'ready';
    conn.producer = { id: conn.id, client: r.client, version: r.version, session: r.session, connected_at: new Date().toISOString(), verified: false };
    const limits = this.o.config.limits;
    const welcome: Record<string, unknown> = {
      t: 'welcome',
      v: 1,
      server_version: VERSION,
      max_frame: limits.max_frame,
      max_events_per_batch: limits.max_events_per_batch,
      resume_from_seq: session.applied + 1,
    };
    // A producer that sent a nonce gets our proof and owes us its own, as its next frame.
    if (pairing && r.auth?.v === 1) {
      conn.challenge = pairing.challenge(r.auth.nonce);
      welcome.auth = conn.challenge.welcome;
      // under "refuse", nothing sent ahead of the proof is taken (our extension waits for welcome)
      if (pairing.policy === 'refuse' && conn.waiting.length) {
        this.unverified.refused++;
        this.closeWith(conn, 'producer_unpaired', 'frames sent before the pairing proof are refused (pairing.unpaired "refuse")');
        this.discardWaiting(conn);
        return;
      }
    }
    this.send(conn, welcome);
    this.o.onProducerChange?.('connected', conn.producer);
    const waiting = conn.waiting.splice(0);
    for (const f of waiting) this.enqueue(session, f);
  }

  private discardWaiting(conn: Conn): void {
    for (const f of conn.waiting.splice(0)) this.o.pool.arena.release(f.slice);
  }

  /**
   * A batch refused as it arrives, before it takes arena space: its session has nothing queued or
   * in flight (so nothing it sent earlier is still unanswered), and the batch skips ahead of the
   * session's next seq or the pool is overloaded. Refusals made only after the copy (pump) free
   * their slice at once, but the arena reclaims in order: a producer resending at once laps a tail
   * held by one slow slice and fills the arena, and gets `input_full`, a closed socket, where a
   * nack was due. Refused here, the arena holds only what was admitted, as the workers drain it.
   */
  private refuseOnArrival(session: Session, conn: Conn, seq: number): boolean {
    let code: 'overloaded' | 'out_of_order';
    if (skipsAhead(session, seq)) code = 'out_of_order';
    else if (this.o.pool.overloaded()) {
      code = 'overloaded';
      this.o.pool.noteShed();
    } else return false;
    this.o.stats.bump(this.o.stats.answeredAtEdge, code);
    this.itemResult(conn, session, { kind: 'nack', seq, code });
    return true;
  }

  private enqueue(session: Session, f: QueuedFrame): void {
    const bytes = (this.queuedBytes.get(session) ?? 0) + f.slice.len;
    if (bytes > this.sessionQueueCap) {
      // A producer far ahead of its acks is closed alone, before it can crowd out the others.
      this.o.pool.arena.release(f.slice);
      this.closeWith(f.conn, 'overloaded', `over ${this.sessionQueueCap} bytes queued; keep a bounded window of unacknowledged batches`);
      return;
    }
    this.queuedBytes.set(session, bytes);
    let q = this.queues.get(session);
    if (!q) this.queues.set(session, (q = []));
    // idle until this frame: nothing of this producer's is queued or in flight
    const idle = q.length === 0 && !session.inflight;
    q.push(f);
    this.pump(session, idle);
  }

  /** One task at a time per session keeps its batches in order; all that queued meanwhile goes next. */
  private pump(session: Session, idle = false): void {
    // a loop, not a recursion: a refused group is answered at once and the next one taken
    for (let first = true; ; first = false) {
      if (session.inflight) return;
      const q = this.queues.get(session);
      if (!q || q.length === 0) {
        this.queues.delete(session);
        this.queuedBytes.delete(session);
        return;
      }
      const pool = this.o.pool;
      const taken = q.splice(0, this.o.config.pool.max_items_per_task);
      let bytes = 0;
      for (const f of taken) bytes += f.slice.len;
      this.queuedBytes.set(session, (this.queuedBytes.get(session) ?? bytes) - bytes);
      const take = this.refuseOutOfOrder(session, taken);
      if (take.length === 0) continue;
      // Refused too when the group waited behind this session's earlier batches for longer than the
      // queue-delay bound: with a deep producer window the backlog sits here, not in the dispatcher.
      const waited = performance.timeOrigin + performance.now() - take[0]!.edgeAt;
      const shed = pool.overloaded() || waited > this.o.config.pool.max_queue_delay_ms;
      if (shed) pool.noteShed(take.length);
      if (shed && this.refuseShed(session, take)) continue;
      if (this.submit(session, take, shed, first && idle)) return;
    }
  }

  /**
   * The leading batches of a group that a worker could only refuse as out of order, refused here
   * from their first bytes (peekBatchSeq). A producer resends go-back-N after a nack (ours and the
   * extension both): the batches it had in flight behind the refused one arrive after it, each one
   * past the session's next seq, and each used to be decoded on a worker to be told so. Under
   * sustained overload those decodes crowded out the work that was accepted.
   *
   * Exactly the worker's verdict: no group of this session is in flight (pump), so `applied` is
   * what the worker would start from, and a batch past applied + 1 is out of order before anything
   * in it is read. A fresh session (applied −1) takes any seq first, as in the worker; the first
   * frame that is not plainly such a batch ends the refusals, in order.
   */
  private refuseOutOfOrder(session: Session, take: QueuedFrame[]): QueuedFrame[] {
    if (session.applied < 0) return take;
    let i = 0;
    for (; i < take.length; i++) {
      const f = take[i]!;
      const seq = this.seqOf(f);
      if (seq === undefined || !skipsAhead(session, seq)) break;
      this.o.pool.arena.release(f.slice);
      this.o.stats.bump(this.o.stats.answeredAtEdge, 'out_of_order');
      this.itemResult(f.conn, session, { kind: 'nack', seq, code: 'out_of_order' });
    }
    return i === 0 ? take : take.slice(i);
  }

  /**
   * A shed group of batches refused here, each nacked with the seq read from its first bytes
   * (peekBatchSeq), with no task: a shed batch decoded on a worker cost a quarter of a stored one,
   * on the worker that was behind. False, and nothing answered, unless every frame of the group
   * reads plainly as a batch (then it goes to the worker, which refuses it, as before): the
   * producer hears about its frames in the order it sent them either way.
   */
  private refuseShed(session: Session, take: readonly QueuedFrame[]): boolean {
    const seqs: number[] = [];
    for (const f of take) {
      const seq = this.seqOf(f);
      if (seq === undefined) return false;
      seqs.push(seq);
    }
    for (let i = 0; i < take.length; i++) {
      this.o.pool.arena.release(take[i]!.slice);
      this.o.stats.bump(this.o.stats.answeredAtEdge, 'overloaded');
      this.itemResult(take[i]!.conn, session, { kind: 'nack', seq: seqs[i]!, code: 'overloaded' });
    }
    return true;
  }

  /** a queued frame's batch seq, as read on arrival or now from the arena; undefined: not plainly a batch */
  private seqOf(f: QueuedFrame): number | undefined {
    if (f.seq !== undefined) return f.seq ?? undefined;
    return peekBatchSeq(this.o.pool.arena.bytes.subarray(f.slice.off, f.slice.off + f.slice.len));
  }

  /** nothing of this session queued or in flight: whatever it sent before has been answered */
  private idle(session: Session): boolean {
    return !session.inflight && (this.queues.get(session)?.length ?? 0) === 0;
  }

  /** The group as one task; false when none of it needed one (no slot: each frame answered overloaded). */
  private submit(session: Session, take: readonly QueuedFrame[], shed: boolean, idle: boolean): boolean {
    const pool = this.o.pool;
    const group: Pending[] = [];
    let remaining = 0;
    const touched = new Set<Conn>();
    const finishOne = (): void => {
      if (--remaining > 0) return;
      session.inflight = false;
      for (const c of touched) this.flushAck(c);
      this.pump(session);
    };
    for (const f of take) {
      const slot = pool.slotAlloc.alloc();
      if (slot === undefined) {
        // no slot: answer as overloaded without a task; the producer resends
        pool.arena.release(f.slice);
        if (!shed) pool.noteShed();
        this.o.stats.bump(this.o.stats.nacks, 'overloaded');
        this.send(f.conn, { t: 'error', code: 'overloaded', message: 'ingest slots exhausted; resend unacknowledged batches after a delay', retry_after_ms: this.o.config.pool.retry_after_ms });
        continue;
      }
      remaining++;
      touched.add(f.conn);
      const item: WsItem = { src: 'ws', off: f.slice.off, len: f.slice.len, slot, shed, session: session.id, applied: session.applied, edgeAt: f.edgeAt };
      // A lone small frame from a producer that was idle: any worker may take it between two items.
      const express = idle && !shed && take.length === 1 && f.slice.len <= this.o.config.pool.sparse_group_bytes ? pool.express?.post(item, f.recvTime) : undefined;
      if (express !== undefined) item.express = express;
      group.push({
        item,
        recvTime: f.recvTime,
        done: (r) => {
          if (express !== undefined) pool.express!.release(express);
          pool.arena.release(f.slice);
          pool.slotAlloc.release(slot);
          this.itemResult(f.conn, session, r);
          finishOne();
        },
      });
    }
    if (group.length === 0) return false;
    session.inflight = true;
    session.lastActive = Date.now();
    pool.dispatcher.submitGroup(group, idle);
    return true;
  }

  /** The one place a WebSocket item's outcome becomes what the producer is told (wsAnswer). */
  private itemResult(conn: Conn, session: Session, r: ItemOutcome): void {
    const stats = this.o.stats;
    if (r.kind === 'rejected') {
      stats.bump(stats.frameErrors, r.code);
      if (r.code === 'poison') stats.poisoned++;
    }
    const a = wsAnswer(r, { retryAfterMs: this.o.config.pool.retry_after_ms, resumeFrom: session.applied + 1 });
    switch (a.t) {
      case 'ack':
        if (a.seq > session.applied) session.applied = a.seq;
        if (!conn.verified) {
          this.unverified.records += a.accepted;
          this.unverified.batches++;
        }
        this.mergeAck(conn, a.seq, a.accepted, a.rejected, a.errors);
        return;
      case 'nack':
        stats.bump(stats.nacks, a.code);
        this.send(conn, a);
        return;
      case 'error': {
        const { close, ...frame } = a;
        this.send(conn, frame);
        if (close) this.closeWith(conn, a.code, a.message);
        return;
      }
      case 'pong':
        if (conn.ws && conn.state !== 'closed' && conn.ws.getBufferedAmount() > this.o.config.limits.ws_max_backpressure) {
          stats.pongsDropped++;
          return;
        }
        this.send(conn, a);
        return;
      case 'result':
        // no command went to it, and it must not answer one sent to another (issue 19)
        if (!conn.verified) {
          this.unverified.results_dropped++;
          return;
        }
        this.o.onResult?.(conn, a.result);
        return;
      case 'panel_token':
        // the ask was in the worker when the socket closed: revokeConnection already ran, and a
        // token issued now would be a grant nothing revokes
        if (conn.state === 'closed') return;
        this.send(conn, this.panelToken(conn, a.id));
        return;
      case 'none':
        if (a.bug) log.error(a.bug);
        return;
    }
  }

  private mergeAck(conn: Conn, seq: number, accepted: number, rejected: number, errors: RecordError[] | undefined): void {
    const cap = this.o.config.limits.max_errors_per_ack;
    const a = conn.pendingAck;
    if (!a) {
      conn.pendingAck = { seq, accepted, rejected, errors: errors ? errors.slice(0, cap) : [] };
      return;
    }
    if (seq > a.seq) a.seq = seq;
    a.accepted += accepted;
    a.rejected += rejected;
    if (errors) for (const e of errors) if (a.errors.length < cap) a.errors.push(e);
  }

  private flushAck(conn: Conn): void {
    const a = conn.pendingAck;
    if (!a || conn.state === 'closed' || !conn.ws) return;
    // Acks are cumulative: while the client is not reading, keep only the latest.
    if (conn.ws.getBufferedAmount() > this.o.config.limits.ws_max_backpressure) return;
    conn.pendingAck = null;
    const frame: Record<string, unknown> = { t: 'ack', seq: a.seq, accepted: a.accepted, rejected: a.rejected };
    if (a.errors.length) frame.errors = a.errors;
    this.o.stats.acksSent++;
    this.send(conn, frame);
  }

  private send(conn: Conn, frame: object): void {
    const ws = conn.ws;
    if (!ws || conn.state === 'closed') return;
    const bytes = pack(frame);
    if (conn.deferred.length > 0 || ws.getBufferedAmount() > this.o.config.limits.ws_max_backpressure) {
      if (conn.deferred.length >= MAX_DEFERRED) {
        this.closeWith(conn, 'overloaded', 'client is not reading its socket');
        return;
      }
      conn.deferred.push(bytes);
      return;
    }
    ws.cork(() => ws.send(bytes, true));
  }

  private drain(conn: Conn): void {
    const ws = conn.ws;
    if (!ws || conn.state === 'closed') return;
    const limit = this.o.config.limits.ws_max_backpressure;
    ws.cork(() => {
      while (conn.deferred.length && ws.getBufferedAmount() <= limit) ws.send(conn.deferred.shift()!, true);
    });
    if (conn.deferred.length === 0) this.flushAck(conn);
  }

  /**
   * The producer's answer to the welcome's challenge: its first frame after hello, decoded here on
   * main (it is tiny and must be settled before the frames behind it are marked). True when it was
   * an `auth` frame (taken, or the connection closed); false: any other frame, which leaves the
   * producer unverified (or closes it under "refuse").
   */
  private proofFrame(conn: Conn, msg: ArrayBuffer): boolean {
    const challenge = conn.challenge!;
    conn.challenge = null;
    const f = msg.byteLength <= MAX_PAIRING_FRAME ? smallFrame(msg) : null;
    const pairing = this.o.pairing!;
    if (f?.t !== 'auth') {
      if (pairing.policy === 'refuse') {
        this.unverified.refused++;
        this.closeWith(conn, 'producer_unpaired', 'the first frame after welcome must be auth with the pairing proof (pairing.unpaired "refuse")');
        return true;
      }
      return false;
    }
    if (!pairing.check(f.proof, challenge)) {
      this.closeWith(conn, 'pairing_proof_invalid', 'wrong pairing proof: this producer is not paired with this server, or the pairing was reset; pair it again (gasoline pair)');
      return true;
    }
    conn.verified = true;
    if (conn.producer) conn.producer.verified = true;
    return true;
  }

  /** The first half of a one-time pairing exchange (hello with auth.pair): this connection never becomes a producer. */
  private beginPair(conn: Conn, auth: HelloAuth): void {
    const pairing = this.o.pairing;
    const r = pairing ? pairing.begin(auth.pair!.mode, auth.pair!.pub, auth.nonce) : { ok: false as const, code: 'pairing_closed' as const, message: 'this server has no pairing' };
    clearTimeout(conn.helloTimer);
    if (!r.ok) {
      this.send(conn, { t: 'error', code: r.code, message: r.message });
      this.closeWith(conn, r.code, r.message);
      return;
    }
    conn.state = 'pairing';
    conn.exchange = r.x;
    this.send(conn, { t: 'pair', step: 'challenge', v: 1, pub: r.x.serverPub, nonce: r.x.serverNonce });
  }

  /** The second half: the producer's confirmation tag, checked off the main thread (PBKDF2). */
  private pairFrame(conn: Conn, msg: ArrayBuffer): void {
    const x = conn.exchange;
    const f = msg.byteLength <= MAX_PAIRING_FRAME ? smallFrame(msg) : null;
    if (!x || x === 'busy' || f?.t !== 'pair' || f.step !== 'confirm') {
      this.send(conn, { t: 'error', code: 'pairing_invalid', message: 'expected one pair frame {step: "confirm", proof}' });
      this.closeWith(conn, 'pairing_invalid');
      return;
    }
    conn.exchange = 'busy';
    void this.o.pairing!.finish(x, f.proof).then(
      (r) => {
        if (conn.state === 'closed') return;
        if (!r.ok) {
          this.send(conn, { t: 'error', code: r.code, message: r.message });
          this.closeWith(conn, r.code, r.message);
          return;
        }
        this.send(conn, { t: 'paired', v: 1, proof: r.proof, iv: r.iv, sealed: r.sealed });
        this.markClosed(conn);
        try {
          conn.ws?.end(1000, 'paired');
        } catch {
          // the peer went first
        }
      },
      (e: unknown) => this.closeWith(conn, 'internal', String(e)),
    );
  }

  /**
   * The side panel's ask for a /mcp token (PROTOCOL.md "Panel tokens"). Only a producer that proved
   * the pairing secret on this connection gets one: an Origin header or a hello proves nothing to a
   * local process, and the token opens every tool. The token goes out once, in this frame.
   */
  private panelToken(conn: Conn, id: string): Record<string, unknown> {
    const tokens = this.o.panelTokens;
    if (!conn.verified || !tokens) return { t: 'panel_token', id, ok: false, error: 'panel_unverified', message: 'only a producer that proved the pairing secret on this connection gets a panel token: pair the extension (gasoline pair)' };
    const { token, expiresAt } = tokens.issue(conn.id);
    return { t: 'panel_token', id, ok: true, token, expires_at: expiresAt, path: MCP_PATH };
  }

  /** `gasoline pair --reset`: whoever proved the old secret proves nothing now; they reconnect and must pair again. */
  dropVerified(): void {
    for (const c of [...this.conns]) if (c.verified) this.closeWith(c, 'pairing_proof_invalid', 'the pairing secret was reset (gasoline pair --reset): pair again');
  }

  /** What /health shows of pairing on this edge. */
  pairingHealth(): Record<string, unknown> {
    let verified = 0;
    let unverified = 0;
    for (const c of this.conns) if (c.state === 'ready') c.verified ? verified++ : unverified++;
    const p = this.o.pairing;
    return {
      unpaired_policy: p?.policy ?? 'mark',
      tofu_offered: p?.tofuOffered ?? false,
      window: p?.windowState() ?? { open: false },
      verified_open: verified,
      unverified_open: unverified,
      unverified_records: this.unverified.records,
      unverified_batches: this.unverified.batches,
      unverified_results_dropped: this.unverified.results_dropped,
      refused: this.unverified.refused,
      ...(p ? p.stats : {}),
    };
  }

  closeWith(conn: Conn, code: ErrorCode, reason?: string): void {
    if (conn.state === 'closed') return;
    const ws = conn.ws;
    this.o.stats.bump(this.o.stats.closes, code);
    const wsCode = ERRORS[code].wsClose || 1008;
    // A close reason is at most 123 bytes.
    const text = Buffer.from(`${code}: ${reason ?? ERRORS[code].summary}`).subarray(0, 123);
    this.markClosed(conn);
    if (ws) {
      try {
        ws.end(wsCode, text);
      } catch {
        // already closed by the peer
      }
    }
  }

  private closed(conn: Conn, _code: number, message: ArrayBuffer): void {
    // uWS's own refusal of an announced length over maxPayloadLength comes with no close code;
    // its reason text is the only sign, and it is only readable inside this callback.
    if (conn.state !== 'closed' && Buffer.from(message).toString() === UWS_TOO_BIG) this.o.stats.bump(this.o.stats.closes, 'frame_too_large');
    this.markClosed(conn);
  }

  private markClosed(conn: Conn): void {
    if (conn.state === 'closed' && !this.conns.has(conn)) return;
    const wasReady = conn.state === 'ready';
    conn.state = 'closed';
    clearTimeout(conn.helloTimer);
    this.discardWaiting(conn);
    conn.deferred.length = 0;
    if (this.conns.delete(conn)) this.o.stats.connectionsOpen--;
    if (conn.session) this.sessions.detach(conn.session);
    // a panel's session dies with the socket that vouched for it
    this.o.panelTokens?.revokeConnection(conn.id);
    if (wasReady && conn.producer) this.o.onProducerChange?.('disconnected', conn.producer);
  }
}

/** What a producer is told about one WebSocket item. */
export type WsAnswer =
  /** folded into the connection's cumulative ack */
  | { t: 'ack'; seq: number; accepted: number; rejected: number; errors?: RecordError[] }
  | { t: 'nack'; seq: number; code: ErrorCode; retry_after_ms: number; resume_from_seq: number }
  /** `close`: the catalog says this error ends the connection */
  | { t: 'error'; code: ErrorCode; message: string; seq?: number; close: boolean }
  | { t: 'pong'; ts: number }
  | { t: 'result'; result: Extract<ItemOutcome, { kind: 'result' }> }
  /** answered on main: only a verified producer gets a token */
  | { t: 'panel_token'; id: string }
  /** nothing to send; `bug` when the outcome cannot come from a WebSocket item */
  | { t: 'none'; bug?: string };

/** The WebSocket mapping of an outcome, once, through the error catalog. */
export function wsAnswer(o: ItemOutcome, at: { retryAfterMs: number; resumeFrom: number }): WsAnswer {
  switch (o.kind) {
    case 'applied':
      return { t: 'ack', seq: o.seq, accepted: o.accepted, rejected: o.rejected, ...(o.errors ? { errors: o.errors } : {}) };
    case 'duplicate':
      return { t: 'ack', seq: o.seq, accepted: 0, rejected: 0 };
    case 'nack':
      return { t: 'nack', seq: o.seq, code: o.code, retry_after_ms: at.retryAfterMs, resume_from_seq: at.resumeFrom };
    case 'rejected':
      // Acknowledge a poisoned batch so the producer stops resending what kills workers.
      if (o.code === 'poison' && o.seq !== undefined && o.seq >= 0) return { t: 'ack', seq: o.seq, accepted: 0, rejected: 0, errors: [{ index: -1, kind: 'batch', code: 'poison', message: o.message }] };
      return { t: 'error', code: o.code, message: o.message, ...(o.seq !== undefined ? { seq: o.seq } : {}), close: ERRORS[o.code].wsClose !== 0 };
    case 'ping':
      return { t: 'pong', ts: o.ts };
    case 'pong':
      return { t: 'none' };
    case 'result':
      return { t: 'result', result: o };
    case 'panel_token':
      return { t: 'panel_token', id: o.id };
    case 'hello':
      // The core turns a second hello into duplicate_hello; reaching here is a bug.
      return { t: 'error', code: 'duplicate_hello', message: 'hello was already received on this connection', close: false };
    case 'stored':
    case 'refused':
      return { t: 'none', bug: `http outcome ${o.kind} on a websocket item` };
  }
}

/** A pairing frame (≤ MAX_PAIRING_FRAME bytes) decoded on main; null when it is not a msgpack map. */
function smallFrame(msg: ArrayBuffer): Record<string, unknown> | null {
  try {
    const f = unpack(new Uint8Array(msg)) as unknown;
    return f && typeof f === 'object' && !Array.isArray(f) ? (f as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The worker's out-of-order rule (core.ts), for a session with no group in flight: once a session
 * has a baseline, a batch must carry applied + 1; one past it is refused before anything in it is read.
 */
function skipsAhead(session: Session, seq: number): boolean {
  return session.applied >= 0 && seq > session.applied + 1;
}
