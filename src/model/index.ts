/**
 * The model room's door (issue 19 item 5): an adapter behind the redaction gateway. Nothing in
 * the engine imports this room, and it imports no store, tool or transport: the tools hand it a
 * triage context, the composition root hands it the rule set in force.
 */
import { ModelGateway, type PolicySource } from './gateway.js';
import { offlineAdapter } from './offline.js';
import { openAiAdapter, type OpenAiOptions } from './openai.js';
import type { ModelConfig } from './schema.js';

export { ModelGateway, redactForEgress, type EgressPolicy, type GatewayOutcome, type ModelStats, type PolicySource } from './gateway.js';
export type { AskOptions, ModelAdapter, RedactedPayload } from './adapter.js';
export { offlineAdapter, triage } from './offline.js';
export { openAiAdapter } from './openai.js';
export { SseParser, SseTooLarge } from './sse.js';
export { TRIAGE_SYSTEM } from './prompt.js';
export { errorBlock, renderContext, requestBlock } from './context-text.js';
export * from './schema.js';

/** The configured adapter behind a gateway over the rules `policy` gives. */
export function createModel(cfg: ModelConfig, policy: PolicySource, o: OpenAiOptions = {}): ModelGateway {
  return new ModelGateway(cfg.adapter === 'openai' ? openAiAdapter(cfg, o) : offlineAdapter, policy, cfg.max_context_chars);
}
