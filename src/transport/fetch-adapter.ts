/**
 * The one place uWebSockets.js meets web-standard Request/Response: a handler written against
 * `fetch` types (the MCP SDK's streamable HTTP transport) serves a uWS route through here.
 *
 * uWS hands out a request object that dies when its callback returns and body chunks whose
 * memory it reuses, so headers are copied at once and every chunk is copied as it arrives. The
 * body is bounded as it arrives (a declared or counted size over the limit is refused with 413 at
 * once, never buffered past it) and handed over whole: the handler runs when its last byte came.
 * Streamed answers (text/event-stream) are read from the Response as soon as the
 * handler produces them and written with uWS backpressure honoured; the bytes read but not yet
 * taken by the socket are counted (`Exchange.backlog`) so the handler can stop producing for a
 * client that stopped reading. After the client aborts, nothing touches `res` again and the
 * answer's reader is cancelled, so the producer sees its stream closed; a request aborted before
 * its body ended never reaches the handler.
 */
import { ERRORS } from '../errors.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** What a handler may know about the exchange it answers, while its answer streams. */
export interface Exchange {
  /** bytes of the answer read from the Response that the socket has not yet taken */
  readonly backlog: number;
  /** false once the answer ended or the client went away */
  readonly open: boolean;
  /** runs once, when the answer ended or the client went away */
  onEnd(fn: () => void): void;
  /** the request's body, whole (null for a method without one); with `bodyOnExchange`, the only copy */
  readonly body: Uint8Array | null;
}

export type FetchHandler = (req: Request, exchange: Exchange) => Promise<Response>;

export interface ServeFetchOptions {
  handler: FetchHandler;
  /** request body bound in bytes: above it, 413 */
  maxBody: number;
  /** counts each status written (the edge's stats) */
  onStatus?: (status: number) => void;
  /**
   * The body is read from `exchange.body` and the Request is built without one. A body handed to
   * undici's Request becomes a web stream, which the handler then reads back chunk by chunk: for
   * an MCP call over a bridge that was ~0.25 ms of main's time (a profile of idle observe calls,
   * issue 17), for bytes already whole here.
   */
  bodyOnExchange?: boolean;
}

const STREAMING = /^text\/event-stream\b/i;
/** hop-by-hop or framing headers uWS writes itself */
const SKIP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

class UwsExchange implements Exchange {
  aborted = false;
  /** status line sent: the response is ours to finish, nobody else's */
  started = false;
  finished = false;
  queued = 0;
  /** bytes of the last write uWS had to buffer, until it says the socket drained */
  held = 0;
  private readonly ends: Array<() => void> = [];
  reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  /** the request body was read to its end (else the connection closes with the answer: its rest must not parse as a request) */
  bodyComplete = true;
  /** a streamed answer to one request (POST): its headers, events and end may leave together */
  coalesce = false;
  body: Uint8Array | null = null;

  constructor(readonly res: HttpResponse) {}

  get backlog(): number {
    return this.queued + this.held;
  }

  get open(): boolean {
    return !this.aborted && !this.finished;
  }

  onEnd(fn: () => void): void {
    if (!this.open) fn();
    else this.ends.push(fn);
  }

  end(): void {
    for (const fn of this.ends.splice(0)) {
      try {
        fn();
      } catch {
        // one listener's failure must not keep the others from knowing
      }
    }
  }
}

/**
 * Serves one uWS request through `handler`. Call it synchronously from the uWS route callback:
 * the request is read here and nowhere later.
 */
export function serveFetch(res: HttpResponse, req: HttpRequest, o: ServeFetchOptions): void {
  const ex = new UwsExchange(res);
  res.onAborted(() => {
    ex.aborted = true;
    void ex.reader?.cancel().catch(() => undefined);
    ex.end();
  });
  const method = req.getMethod().toUpperCase();
  ex.coalesce = method === 'POST';
  const headers = new Headers();
  req.forEach((k, v) => {
    headers.append(k, v);
  });
  const query = req.getQuery();
  const url = `http://${headers.get('host') ?? '127.0.0.1'}${req.getUrl()}${query ? `?${query}` : ''}`;

  const handle = (body: Uint8Array | null): void => {
    ex.body = body;
    const request = new Request(url, { method, headers, body: o.bodyOnExchange ? null : body });
    o.handler(request, ex).then(
      (response) => respond(ex, o, response),
      (e: unknown) => {
        // a handler that throws answers 500 without saying why: the reason may hold request data
        void e;
        respond(ex, o, new Response(JSON.stringify({ error: 'internal', message: ERRORS.internal.summary }), { status: 500, headers: { 'content-type': 'application/json' } }));
      },
    );
  };
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return handle(null);
  const declared = headers.get('content-length');
  ex.bodyComplete = false;
  if (declared !== null && Number(declared) > o.maxBody) return tooLarge(ex, o, Number(declared));
  // The whole body (bounded by maxBody) before the handler runs: every handler here reads it whole
  // (the SDK's transport parses it as one JSON text), and a body handed over as a stream cost two
  // web streams per request on main (~40 µs hot, more on a cold call: issue 17's observe path).
  const parts: Buffer[] = [];
  let received = 0;
  res.onData((chunk, isLast) => {
    if (ex.aborted || ex.started) return;
    received += chunk.byteLength;
    if (received > o.maxBody) return tooLarge(ex, o, received);
    // uWS reuses the chunk's memory after this callback: copy it
    parts.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      ex.bodyComplete = true;
      handle(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    }
  });
}

function tooLarge(ex: UwsExchange, o: ServeFetchOptions, bytes: number): void {
  if (ex.started || ex.aborted) return;
  const message = `request body of ${bytes}+ bytes is over the ${o.maxBody}-byte limit`;
  writeWhole(ex, o, 413, 'Payload Too Large', new Headers({ 'content-type': 'application/json' }), new TextEncoder().encode(JSON.stringify({ error: 'body_too_large', message })));
}

function respond(ex: UwsExchange, o: ServeFetchOptions, response: Response): void {
  if (ex.aborted || ex.started) {
    // the client is gone, or a refusal (413) already answered: release what the handler made
    void response.body?.cancel().catch(() => undefined);
    return;
  }
  const body = response.body;
  if (body && STREAMING.test(response.headers.get('content-type') ?? '')) return void stream(ex, o, response, body);
  if (!body) return writeWhole(ex, o, response.status, response.statusText, response.headers, undefined);
  response.arrayBuffer().then(
    (buf) => {
      if (ex.aborted || ex.started) return;
      writeWhole(ex, o, response.status, response.statusText, response.headers, new Uint8Array(buf));
    },
    () => writeWhole(ex, o, 500, 'Internal Server Error', new Headers(), undefined),
  );
}

function head(ex: UwsExchange, o: ServeFetchOptions, status: number, statusText: string, headers: Headers): void {
  ex.started = true;
  o.onStatus?.(status);
  ex.res.writeStatus(`${status} ${statusText || defaultText(status)}`.trimEnd());
  headers.forEach((v, k) => {
    if (!SKIP_HEADERS.has(k)) ex.res.writeHeader(k, v);
  });
  ex.res.writeHeader('x-content-type-options', 'nosniff');
}

function writeWhole(ex: UwsExchange, o: ServeFetchOptions, status: number, statusText: string, headers: Headers, bytes: Uint8Array | undefined): void {
  if (ex.aborted || ex.started) return;
  ex.res.cork(() => {
    head(ex, o, status, statusText, headers);
    ex.res.end(bytes ?? '', !ex.bodyComplete);
  });
  ex.finished = true;
  ex.end();
}

/**
 * Reads the body as fast as it is produced (so every byte not yet on the socket is in our count,
 * not hidden in the stream's queue) and writes it while the socket takes it; when uWS has to
 * buffer a write, the rest waits until it says the socket drained.
 */
async function stream(ex: UwsExchange, o: ServeFetchOptions, response: Response, body: ReadableStream<Uint8Array>): Promise<void> {
  const res = ex.res;
  const queue: Uint8Array[] = [];
  let ended = false;
  const finish = (): void => {
    if (ex.finished || ex.aborted) return;
    res.end('', !ex.bodyComplete);
    ex.finished = true;
    ex.end();
  };
  /** writes what the socket takes; false when uWS had to buffer (wait for onWritable) */
  const drain = (): boolean => {
    while (queue.length && ex.held === 0 && !ex.aborted) {
      const c = queue.shift()!;
      ex.queued -= c.byteLength;
      if (!res.write(c)) {
        ex.held = c.byteLength;
        return false;
      }
    }
    if (ended && !queue.length && ex.held === 0) finish();
    return true;
  };
  ex.reader = body.getReader();
  ex.started = true;
  let wrote = false;
  let headed = false;
  // uWS sends what a cork wrote when the cork ends: the status line and headers too, even with no
  // body byte yet. So they are written in the same cork as what first follows them.
  const headOnce = (): void => {
    if (headed) return;
    headed = true;
    head(ex, o, response.status, response.statusText, response.headers);
    res.onWritable(() => {
      ex.held = 0;
      return drain();
    });
  };
  const prefaceNow = (): void => {
    if (wrote || ex.aborted || ex.finished) return;
    wrote = true;
    headOnce();
    res.write(': open\n\n');
  };
  // An SSE comment (ignored by every client) tells the client its stream is open before the first
  // event. A long-lived stream (GET: pushes) gets it at once. A POST's answer usually comes within
  // a millisecond or two: its headers, its event and the stream's end then leave as one write (one
  // wake-up of the bridge, not three); only a POST still silent after PREFACE_MS gets the comment.
  if (!ex.coalesce) res.cork(prefaceNow);
  const preface = ex.coalesce ? setTimeout(() => res.cork(prefaceNow), PREFACE_MS) : undefined;
  const flush = (): void => {
    if (ex.aborted || ex.held !== 0) return;
    wrote = true;
    res.cork(() => {
      headOnce();
      drain();
    });
  };
  let next: ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> | undefined;
  try {
    for (;;) {
      const { done, value } = await (next ?? ex.reader.read());
      next = undefined;
      if (ex.aborted || ex.finished) return;
      if (done) break;
      if (!value.byteLength) continue;
      queue.push(value);
      ex.queued += value.byteLength;
      if (ex.coalesce) {
        // the SDK enqueues an answer and closes its stream in one call: the close reaches this
        // reader a few microtasks behind, and then leaves in the same cork as the answer
        next = ex.reader.read();
        if (await Promise.race([next.then(() => true, () => true), microtasks(4)])) continue;
      }
      flush();
    }
  } catch {
    // the producer errored its stream: end the answer where it is
  } finally {
    clearTimeout(preface);
  }
  ended = true;
  flush();
}

/** resolves false after `n` turns of the microtask queue (no timer, no event-loop turn) */
async function microtasks(n: number): Promise<false> {
  for (let i = 0; i < n; i++) await undefined;
  return false;
}

/** how long a stream may stay silent before its headers go out with an SSE comment */
const PREFACE_MS = 50;

function defaultText(status: number): string {
  return { 200: 'OK', 202: 'Accepted', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable', 409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 500: 'Internal Server Error', 503: 'Service Unavailable' }[status] ?? '';
}
