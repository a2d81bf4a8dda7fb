/** The bounds of MCP over streamable HTTP, apart from the sessions so the door can read them without the SDK. */
import { EVENT_LIMITS } from './event-store.js';

export const MCP_HTTP_LIMITS = {
  /** concurrent sessions; a bridge holds one, so this is far above any desk's agents */
  maxSessions: 64,
  /** bytes a session's streams may hold unsent before its notifications are dropped */
  maxBacklogBytes: 1024 * 1024,
  /** a session with no request and no open stream this long is closed */
  idleMs: 30 * 60_000,
  /** request body bound (the SDK's own default; a tool call's largest argument is 64 KiB) */
  maxBody: 4 * 1024 * 1024,
  /** SSE comment interval: below uWS's 10 s idle timeout, so a quiet stream stays open */
  keepAliveMs: 5_000,
  maxEvents: EVENT_LIMITS.maxEvents,
  maxEventBytes: EVENT_LIMITS.maxBytes,
} as const;
export type McpHttpLimits = { -readonly [K in keyof typeof MCP_HTTP_LIMITS]: number };
