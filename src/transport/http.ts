/**
 * HTTP routes of PROTOCOL.md §3. Host/Origin and size are checked before a body byte is read;
 * telemetry bodies are read straight into the shared input arena (one copy) and handed to the
 * workers like WebSocket frames. No route ever answers `Access-Control-Allow-Origin: *`.
 */
import { ERRORS, type ErrorCode } from '../errors.js';
import type { Config } from '../config.js';
import { HTTP_ROUTES, type HttpRoute, type ItemOutcome } from '../pool/messages.js';
import type { IngestPool } from '../pool/ingest-pool.js';
import type { ArenaSlice } from '../pool/input-arena.js';
import type { EdgeStats } from './edge-stats.js';
import { serveFetch, type FetchHandler } from './fetch-adapter.js';
import type { Guard } from './guard.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

export interface HttpEdgeOptions {
  config: Readonly<Config>;
  pool: IngestPool;
  guard: Guard;
  stats: EdgeStats;
  health: () => Record<string, unknown>;
  /** GET /metrics: the exposition text, built by the composition root (the edge only serves it) */
  metrics?: () => Promise<string>;
  ciResult: (body: unknown) => { status: number; body: Record<string, unknown> };
  /** a web-standard handler served on one path (MCP for bridges: /mcp), every method; injected so the edge knows nothing of MCP */
  fetchRoute?: { path: string; handler: FetchHandler; maxBody: number; bodyOnExchange?: boolean };
  /** POST /pairing (`gasoline pair`): the handler checks the bearer token itself; no body is read */
  pairing?: (authorization: string, query: string) => { status: number; body: Record<string, unknown> };
}

/** Prometheus text exposition 0.0.4, what every scraper accepts */
const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  401: 'Unauthorized',
  409: 'Conflict',
  429: 'Too Many Requests',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

interface Reply {
  aborted: boolean;
  res: HttpResponse;
}

export class HttpEdge {
  private accepting = true;
  constructor(private readonly o: HttpEdgeOptions) {}

  stopAccepting(): void {
    this.accepting = false;
  }

  attach(app: TemplatedApp): void {
    for (const route of HTTP_ROUTES) {
      app.post(route, (res, req) => this.telemetry(res, req, route));
    }
    app.post('/ci-result', (res, req) => this.ci(res, req));
    app.get('/health', (res, req) => this.health(res, req));
    const pairing = this.o.pairing;
    if (pairing) app.post('/pairing', (res, req) => this.pairing(res, req, pairing));
    app.get('/metrics', (res, req) => this.metrics(res, req));
    const fr = this.o.fetchRoute;
    if (fr) app.any(fr.path, (res, req) => this.fetchRoute(res, req, fr));
    app.any('/*', (res, req) => {
      const url = req.getUrl();
      const known = (HTTP_ROUTES as readonly string[]).includes(url) || url === '/ci-result' || url === '/health' || url === '/metrics';
      this.o.stats.httpRequests++;
      const refused = this.o.guard.check(req.getHeader('host'), req.getHeader('origin'));
      if (refused) return this.fail({ res, aborted: false }, refused);
      this.fail({ res, aborted: false }, known ? 'method_not_allowed' : 'not_found');
    });
  }

  private admit(res: HttpResponse, req: HttpRequest, limit: number): { reply: Reply; length: number } | undefined {
    this.o.stats.httpRequests++;
    const reply: Reply = { res, aborted: false };
    res.onAborted(() => {
      reply.aborted = true;
    });
    const refused = this.o.guard.check(req.getHeader('host'), req.getHeader('origin'));
    if (refused) return void this.fail(reply, refused, undefined, true);
    if (!this.accepting) return void this.fail(reply, 'shutting_down', undefined, true);
    const ctype = req.getHeader('content-type');
    if (!/^application\/json\b/i.test(ctype)) return void this.fail(reply, 'bad_content_type', `content-type must be application/json, got ${JSON.stringify(ctype)}`, true);
    const clen = req.getHeader('content-length');
    const length = clen === '' ? -1 : Number(clen);
    if (clen !== '' && (!Number.isInteger(length) || length < 0)) return void this.fail(reply, 'invalid_body', 'bad content-length', true);
    if (length > limit) return void this.fail(reply, 'body_too_large', `body of ${length} bytes exceeds the ${limit}-byte limit`, true);
    return { reply, length };
  }

  private telemetry(res: HttpResponse, req: HttpRequest, route: HttpRoute): void {
    const limit = this.o.config.limits.max_http_body;
    const a = this.admit(res, req, limit);
    if (!a) return;
    const { reply, length } = a;
    const pool = this.o.pool;
    if (pool.overloaded()) {
      pool.noteShed();
      return this.fail(reply, 'overloaded', undefined, true);
    }
    if (length >= 0) {
      // Known length: read the body straight into the arena — the one copy.
      const slice = pool.arena.reserve(length);
      if (!slice) return this.fail(reply, 'input_full', undefined, true);
      let pos = 0;
      let settled = false;
      const drop = (): void => {
        if (!settled) pool.arena.release(slice);
        settled = true;
      };
      res.onAborted(() => {
        reply.aborted = true;
        drop();
      });
      res.onData((chunk, isLast) => {
        if (settled) return;
        if (pos + chunk.byteLength > length) {
          drop();
          return this.fail(reply, 'invalid_body', 'body longer than its content-length', true);
        }
        pool.arena.bytes.set(new Uint8Array(chunk), slice.off + pos);
        pos += chunk.byteLength;
        if (!isLast) return;
        settled = true;
        if (pos !== length) {
          pool.arena.release(slice);
          return this.fail(reply, 'invalid_body', 'body shorter than its content-length');
        }
        this.submit(reply, route, slice);
      });
      return;
    }
    this.readBody(reply, length, limit, (body) => {
      const slice = pool.arena.copyIn(body);
      if (!slice) return this.fail(reply, 'input_full');
      this.submit(reply, route, slice);
    });
  }

  private submit(reply: Reply, route: HttpRoute, slice: ArenaSlice): void {
    const pool = this.o.pool;
    const slot = pool.slotAlloc.alloc();
    if (slot === undefined) {
      pool.arena.release(slice);
      pool.noteShed();
      return this.fail(reply, 'overloaded');
    }
    if (pool.overloaded()) {
      // Refused here, as the worker would (its answer, word for word): a task for it would only
      // queue behind the backlog that made the pool overloaded.
      pool.arena.release(slice);
      pool.slotAlloc.release(slot);
      pool.noteShed();
      this.o.stats.bump(this.o.stats.answeredAtEdge, 'overloaded');
      const a = httpAnswer({ kind: 'refused', code: 'overloaded' }, this.o.config.pool.retry_after_ms);
      return this.json(reply, a.status, a.body, { 'retry-after': retryAfterSeconds(this.o.config.pool.retry_after_ms) });
    }
    pool.dispatcher.submit({ src: 'http', route, off: slice.off, len: slice.len, slot, shed: false, edgeAt: performance.timeOrigin + performance.now() }, Date.now(), (r: ItemOutcome) => {
      pool.arena.release(slice);
      pool.slotAlloc.release(slot);
      const a = httpAnswer(r, this.o.config.pool.retry_after_ms);
      const headers: Record<string, string> = a.status === 503 ? { 'retry-after': retryAfterSeconds(this.o.config.pool.retry_after_ms) } : {};
      this.json(reply, a.status, a.body, headers);
    });
  }

  private ci(res: HttpResponse, req: HttpRequest): void {
    const limit = this.o.config.limits.max_ci_body;
    const a = this.admit(res, req, limit);
    if (!a) return;
    this.readBody(a.reply, a.length, limit, (body) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
      } catch (e) {
        return this.fail(a.reply, 'bad_json', (e as Error).message);
      }
      const out = this.o.ciResult(parsed);
      this.json(a.reply, out.status, out.body);
    });
  }

  private pairing(res: HttpResponse, req: HttpRequest, handle: NonNullable<HttpEdgeOptions['pairing']>): void {
    this.o.stats.httpRequests++;
    const reply: Reply = { res, aborted: false };
    const refused = this.o.guard.check(req.getHeader('host'), req.getHeader('origin'));
    if (refused) return this.fail(reply, refused, undefined, true);
    const out = handle(req.getHeader('authorization'), req.getQuery() ?? '');
    this.json(reply, out.status, out.body);
  }

  private health(res: HttpResponse, req: HttpRequest): void {
    this.o.stats.httpRequests++;
    const reply: Reply = { res, aborted: false };
    const refused = this.o.guard.check(req.getHeader('host'), req.getHeader('origin'));
    if (refused) return this.fail(reply, refused);
    this.json(reply, 200, this.o.health());
  }

  /** Host/Origin first, as on every route; then the handler owns the request (its own auth included). */
  private fetchRoute(res: HttpResponse, req: HttpRequest, fr: NonNullable<HttpEdgeOptions['fetchRoute']>): void {
    this.o.stats.httpRequests++;
    const reply: Reply = { res, aborted: false };
    const refused = this.o.guard.check(req.getHeader('host'), req.getHeader('origin'));
    if (refused) return this.fail(reply, refused, undefined, true);
    if (!this.accepting) return this.fail(reply, 'shutting_down', undefined, true);
    serveFetch(res, req, { handler: fr.handler, maxBody: fr.maxBody, bodyOnExchange: fr.bodyOnExchange === true, onStatus: (s) => this.o.stats.bump(this.o.stats.httpStatus, s) });
  }

  /**
   * Same guard as /health: the figures are ours alone (no foreign page may read them, no rebinding
   * host). The text is built asynchronously, so an abort in between is honoured.
   */
  private metrics(res: HttpResponse, req: HttpRequest): void {
    this.o.stats.httpRequests++;
    const reply: Reply = { res, aborted: false };
    const refused = this.o.guard.check(req.getHeader('host'), req.getHeader('origin'));
    if (refused) return this.fail(reply, refused);
    const build = this.o.metrics;
    if (!build) return this.fail(reply, 'not_found');
    res.onAborted(() => {
      reply.aborted = true;
    });
    build().then(
      (text) => {
        if (reply.aborted) return;
        this.o.stats.bump(this.o.stats.httpStatus, 200);
        res.cork(() => {
          res.writeStatus('200 OK');
          res.writeHeader('content-type', METRICS_CONTENT_TYPE);
          res.writeHeader('x-content-type-options', 'nosniff');
          res.writeHeader('cache-control', 'no-store');
          res.end(text);
        });
        reply.aborted = true;
      },
      (e: unknown) => this.fail(reply, 'internal', `metrics failed: ${(e as Error).message}`),
    );
  }

  /**
   * Reads a body with its length bounded as it arrives. With a content-length we allocate once;
   * chunked bodies grow geometrically up to the limit and are refused the moment they pass it.
   */
  private readBody(reply: Reply, length: number, limit: number, done: (body: Uint8Array) => void): void {
    let buf = new Uint8Array(length >= 0 ? length : 16 * 1024);
    let pos = 0;
    let failed = false;
    reply.res.onData((chunk, isLast) => {
      if (failed || reply.aborted) return;
      const c = new Uint8Array(chunk);
      if (pos + c.byteLength > (length >= 0 ? length : limit)) {
        failed = true;
        return this.fail(reply, length >= 0 ? 'invalid_body' : 'body_too_large', length >= 0 ? 'body longer than its content-length' : `body exceeds the ${limit}-byte limit`, true);
      }
      if (pos + c.byteLength > buf.byteLength) {
        const next = new Uint8Array(Math.min(limit, Math.max(buf.byteLength * 2, pos + c.byteLength)));
        next.set(buf.subarray(0, pos));
        buf = next;
      }
      buf.set(c, pos);
      pos += c.byteLength;
      if (isLast) done(buf.subarray(0, pos));
    });
  }

  private fail(reply: Reply, code: ErrorCode, message?: string, close = false): void {
    const status = ERRORS[code].http;
    const headers: Record<string, string> = {};
    if (status === 503) headers['retry-after'] = retryAfterSeconds(this.o.config.pool.retry_after_ms);
    this.json(reply, status, { error: code, message: message ?? ERRORS[code].summary }, headers, close);
  }

  private json(reply: Reply, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}, close = false): void {
    if (reply.aborted) return;
    this.o.stats.bump(this.o.stats.httpStatus, status);
    const text = JSON.stringify(body);
    reply.res.cork(() => {
      reply.res.writeStatus(`${status} ${STATUS_TEXT[status] ?? ''}`);
      reply.res.writeHeader('content-type', 'application/json');
      reply.res.writeHeader('x-content-type-options', 'nosniff');
      reply.res.writeHeader('cache-control', 'no-store');
      for (const [k, v] of Object.entries(headers)) reply.res.writeHeader(k, v);
      // Refusing before the body was read: close so the unread body is not parsed as a request.
      reply.res.end(text, close);
    });
    reply.aborted = true; // the response is finished; nothing may touch it again
  }
}

function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/** The HTTP mapping of a body's outcome, once, through the error catalog. */
export function httpAnswer(o: ItemOutcome, retryAfterMs: number): { status: number; body: Record<string, unknown> } {
  switch (o.kind) {
    case 'stored': {
      const received = o.accepted + o.rejected;
      const body: Record<string, unknown> = { received, accepted: o.accepted, rejected: o.rejected };
      if (o.errors) body.errors = o.errors;
      // nothing of a non-empty body was stored: the request as a whole was invalid
      return { status: received > 0 && o.accepted === 0 ? ERRORS.invalid_record.http : 200, body };
    }
    case 'refused':
      return { status: ERRORS[o.code].http, body: { error: o.code, message: ERRORS[o.code].summary, retry_after_ms: retryAfterMs } };
    case 'rejected':
      return { status: ERRORS[o.code].http, body: { error: o.code, message: o.message } };
    default:
      return { status: ERRORS.internal.http, body: { error: 'internal', message: `unexpected outcome ${o.kind} for an HTTP body` } };
  }
}
