/**
 * MCP over streamable HTTP for bridges and the browser's side panel: one MCP session per bridge
 * (or panel), each its own SDK transport
 * (WebStandardStreamableHTTPServerTransport, stateful) connected to its own tool dispatcher
 * (createToolServer) on the one app port. The edge hands each /mcp request in as a web Request
 * (src/transport/fetch-adapter.ts, injected by src/app.ts: mcp/ never imports the edge).
 *
 * What happens here before the SDK sees a request: the bearer token (401 and a fixed body,
 * nothing else: no session lookup, no hint) — the daemon's own, checked first in constant time,
 * else a live panel token (src/pairing/panel-tokens.ts; a session opened with one is a `panel`
 * session and takes only panel tokens of the same /ws connection, a bridge's only the daemon's
 * token; a session whose panel token was revoked or expired is closed) — then the session by `Mcp-Session-Id` (an unknown
 * one gets the SDK's own 404), and for a new session the client identity header and the cap.
 * Host and Origin were checked by the edge, as on every route.
 *
 * A bridge that stops reading must not stall the daemon nor grow its memory: notifications for a
 * session whose streams hold more than `maxBacklogBytes` not yet taken by its socket are dropped,
 * counted, and said on that session's next tool answer. Sessions nobody uses (no request, no
 * open stream) for `idleMs` are closed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCErrorResponse } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../config.js';
import { bearerMatches, CLIENT_HEADER, CLIENT_ID_RE } from '../../daemon/contract.js';
import { ERRORS, GasolineError, type ErrorCode } from '../../errors.js';
import { log } from '../../log.js';
import type { Notify } from '../alerts.js';
import type { PanelGrant, PanelTokens } from '../../pairing/panel-tokens.js';
import type { McpPort } from '../port.js';
import { createToolServer, type ToolServer } from '../server.js';
import { BoundedEventStore } from './event-store.js';
import { MCP_HTTP_LIMITS, type McpHttpLimits } from './limits.js';

/** What the edge tells us about the answer it is writing (src/transport/fetch-adapter.ts `Exchange`). */
export interface HttpExchange {
  readonly backlog: number;
  readonly open: boolean;
  onEnd(fn: () => void): void;
  /** the request's body as the edge read it, whole; the Request then carries none (`bodyOnExchange`) */
  readonly body?: Uint8Array | null;
}

export interface McpHttpOptions {
  port: McpPort;
  config: Readonly<Config>;
  /** the daemon's bearer token (src/daemon/contract.ts); never logged. null: no bridges here
   * (a standalone opens /mcp to the side panel only) */
  token: string | null;
  /** the side panel's tokens (issued over /ws); without it only the daemon's token opens /mcp */
  panelTokens?: PanelTokens;
  limits?: Partial<McpHttpLimits>;
}

export interface McpHttpSessionView {
  /** the first 8 characters: enough to tell sessions apart, not enough to use one */
  session: string;
  /** who opened it: a bridge (the daemon's token) or the side panel (a panel token) */
  kind: 'bridge' | 'panel';
  client_id: string;
  created: string;
  last_request: string;
  open_streams: number;
  backlog_bytes: number;
  notifications_dropped: number;
  progress_dropped: number;
  replay_missed: number;
  resume_events: number;
}

class HttpSession {
  id = '';
  readonly created = Date.now();
  lastRequest = Date.now();
  readonly exchanges = new Set<HttpExchange>();
  readonly events: BoundedEventStore;
  dropped = 0;
  /** progress notifications held back while the backlog was over its bound (the result carries the answer) */
  progressDropped = 0;
  private reportedDropped = 0;
  private reportedMissed = 0;
  tools!: ToolServer;
  transport!: WebStandardStreamableHTTPServerTransport;
  closed = false;

  constructor(
    readonly clientId: string,
    private readonly limits: McpHttpLimits,
    /** a panel session's token (renewed by the requests that carry a newer one); null for a bridge */
    public grant: PanelGrant | null,
  ) {
    this.events = new BoundedEventStore({ maxEvents: limits.maxEvents, maxBytes: limits.maxEventBytes });
  }

  get backlog(): number {
    let b = 0;
    for (const e of this.exchanges) b += e.backlog;
    return b;
  }

  /** The notify given to the tool dispatcher: refuses (false) while the socket is not keeping up. */
  readonly notify: Notify = async (n) => {
    if (this.closed) return false;
    if (this.backlog > this.limits.maxBacklogBytes) {
      this.dropped++;
      this.tools.session.degrade('notifications dropped: its event stream is not being read');
      return false;
    }
    await this.tools.mcp.server.notification(n);
    this.tools.session.recover();
    return true;
  };

  /** Progress goes on the request's own stream, not through notify: the same bound applies to it. */
  readonly progressGate = (): boolean => !this.closed && this.backlog <= this.limits.maxBacklogBytes;

  /** One line for the next tool answer, once per loss. */
  note(): string {
    const dropped = this.dropped - this.reportedDropped;
    const missed = this.events.missed - this.reportedMissed;
    this.reportedDropped = this.dropped;
    this.reportedMissed = this.events.missed;
    const parts: string[] = [];
    if (dropped > 0) parts.push(`${dropped} notification${dropped === 1 ? ' was' : 's were'} dropped: this session's event stream was not being read`);
    if (missed > 0) parts.push(`${missed} pushed event${missed === 1 ? ' was' : 's were'} gone before the stream reconnected`);
    return parts.length ? `${parts.join('; ')} — call observe to catch up.` : '';
  }

  view(): McpHttpSessionView {
    return {
      session: this.id.slice(0, 8),
      kind: this.grant ? 'panel' : 'bridge',
      client_id: this.clientId,
      created: new Date(this.created).toISOString(),
      last_request: new Date(this.lastRequest).toISOString(),
      open_streams: this.exchanges.size,
      backlog_bytes: this.backlog,
      notifications_dropped: this.dropped,
      progress_dropped: this.progressDropped,
      replay_missed: this.events.missed,
      resume_events: this.events.size,
    };
  }
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

export class McpHttpSessions {
  private readonly sessions = new Map<string, HttpSession>();
  /** sessions being initialized: they count against the cap before they have an id */
  private starting = 0;
  private readonly limits: McpHttpLimits;
  /** answers a request for a session that does not exist with the SDK's own 404 */
  private readonly gone: WebStandardStreamableHTTPServerTransport;
  /** answers GET/DELETE without a session id with the SDK's own 400 */
  private readonly blank: WebStandardStreamableHTTPServerTransport;
  private readonly reaper: NodeJS.Timeout;
  private closing: Promise<void> | undefined;

  constructor(private readonly o: McpHttpOptions) {
    this.limits = { ...MCP_HTTP_LIMITS, ...o.limits };
    this.gone = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    void this.gone.close();
    this.blank = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    this.reaper = setInterval(() => this.reapIdle(), Math.max(50, Math.min(60_000, this.limits.idleMs / 4)));
    this.reaper.unref();
    // a panel session ends with the token it uses: its /ws connection closed, or it was replaced or expired
    o.panelTokens?.onRevoke((g) => {
      for (const s of [...this.sessions.values()]) if (s.grant === g) void this.closeSession(s, 'panel token revoked');
    });
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The /mcp handler the edge calls for every request on the path. */
  readonly handle = async (req: Request, ex: HttpExchange): Promise<Response> => {
    const authorization = req.headers.get('authorization') ?? '';
    // the daemon's token first, in constant time, before anything else is looked at
    const bridge = this.o.token !== null && bearerMatches(authorization, this.o.token);
    const grant = bridge ? null : (this.o.panelTokens?.check(authorization) ?? null);
    if (!bridge && !grant) {
      this.closeIfTokenDead(req.headers.get('mcp-session-id'));
      return refusal('unauthorized');
    }
    if (this.closing) return refusal('shutting_down');
    const sid = req.headers.get('mcp-session-id');
    if (sid !== null) {
      const s = this.sessions.get(sid);
      if (!s) return this.gone.handleRequest(req, parsedBody(ex));
      // a bridge's session takes the daemon's token; a panel's, a token of the connection that opened it
      if (s.grant ? grant?.connId !== s.grant.connId : !bridge) return refusal('unauthorized');
      // only to a newer grant: an older token put back would close this session at its expiry or
      // replacement while the newer one the panel holds is live
      if (grant && s.grant && (grant.expiresAt > s.grant.expiresAt || (grant.expiresAt === s.grant.expiresAt && grant.seq > s.grant.seq))) s.grant = grant;
      s.lastRequest = Date.now();
      this.track(s, ex);
      return s.transport.handleRequest(req, parsedBody(ex));
    }
    if (req.method !== 'POST') return this.blank.handleRequest(req, parsedBody(ex));
    return this.open(req, ex, grant);
  };

  /** A request without a valid token on a panel session whose own token died: that session ends (its token will not come back). */
  private closeIfTokenDead(sid: string | null): void {
    const s = sid === null ? undefined : this.sessions.get(sid);
    if (s?.grant && !s.grant.live) void this.closeSession(s, 'panel token revoked');
  }

  /** A POST without a session id: an initialize, which opens a session (anything else is refused by the SDK). */
  private async open(req: Request, ex: HttpExchange, grant: PanelGrant | null): Promise<Response> {
    const asked = req.headers.get(CLIENT_HEADER);
    if (asked !== null && !CLIENT_ID_RE.test(asked)) return rpcRefusal('invalid_client_id', `${CLIENT_HEADER} must match ${CLIENT_ID_RE.source}`);
    if (this.sessions.size + this.starting >= this.limits.maxSessions) {
      return rpcRefusal('mcp_sessions_full', `${this.limits.maxSessions} MCP sessions are open on this daemon; end one (DELETE /mcp) or wait for idle ones to close`);
    }
    this.starting++;
    const s = new HttpSession(asked ?? (grant ? 'panel' : `anon-${randomBytes(6).toString('hex')}`), this.limits, grant);
    try {
      s.transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: s.events,
        keepAliveMs: this.limits.keepAliveMs,
        maxRequestBodySize: this.limits.maxBody,
        onsessioninitialized: (id) => {
          s.id = id;
          // the table lists it by the id the bridge holds (its first 8 characters)
          s.tools.session.id = id;
          this.sessions.set(id, s);
          log.info('mcp http session opened', { session: id.slice(0, 8), client_id: s.clientId, transport: grant ? 'panel' : 'bridge' });
        },
      });
      s.tools = createToolServer({
        port: this.o.port,
        clientId: s.clientId,
        config: this.o.config,
        notify: s.notify,
        progressGate: s.progressGate,
        onProgressDrop: () => s.progressDropped++,
        notes: () => s.note(),
        mcpHealth: () => ({ transport: 'streamable-http', ...s.view() }),
        transport: grant ? 'panel' : 'bridge',
      });
      // set before connect: the SDK chains its own close handling onto it
      s.transport.onclose = () => this.closeSession(s, 'closed');
      await s.tools.mcp.connect(s.transport);
      this.track(s, ex);
      const res = await s.transport.handleRequest(req, parsedBody(ex));
      // not an initialize (or a refused one): the SDK answered it; nothing of it may stay
      if (!s.id) await this.closeSession(s, 'not initialized');
      return res;
    } catch (e) {
      await this.closeSession(s, 'failed to open');
      // a refusal with a code (client_limit: every client slot busy) is an answer, not a crash
      if (e instanceof GasolineError) return rpcRefusal(e.code, e.message);
      throw e;
    } finally {
      this.starting--;
    }
  }

  private track(s: HttpSession, ex: HttpExchange): void {
    if (!ex.open) return;
    s.exchanges.add(ex);
    ex.onEnd(() => {
      s.exchanges.delete(ex);
      s.lastRequest = Date.now();
    });
  }

  private async closeSession(s: HttpSession, reason: string): Promise<void> {
    if (s.closed) return;
    s.closed = true;
    if (s.id && this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    // alerts detach and streaming timers stop with the dispatcher
    s.tools?.close();
    await s.tools?.mcp.close().catch(() => undefined);
    await s.transport?.close().catch(() => undefined);
    if (s.id) log.info('mcp http session closed', { session: s.id.slice(0, 8), client_id: s.clientId, reason });
  }

  private reapIdle(): void {
    const now = Date.now();
    for (const s of [...this.sessions.values()]) {
      if (s.exchanges.size === 0 && now - s.lastRequest > this.limits.idleMs) void this.closeSession(s, 'idle');
      else if (s.grant && !s.grant.live) void this.closeSession(s, 'panel token expired');
    }
  }

  health(): Record<string, unknown> {
    return {
      sessions: this.sessions.size,
      max_sessions: this.limits.maxSessions,
      max_backlog_bytes: this.limits.maxBacklogBytes,
      idle_close_s: Math.round(this.limits.idleMs / 1000),
      list: [...this.sessions.values()].map((s) => s.view()),
    };
  }

  /** testing and diagnostics: the notify of a session, by its full id */
  notifyOf(sessionId: string): Notify | undefined {
    return this.sessions.get(sessionId)?.notify;
  }

  /** Closes every session (their streams end; their dispatchers detach). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.reaper);
      await Promise.all([...this.sessions.values()].map((s) => this.closeSession(s, 'shutting down')));
      await this.blank.close();
    })();
    return this.closing;
  }
}

/** The edge-style refusal (`{error, message}`), for what is refused before MCP is spoken at all. */
function refusal(code: ErrorCode): Response {
  return new Response(JSON.stringify({ error: code, message: ERRORS[code].summary }), { status: ERRORS[code].http, headers: JSON_HEADERS });
}

/** A refusal an MCP client reads as a JSON-RPC error (the request had no id we could answer). */
function rpcRefusal(code: ErrorCode, message: string): Response {
  const body: Omit<JSONRPCErrorResponse, 'id'> & { id: null } = { jsonrpc: '2.0', id: null, error: { code: -32000, message: `${code}: ${message}`, data: { error: code } } };
  return new Response(JSON.stringify(body), { status: ERRORS[code].http, headers: JSON_HEADERS });
}

const utf8 = new TextDecoder();

/**
 * The body for the SDK's transport, parsed from the bytes the edge read whole. Undefined when there
 * are none or they are not JSON: the SDK then reads the Request's body (none) and answers its own
 * parse error, as it would have for the bytes. Decoded as the SDK decodes (a BOM dropped, a bad
 * UTF-8 sequence replaced), so what parses here is what would have parsed there.
 */
function parsedBody(ex: HttpExchange): { parsedBody: unknown } | undefined {
  if (!ex.body) return undefined;
  try {
    return { parsedBody: JSON.parse(utf8.decode(ex.body)) };
  } catch {
    return undefined;
  }
}
