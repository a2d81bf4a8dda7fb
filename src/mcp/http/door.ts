/**
 * The /mcp door a daemon opens at start: the SDK's HTTP transport and the tool dispatcher behind
 * it (sessions.ts) are loaded on the first request, not before. A daemon nobody has bridged to yet
 * does not hold them (~11 MB of RSS, issue 17), and once loaded they stay: the next bridge is
 * usually seconds away.
 */
import type { Notify } from '../alerts.js';
import { MCP_HTTP_LIMITS, type McpHttpLimits } from './limits.js';
import type { HttpExchange, McpHttpOptions, McpHttpSessions } from './sessions.js';

export class McpHttpDoor {
  private sessions: McpHttpSessions | undefined;
  private loading: Promise<McpHttpSessions> | undefined;
  private closing: Promise<void> | undefined;
  private readonly limits: McpHttpLimits;

  constructor(private readonly o: McpHttpOptions) {
    this.limits = { ...MCP_HTTP_LIMITS, ...o.limits };
  }

  /** true once the first request has loaded the sessions (tests and diagnostics) */
  get loaded(): boolean {
    return this.sessions !== undefined;
  }

  get size(): number {
    return this.sessions?.size ?? 0;
  }

  /** The /mcp handler the edge calls for every request on the path. */
  readonly handle = async (req: Request, ex: HttpExchange): Promise<Response> => {
    const s = this.sessions ?? (await this.load());
    return s.handle(req, ex);
  };

  private load(): Promise<McpHttpSessions> {
    this.loading ??= (async () => {
      const { McpHttpSessions } = await import('./sessions.js');
      const s = new McpHttpSessions(this.o);
      this.sessions = s;
      // a request that arrives while the daemon closes is answered by the sessions' own refusal
      if (this.closing) void s.close();
      return s;
    })();
    return this.loading;
  }

  health(): Record<string, unknown> {
    if (this.sessions) return this.sessions.health();
    return { sessions: 0, max_sessions: this.limits.maxSessions, max_backlog_bytes: this.limits.maxBacklogBytes, idle_close_s: Math.round(this.limits.idleMs / 1000), list: [] };
  }

  /** testing and diagnostics: the notify of a session, by its full id */
  notifyOf(sessionId: string): Notify | undefined {
    return this.sessions?.notifyOf(sessionId);
  }

  /** Closes every session (their streams end; their dispatchers detach). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const s = this.sessions ?? (this.loading ? await this.loading : undefined);
      await s?.close();
    })();
    return this.closing;
  }
}
