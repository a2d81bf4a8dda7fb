/**
 * What every model adapter is: one call that takes a payload the redaction gateway let out and
 * answers with text. Adapters accept only a `RedactedPayload`, which gateway.ts alone mints, so no
 * caller can hand a model anything that did not pass the rules in force. A provider failure is a
 * GasolineError with a model_* code (src/errors.ts): an answer to the caller, never a health state.
 */
import type { EgressPayload, ModelAdapterName, ModelAnswer } from './schema.js';

declare const REDACTED: unique symbol;
/** A payload through the egress redaction stage; minted by gateway.ts only. */
export type RedactedPayload = EgressPayload & { readonly [REDACTED]: true };

export interface AskOptions {
  /** each streamed piece of the answer, in order, as it arrives (MCP progress notifications) */
  onChunk?: (text: string) => void;
  /** the caller gave up (its MCP request was cancelled) */
  signal?: AbortSignal;
}

export interface ModelAdapter {
  readonly name: ModelAdapterName;
  /** rejects with GasolineError model_unavailable, model_timeout or model_answer_too_large */
  ask(payload: RedactedPayload, o?: AskOptions): Promise<ModelAnswer>;
}
