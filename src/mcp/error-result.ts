/**
 * The one mapping from an error to an MCP tool result. Tools throw GasolineError; whatever
 * carries them (the stdio server today, HTTP sessions next) answers through here, so an agent
 * always reads the stable code first and then what to do next.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GasolineError } from '../errors.js';

/** The text an agent reads: the code, then the message (which says what to do next). */
export function errorText(e: unknown): string {
  if (e instanceof GasolineError) return `${e.code}: ${e.message}`;
  // not one of ours: a bug, not a state of the world — the call failed, the server did not
  return `internal: ${e instanceof Error ? e.message : String(e)}; the server keeps running — retry, or check configure({action:"health"})`;
}

/** `redact`: egress redaction, as on every text we return (a message may quote page content). */
export function errorResult(e: unknown, redact: (s: string) => string): CallToolResult {
  return { content: [{ type: 'text', text: redact(errorText(e)) }], isError: true };
}
