/** The door of MCP over streamable HTTP (bridges → daemon): the session registry and its bounds. */
export { MCP_HTTP_LIMITS, McpHttpSessions, type HttpExchange, type McpHttpLimits, type McpHttpOptions, type McpHttpSessionView } from './sessions.js';
export { BoundedEventStore, EVENT_LIMITS } from './event-store.js';
