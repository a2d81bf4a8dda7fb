/**
 * One MCP session with the daemon over streamable HTTP (the MCP specification's transport), as a
 * relay: the agent's messages are sent as they came and the daemon's come back as they are, so
 * the bridge neither parses nor rebuilds what it forwards. A request is POSTed and its answer read
 * from the response (JSON, or an SSE stream that may carry the request's progress first); pushes
 * arrive on the session's GET stream, resumed with Last-Event-ID after a blip.
 *
 * Written on kept sockets (./local-http.ts) rather than the SDK's client transport because a bridge
 * runs beside every agent for hours: the SDK client loads zod and fetch, 30 MB of a bridge's 45 MB
 * budget; and rather than node:http, whose client cost an interpreted bridge ~3× the CPU per request.
 * The daemon's side is the SDK's own transport (src/mcp/http/), so the protocol is checked there,
 * and test/integration/bridge*.test.ts drive this client against it.
 */
import { CLIENT_HEADER, MCP_PATH } from '../daemon/contract.js';
import { LocalHttp, type LocalAnswer } from './local-http.js';
import { SseParser } from './sse.js';

/** a JSON-RPC message, relayed as is */
export type Msg = Record<string, unknown>;
export type Id = string | number;

/** the daemon does not know this session (it restarted, or reaped it): open a new one */
export class SessionGone extends Error {
  constructor() {
    super('the daemon no longer knows this session');
    this.name = 'SessionGone';
  }
}

/** an HTTP answer that is neither the message nor a JSON-RPC error: a fault of the hop */
export class HopError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`the daemon answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'HopError';
  }
}

export interface SessionOptions {
  port: number;
  token: string;
  clientId: string;
  /** a message the daemon pushed on the session's stream (alerts, streaming), to relay */
  onPush: (m: Msg) => void;
  /** the push stream is gone for good (after retries): the session cannot be trusted any more */
  onStreamLost: (why: string) => void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** a message sent on the request's own stream before its answer (progress, logging) */
  onRelated?: (m: Msg) => void;
  timeoutMs?: number;
}

/** a single JSON-RPC answer is at most this (tool answers are bounded far below it by the daemon) */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const STREAM_RETRIES = 3;
const STREAM_RETRY_MS = [100, 300, 1000] as const;

export class McpSession {
  /** keep-alive sockets to one port; the GET stream holds one of them */
  private readonly http: LocalHttp;
  private stream: LocalAnswer | null = null;
  private lastEventId: string | undefined;
  private closed = false;

  /** set by the daemon's answer to initialize */
  private sid = '';
  private version = '';

  private constructor(private readonly o: SessionOptions) {
    this.http = new LocalHttp(o.port);
  }

  get id(): string {
    return this.sid;
  }

  /**
   * Opens a session: the agent's own initialize (so the daemon negotiates what the agent did and
   * knows who it serves), then `notifications/initialized`, then the push stream.
   */
  static async open(o: SessionOptions, initialize: Msg, timeoutMs: number): Promise<McpSession> {
    const s = new McpSession(o);
    try {
      const res = await s.post(initialize, { timeoutMs });
      const sid = res.headers['mcp-session-id'];
      const answer = await s.answerOf(res, initialize.id as Id, {});
      if ('error' in answer) throw new Error(`the daemon refused the session: ${JSON.stringify(answer.error).slice(0, 300)}`);
      if (typeof sid !== 'string' || sid === '') throw new Error('the daemon opened no session (no Mcp-Session-Id)');
      const version = (answer.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      s.sid = sid;
      s.version = typeof version === 'string' ? version : '';
      await s.notify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    } catch (e) {
      await s.close();
      throw e;
    }
    s.openStream(0);
    return s;
  }

  /** POSTs a request and resolves with its answer (a response or a JSON-RPC error, as the daemon sent it). */
  async request(m: Msg, o: RequestOptions = {}): Promise<Msg> {
    const res = await this.post(m, o);
    return this.answerOf(res, m.id as Id, o);
  }

  /** POSTs a notification or a response to a request of the daemon's. */
  async notify(m: Msg): Promise<void> {
    const res = await this.post(m, { timeoutMs: 5000 });
    const body = await res.text(64 * 1024).catch(() => '');
    if (res.status === 404) throw new SessionGone();
    if (res.status !== 202 && res.status !== 200) throw new HopError(res.status, errorText(body));
  }

  /** Ends the session: the push stream closes and the daemon frees the session now (DELETE). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stream?.destroy();
    this.stream = null;
    if (this.sid) {
      try {
        const res = await this.http.request({ method: 'DELETE', path: MCP_PATH, headers: this.headers(), timeoutMs: 500 });
        await res.text(64 * 1024).catch(() => '');
      } catch {
        // a daemon that is gone has freed the session already
      }
    }
    this.http.close();
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.o.token}`, [CLIENT_HEADER]: this.o.clientId, ...extra };
    if (this.sid) h['mcp-session-id'] = this.sid;
    if (this.version) h['mcp-protocol-version'] = this.version;
    return h;
  }

  private post(m: Msg, o: RequestOptions): Promise<LocalAnswer> {
    return this.http.request({
      method: 'POST',
      path: MCP_PATH,
      headers: this.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
      body: JSON.stringify(m),
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  }

  /** The answer to request `id` in a POST's response: a JSON body, or the first matching event of an SSE stream. */
  private async answerOf(res: LocalAnswer, id: Id, o: RequestOptions): Promise<Msg> {
    const status = res.status;
    const type = res.headers['content-type'] ?? '';
    if (status === 404) {
      res.discard();
      throw new SessionGone();
    }
    if (status === 200 && type.startsWith('text/event-stream')) return this.answerFromStream(res, id, o);
    const body = await res.text(MAX_ANSWER_BYTES);
    const parsed = parseJson(body);
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    const answer = messages.find((x): x is Msg => isObject(x) && x.id === id && ('result' in x || 'error' in x));
    if (answer) return answer;
    // the SDK answers a refused request with a JSON-RPC error without the id (400, 406, 413, 415…)
    const refusal = messages.find((x): x is Msg => isObject(x) && 'error' in x);
    if (refusal) return { jsonrpc: '2.0', id, error: refusal.error };
    throw new HopError(status, errorText(body));
  }

  private answerFromStream(res: LocalAnswer, id: Id, o: RequestOptions): Promise<Msg> {
    return new Promise((resolve, reject) => {
      let done = false;
      const parser = new SseParser((e) => {
        const m = parseJson(e.data);
        if (!isObject(m)) return;
        if (m.id === id && ('result' in m || 'error' in m) && !('method' in m)) {
          done = true;
          resolve(m);
          // the daemon ends the stream after the answer: read that end, keep the socket for reuse
          return;
        }
        o.onRelated?.(m);
      }, MAX_ANSWER_BYTES);
      res.read({
        data: (t) => {
          try {
            parser.feed(t);
          } catch (e) {
            res.destroy(e as Error);
          }
        },
        end: () => {
          if (!done) reject(new Error(`the daemon's answer stream ended before the answer (connection closed)`));
        },
        fail: (e) => {
          if (!done) reject(e);
        },
      });
    });
  }

  /** The push stream: opened once, resumed after a break with the last event id the bridge saw. */
  private openStream(failures: number): void {
    if (this.closed) return;
    const retry = (why: string): void => {
      this.stream = null;
      if (this.closed) return;
      if (failures >= STREAM_RETRIES) {
        this.o.onStreamLost(why);
        return;
      }
      setTimeout(() => this.openStream(failures + 1), STREAM_RETRY_MS[failures]).unref();
    };
    const headers = this.headers({ accept: 'text/event-stream' });
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    this.http.request({ method: 'GET', path: MCP_PATH, headers, timeoutMs: 5000 }).then(
      (res) => {
        if (this.closed) {
          res.destroy();
          return;
        }
        const status = res.status;
        if (status === 404) {
          res.discard();
          this.o.onStreamLost('the daemon no longer knows this session');
          return;
        }
        // 405: a daemon without a push stream. Pushes then ride only on answers' streams.
        if (status === 405) {
          res.discard();
          return;
        }
        if (status !== 200) {
          res.discard();
          retry(`the push stream was refused with HTTP ${status}`);
          return;
        }
        this.stream = res;
        let got = false;
        const parser = new SseParser((e) => {
          if (e.id !== undefined) this.lastEventId = e.id;
          const m = parseJson(e.data);
          if (isObject(m)) this.o.onPush(m);
        }, MAX_ANSWER_BYTES);
        // a stream that carried something was healthy: its break starts the retries afresh
        const broke = (): void => {
          if (got) failures = 0;
          if (this.stream === res) retry('the push stream broke');
        };
        res.read({
          data: (t) => {
            got = true;
            try {
              parser.feed(t);
            } catch (e) {
              res.destroy(e as Error);
            }
          },
          end: broke,
          fail: broke,
        });
      },
      (e: Error) => retry(`the push stream could not be opened: ${e.message}`),
    );
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(x: unknown): x is Msg {
  return !!x && typeof x === 'object' && !Array.isArray(x);
}

function errorText(body: string): string {
  const m = parseJson(body);
  const msg = isObject(m) && isObject(m.error) ? m.error.message : undefined;
  return typeof msg === 'string' ? msg : body.slice(0, 200);
}
