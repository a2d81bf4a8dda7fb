/**
 * HTTP/1.1 to the one daemon a bridge talks to, over sockets it keeps: the request written as one
 * string, the answer parsed here (status, headers, a body framed by Content-Length or chunked, or
 * read to the close), its text handed over as it arrives.
 *
 * Why not node:http: a bridge runs interpreted (bin/gasoline: no optimizing compiler, for its
 * memory), and node:http's client is a lot of JavaScript per request (ClientRequest, the agent,
 * header checks, streams). A request one second after the last one cost a bridge 1.7–1.9 ms of CPU
 * through node:http and 0.5–0.6 ms this way; a whole spaced call through the bridge 17–45 % less
 * (PERFORMANCE.md "A bridge's HTTP to its daemon on kept sockets"). Every agent call pays it.
 *
 * Only what a bridge needs from its daemon: no redirects, no 1xx, no pipelining (one request per
 * socket at a time; concurrent requests open more sockets, up to `maxSockets` kept idle). A socket
 * idle longer than `keepIdleMs` is not reused: uWS closes idle keep-alive sockets after 10 s, and
 * one closed just as a request is written would fail that request.
 */
import { connect, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { HttpRequest } from './http.js';

/**
 * node:http's request less its port and agent (the LocalHttp's own). Header names lower-case, never
 * host, content-length or connection (set here); `timeoutMs` runs until the answer's head.
 */
export type LocalRequest = Omit<HttpRequest, 'port' | 'agent'>;

export interface BodyReader {
  data(text: string): void;
  end(): void;
  fail(e: Error): void;
}

/** the most a status line and headers may take */
const MAX_HEAD = 64 * 1024;
/** a chunk-size line longer than this is not HTTP */
const MAX_CHUNK_LINE = 1024;

export class LocalAnswer {
  private reader: BodyReader | undefined;
  private early: string[] = [];
  private state: 'open' | 'ended' | 'failed' = 'open';
  private error: Error | undefined;

  constructor(
    readonly status: number,
    /** lower-case names; a repeated header's values joined with ', ' */
    readonly headers: Readonly<Record<string, string>>,
    private readonly cut: (e: Error) => void,
  ) {}

  /** The body's text as it arrives; what arrived before the call is given first. */
  read(r: BodyReader): void {
    if (this.reader) throw new Error('the body is read once');
    this.reader = r;
    for (const t of this.early) r.data(t);
    this.early = [];
    if (this.state === 'ended') r.end();
    else if (this.state === 'failed') r.fail(this.error!);
  }

  /** The whole body, up to `maxBytes` of text (then it is cut off and the promise rejects). */
  text(maxBytes: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const parts: string[] = [];
      let n = 0;
      const over = new Error(`answer over ${maxBytes} bytes`);
      this.read({
        data: (t) => {
          n += t.length;
          // a body that arrived whole before it was read cannot be cut off any more: the end says no
          if (n > maxBytes) this.destroy(over);
          else parts.push(t);
        },
        end: () => (n > maxBytes ? reject(over) : resolve(parts.join(''))),
        fail: reject,
      });
    });
  }

  /** The rest is read and dropped: the socket is kept when the body ends. */
  discard(): void {
    if (!this.reader) this.read({ data: () => undefined, end: () => undefined, fail: () => undefined });
  }

  /** Cuts it off: the socket is closed, the reader told. Idempotent. */
  destroy(e = new Error('the answer was abandoned')): void {
    if (this.state !== 'open') return;
    this.cut(e);
  }

  /** @internal the connection's side */
  push(text: string): void {
    if (this.state !== 'open' || text === '') return;
    if (this.reader) this.reader.data(text);
    else this.early.push(text);
  }

  /** @internal */
  finish(e?: Error): void {
    if (this.state !== 'open') return;
    this.state = e ? 'failed' : 'ended';
    this.error = e;
    if (!this.reader) {
      // a failure nobody reads is not an unhandled one: the caller chose not to read
      if (e) this.early = [];
      return;
    }
    if (e) this.reader.fail(e);
    else this.reader.end();
  }
}

type Framing = { kind: 'length'; left: number } | { kind: 'chunked'; left: number; step: 'size' | 'data' | 'crlf' | 'trailer' } | { kind: 'close' } | { kind: 'none' };

/** One socket and the one exchange on it at a time. */
class Conn {
  readonly socket: Socket;
  idleSince = 0;
  closed = false;
  private head: Buffer = Buffer.alloc(0);
  private answer: LocalAnswer | undefined;
  private framing: Framing = { kind: 'none' };
  private decoder = new StringDecoder('utf8');
  private line = '';
  private keep = true;
  private waiting: { resolve: (a: LocalAnswer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout | undefined } | undefined;

  constructor(
    port: number,
    private readonly done: (c: Conn, reusable: boolean) => void,
  ) {
    this.socket = connect({ host: '127.0.0.1', port, noDelay: true });
    this.socket.on('data', (b: Buffer) => this.onData(b));
    this.socket.on('error', (e) => this.close(e));
    this.socket.on('close', () => this.close(new Error('the daemon closed the connection'), true));
  }

  send(text: string, r: LocalRequest): Promise<LocalAnswer> {
    return new Promise((resolve, reject) => {
      const w: NonNullable<Conn['waiting']> = { resolve, reject, timer: undefined };
      this.waiting = w;
      this.keep = true;
      if (r.timeoutMs !== undefined) w.timer = setTimeout(() => this.close(new Error(`no answer within ${r.timeoutMs} ms`)), r.timeoutMs);
      const signal = r.signal;
      if (signal) {
        if (signal.aborted) {
          this.close(abortError(signal));
          return;
        }
        const onAbort = (): void => this.close(abortError(signal));
        this.abortWith = { signal, onAbort };
        signal.addEventListener('abort', onAbort, { once: true });
      }
      this.socket.write(text);
    });
  }

  /**
   * Closes the socket; whatever was pending on it fails with `e`, except a body framed by the
   * close, which the daemon's close (`byPeer`) ends. Idempotent.
   */
  close(e: Error, byPeer = false): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.unlisten();
    const w = this.settleWaiting();
    w?.reject(e);
    const a = this.answer;
    this.answer = undefined;
    if (a) a.finish(this.framing.kind === 'close' && byPeer ? undefined : e);
    this.done(this, false);
  }

  /** the head arrived: the time-out no longer applies (an abort does, until the body ends) */
  private settleWaiting(): Conn['waiting'] {
    const w = this.waiting;
    this.waiting = undefined;
    if (w) clearTimeout(w.timer);
    return w;
  }

  private abortWith: { signal: AbortSignal; onAbort: () => void } | undefined;

  private unlisten(): void {
    if (this.abortWith) this.abortWith.signal.removeEventListener('abort', this.abortWith.onAbort);
    this.abortWith = undefined;
  }

  private onData(b: Buffer): void {
    let at = 0;
    while (at < b.length && !this.closed) {
      if (!this.answer) {
        if (!this.waiting) {
          this.close(new Error('the daemon sent bytes nobody asked for'));
          return;
        }
        at = this.readHead(b, at);
        continue;
      }
      at = this.readBody(b, at);
    }
  }

  /** Collects the head; on its end makes the answer. Returns where the body starts (or b.length). */
  private readHead(b: Buffer, at: number): number {
    const prev = this.head.length;
    this.head = prev === 0 && at === 0 ? b : Buffer.concat([this.head, b.subarray(at)]);
    // the blank line may straddle two reads: look from a little before the new bytes
    const end = this.head.indexOf('\r\n\r\n', Math.max(0, prev - 3));
    if (end < 0) {
      if (this.head.length > MAX_HEAD) this.close(new Error(`the daemon's answer head is over ${MAX_HEAD} bytes`));
      return b.length;
    }
    const head = this.head.subarray(0, end).toString('latin1');
    const rest = this.head.subarray(end + 4);
    this.head = Buffer.alloc(0);
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
    if (!m) {
      this.close(new Error(`not an HTTP answer: ${JSON.stringify(lines[0]!.slice(0, 80))}`));
      return b.length;
    }
    const status = Number(m[1]);
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 1; i < lines.length; i++) {
      const l = lines[i]!;
      const colon = l.indexOf(':');
      if (colon <= 0) continue;
      const name = l.slice(0, colon).trim().toLowerCase();
      const value = l.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    if ((headers.connection ?? '').toLowerCase().includes('close')) this.keep = false;
    const te = (headers['transfer-encoding'] ?? '').toLowerCase();
    if (status === 204 || status === 304) this.framing = { kind: 'length', left: 0 };
    else if (te.includes('chunked')) this.framing = { kind: 'chunked', left: 0, step: 'size' };
    else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (!Number.isSafeInteger(n) || n < 0) {
        this.close(new Error(`bad content-length ${JSON.stringify(headers['content-length'])}`));
        return b.length;
      }
      this.framing = { kind: 'length', left: n };
    } else {
      this.framing = { kind: 'close' };
      this.keep = false;
    }
    this.decoder = new StringDecoder('utf8');
    this.line = '';
    const answer = new LocalAnswer(status, headers, (e) => this.close(e));
    this.answer = answer;
    this.settleWaiting()?.resolve(answer);
    if (this.framing.kind === 'length' && this.framing.left === 0) this.endBody();
    // what followed the head in this read is body: fed from a buffer of its own
    if (rest.length && this.answer) this.readBodyAll(rest);
    return b.length;
  }

  private readBodyAll(b: Buffer): void {
    let at = 0;
    while (at < b.length && this.answer && !this.closed) at = this.readBody(b, at);
    if (at < b.length && !this.closed) this.close(new Error('the daemon sent bytes after the answer'));
  }

  /** Feeds body bytes from `at`; returns how far it read. */
  private readBody(b: Buffer, at: number): number {
    const a = this.answer!;
    const f = this.framing;
    if (f.kind === 'close') {
      a.push(this.decoder.write(b.subarray(at)));
      return b.length;
    }
    if (f.kind === 'length') {
      const take = Math.min(f.left, b.length - at);
      a.push(this.decoder.write(b.subarray(at, at + take)));
      f.left -= take;
      if (f.left === 0) {
        this.endBody();
        if (at + take < b.length) this.close(new Error('the daemon sent bytes after the answer'));
        return b.length;
      }
      return at + take;
    }
    if (f.kind === 'chunked') {
      if (f.step === 'data') {
        const take = Math.min(f.left, b.length - at);
        a.push(this.decoder.write(b.subarray(at, at + take)));
        f.left -= take;
        if (f.left === 0) f.step = 'crlf';
        return at + take;
      }
      // size, crlf and trailer lines: read up to the next LF
      const nl = b.indexOf(10, at);
      const piece = b.subarray(at, nl < 0 ? b.length : nl).toString('latin1');
      this.line += piece;
      if (this.line.length > MAX_CHUNK_LINE) {
        this.close(new Error('a chunk line over its bound'));
        return b.length;
      }
      if (nl < 0) return b.length;
      const line = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
      this.line = '';
      if (f.step === 'crlf') {
        if (line !== '') this.close(new Error('a chunk not followed by CRLF'));
        else f.step = 'size';
      } else if (f.step === 'size') {
        const size = Number.parseInt(line.split(';')[0]!.trim(), 16);
        if (!Number.isSafeInteger(size) || size < 0 || !/^[0-9a-fA-F]+$/.test(line.split(';')[0]!.trim())) this.close(new Error(`bad chunk size ${JSON.stringify(line.slice(0, 40))}`));
        else if (size === 0) f.step = 'trailer';
        else {
          f.left = size;
          f.step = 'data';
        }
      } else if (line === '') {
        // the blank line after the trailers: the body is whole
        this.endBody();
        if (nl + 1 < b.length) this.close(new Error('the daemon sent bytes after the answer'));
        return b.length;
      }
      return nl + 1;
    }
    return b.length;
  }

  private endBody(): void {
    const a = this.answer!;
    a.push(this.decoder.end());
    this.answer = undefined;
    this.unlisten();
    this.framing = { kind: 'none' };
    a.finish();
    if (this.keep) {
      this.idleSince = performance.now();
      this.done(this, true);
    } else this.close(new Error('the daemon closed the connection'));
  }
}

function abortError(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error('the request was aborted');
}

export class LocalHttp {
  private readonly idle: Conn[] = [];
  private readonly all = new Set<Conn>();
  private closed = false;

  constructor(
    private readonly port: number,
    private readonly o: { maxSockets?: number; keepIdleMs?: number } = {},
  ) {}

  /** Sends a request; resolves with the answer once its head arrived (the caller reads or discards the body). */
  request(r: LocalRequest): Promise<LocalAnswer> {
    if (this.closed) return Promise.reject(new Error('the connection to the daemon is closed'));
    let text = `${r.method} ${r.path} HTTP/1.1\r\nhost: 127.0.0.1:${this.port}\r\n`;
    for (const [k, v] of Object.entries(r.headers ?? {})) {
      // names and values are ours, but a CR or LF would split the request: never sent
      if (/[\r\n]/.test(k) || /[\r\n]/.test(v)) return Promise.reject(new Error(`header ${JSON.stringify(k)} holds a line break`));
      text += `${k}: ${v}\r\n`;
    }
    if (r.body !== undefined) text += `content-length: ${Buffer.byteLength(r.body)}\r\n\r\n${r.body}`;
    else text += r.method === 'GET' ? '\r\n' : 'content-length: 0\r\n\r\n';
    return this.take().send(text, r);
  }

  /** Closes every socket; pending requests and open bodies fail. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.all]) c.close(new Error('the connection to the daemon is closed'));
    this.idle.length = 0;
  }

  /** sockets open now (tests) */
  get sockets(): number {
    return this.all.size;
  }

  private take(): Conn {
    const keepIdle = this.o.keepIdleMs ?? 4000;
    const now = performance.now();
    while (this.idle.length) {
      const c = this.idle.pop()!;
      if (!c.closed && now - c.idleSince <= keepIdle) return c;
      c.close(new Error('idle too long'));
    }
    const c = new Conn(this.port, (conn, reusable) => this.settled(conn, reusable));
    this.all.add(c);
    return c;
  }

  private settled(c: Conn, reusable: boolean): void {
    if (!reusable || this.closed) {
      this.all.delete(c);
      const i = this.idle.indexOf(c);
      if (i >= 0) this.idle.splice(i, 1);
      if (reusable) c.close(new Error('the connection to the daemon is closed'));
      return;
    }
    if (this.idle.length >= (this.o.maxSockets ?? 4)) {
      c.close(new Error('enough idle sockets'));
      return;
    }
    this.idle.push(c);
  }
}
