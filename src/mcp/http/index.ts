/**
 * The door of MCP over streamable HTTP (bridges → daemon): the session registry and its bounds.
 * Only what the daemon needs at start is exported as values here; the sessions (and the SDK's
 * transport) are loaded by the door on the first /mcp request (door.ts).
 */
export { McpHttpDoor } from './door.js';
export { MCP_HTTP_LIMITS, type McpHttpLimits } from './limits.js';
export type { HttpExchange, McpHttpOptions, McpHttpSessionView } from './sessions.js';
export { BoundedEventStore, EVENT_LIMITS } from './event-store.js';
