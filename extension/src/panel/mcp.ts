/**
 * The panel's MCP session with the daemon (issue 19 items 2 and 3, contract A): the SDK's own
 * client over streamable HTTP to /mcp, with the token the worker obtained over the paired
 * WebSocket. The same four tools as every agent; nothing here parses JSON-RPC by hand.
 *
 * A session can die under us (the daemon restarted, or dropped it): the SDK then gets a 404, and
 * a refused or expired token gets a 401/403. Either way the panel re-initialises explicitly — a
 * new token, a new session — tells the user once (onLost), and retries the call once. Any other
 * transport failure (no answer, a 5xx) drops the client, so the next open() asks the daemon again
 * instead of claiming a session that may no longer exist. Anything else is the caller's error to show.
 *
 * The token is renewed IN PLACE: the daemon closes a panel session when the token it last saw
 * expires, even mid-request, so before a call that could outlive the token (less than the call
 * timeout plus a margin left) the worker is asked for a new one and it replaces the Authorization
 * header the SDK reads on every request; the session, and every call in flight on it, carries on
 * (src/mcp/http/sessions.ts adopts a newer token of the same /ws connection).
 *
 * No chrome or DOM here: the token comes in as a function, so Node tests drive this against the
 * real server (test/integration/panel-mcp.test.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type TokenAnswer = { ok: true; token: string; expires_at: number; url: string } | { ok: false; error: string; message: string };

export interface PanelMcpDeps {
  token(): Promise<TokenAnswer>;
  /** the session was lost and a new one is being made */
  onLost?(): void;
  version: string;
  /** how long one tool call may run (120 s) */
  callTimeoutMs?: number;
  /**
   * renew the token when less than this is left (the call timeout + 30 s; never less than the
   * call timeout), so no call outlives the token the daemon last saw
   */
  refreshBeforeMs?: number;
}

export interface ToolText {
  text: string;
  isError: boolean;
}

/** A session failure with a stable code the panel's state shows. */
export class PanelSessionError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PanelSessionError';
  }
}

/**
 * Our tools declare no output schema and the panel shows text only, so there is nothing to
 * validate; the SDK's default validator compiles schemas with `new Function`, which an extension
 * page's CSP forbids. (build.mjs also keeps that validator out of the bundle.)
 */
const noSchemas = {
  getValidator: () => {
    throw new PanelSessionError('unexpected_schema', 'a tool declared an output schema; the panel renders text only');
  },
};

export class PanelMcp {
  private client: Client | null = null;
  private transport: StreamableHTTPClientTransport | null = null;
  /** the object the transport's requestInit holds: renewal swaps its authorization in place */
  private headers: Record<string, string> | null = null;
  private url = '';
  private expiresAt = 0;
  private opening: Promise<void> | null = null;
  private readonly callTimeoutMs: number;
  private readonly refreshBeforeMs: number;

  constructor(private readonly deps: PanelMcpDeps) {
    this.callTimeoutMs = deps.callTimeoutMs ?? 120_000;
    this.refreshBeforeMs = Math.max(deps.refreshBeforeMs ?? this.callTimeoutMs + 30_000, this.callTimeoutMs);
  }

  get sessionId(): string | undefined {
    return this.transport?.sessionId;
  }

  /** Opens the session if there is none, or renews its token in place when a call could outlive it. */
  open(): Promise<void> {
    const fresh = this.client && Date.now() < this.expiresAt - this.refreshBeforeMs;
    if (fresh) return Promise.resolve();
    this.opening ??= (this.client ? this.renew() : this.init()).finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  /** Forgets the session (without ending it at the daemon), so the next open() really asks the daemon. */
  reset(): Promise<void> {
    return this.drop();
  }

  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolText> {
    await this.open();
    // a concurrent call may have dropped the session between: open it again
    const client = this.client ?? (await this.open(), this.client!);
    try {
      return await this.callOnce(client, name, args, signal);
    } catch (e) {
      const lost = lostSession(e);
      // the daemon is unreachable, shutting down or forgot us: nothing may claim this session is up.
      // Concurrent calls that all saw it drop the dead client once (the first), never a newer one.
      if ((lost || e instanceof TypeError || e instanceof StreamableHTTPError) && this.client === client) {
        if (lost) this.deps.onLost?.();
        await this.drop();
      }
      if (!lost) throw e;
      await this.open();
      return this.callOnce(this.client!, name, args, signal);
    }
  }

  async close(): Promise<void> {
    const t = this.transport;
    if (t?.sessionId) await t.terminateSession().catch(() => undefined);
    await this.drop();
  }

  private async callOnce(client: Client, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolText> {
    const r = await client.callTool({ name, arguments: args }, undefined, { ...(signal ? { signal } : {}), timeout: this.callTimeoutMs });
    const parts = Array.isArray(r.content) ? (r.content as Array<{ type?: string; text?: unknown }>) : [];
    const text = parts
      .filter((p) => p.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join('\n');
    return { text, isError: r.isError === true };
  }

  private async init(): Promise<void> {
    await this.drop();
    const t = await this.deps.token();
    if (!t.ok) throw new PanelSessionError(t.error, t.message);
    const headers: Record<string, string> = { authorization: `Bearer ${t.token}`, 'x-gasoline-client': 'panel' };
    const transport = new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers } });
    const client = new Client({ name: 'gasoline-panel', version: this.deps.version }, { jsonSchemaValidator: noSchemas });
    try {
      await client.connect(transport);
    } catch (e) {
      await transport.close().catch(() => undefined);
      throw new PanelSessionError(httpCode(e) === 401 || httpCode(e) === 403 ? 'panel_token_refused' : 'mcp_unreachable', `could not open the MCP session at ${t.url}: ${String((e as Error).message ?? e).slice(0, 300)}`);
    }
    this.client = client;
    this.transport = transport;
    this.headers = headers;
    this.url = t.url;
    this.expiresAt = t.expires_at;
  }

  /**
   * A new token on the same session: never a drop, which would fail every call in flight. The
   * next request carries it and the daemon adopts it for the session.
   */
  private async renew(): Promise<void> {
    const t = await this.deps.token();
    if (!t.ok) throw new PanelSessionError(t.error, t.message);
    // the worker now talks to another port: the old session is not there
    if (t.url !== this.url || !this.headers) {
      await this.drop();
      return this.init();
    }
    this.headers.authorization = `Bearer ${t.token}`;
    this.expiresAt = t.expires_at;
  }

  private async drop(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.transport = null;
    this.headers = null;
    this.expiresAt = 0;
    await c?.close().catch(() => undefined);
  }
}

function httpCode(e: unknown): number | undefined {
  return e instanceof StreamableHTTPError ? e.code : undefined;
}

/** 404: the server forgot the session; 401/403: our token lapsed or was revoked. */
function lostSession(e: unknown): boolean {
  const c = httpCode(e);
  return c === 404 || c === 401 || c === 403;
}
