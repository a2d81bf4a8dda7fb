/**
 * The panel's MCP session with the daemon (issue 19 items 2 and 3, contract A): the SDK's own
 * client over streamable HTTP to /mcp, with the token the worker obtained over the paired
 * WebSocket. The same four tools as every agent; nothing here parses JSON-RPC by hand.
 *
 * A session can die under us (the daemon restarted, or dropped it): the SDK then gets a 404, and
 * a refused or expired token gets a 401/403. Either way the panel re-initialises explicitly — a
 * new token, a new session — tells the user once (onLost), and retries the call once. Anything
 * else is the caller's error to show.
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
  /** refresh a token this long before it lapses, so a call never rides one that dies mid-flight */
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
  private expiresAt = 0;
  private opening: Promise<void> | null = null;

  constructor(private readonly deps: PanelMcpDeps) {}

  get sessionId(): string | undefined {
    return this.transport?.sessionId;
  }

  /** Opens the session if there is none (or its token is about to lapse). */
  open(): Promise<void> {
    const fresh = this.client && Date.now() < this.expiresAt - (this.deps.refreshBeforeMs ?? 60_000);
    if (fresh) return Promise.resolve();
    this.opening ??= this.init().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolText> {
    await this.open();
    try {
      return await this.callOnce(name, args, signal);
    } catch (e) {
      if (!lostSession(e)) throw e;
      this.deps.onLost?.();
      await this.drop();
      await this.open();
      return this.callOnce(name, args, signal);
    }
  }

  async close(): Promise<void> {
    const t = this.transport;
    if (t?.sessionId) await t.terminateSession().catch(() => undefined);
    await this.drop();
  }

  private async callOnce(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolText> {
    const r = await this.client!.callTool({ name, arguments: args }, undefined, { ...(signal ? { signal } : {}), timeout: 120_000 });
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
    const transport = new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: { authorization: `Bearer ${t.token}`, 'x-gasoline-client': 'panel' } },
    });
    const client = new Client({ name: 'gasoline-panel', version: this.deps.version }, { jsonSchemaValidator: noSchemas });
    try {
      await client.connect(transport);
    } catch (e) {
      await transport.close().catch(() => undefined);
      throw new PanelSessionError(httpCode(e) === 401 || httpCode(e) === 403 ? 'panel_token_refused' : 'mcp_unreachable', `could not open the MCP session at ${t.url}: ${String((e as Error).message ?? e).slice(0, 300)}`);
    }
    this.client = client;
    this.transport = transport;
    this.expiresAt = t.expires_at;
  }

  private async drop(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.transport = null;
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
