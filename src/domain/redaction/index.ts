/** The redaction room's door. */
export { compileRedaction, RedactionConfigError, RedactionConfigSchema, RedactionEngine, type Finding, type RedactionConfig } from './engine.js';
export { isCard, luhn } from './rules.js';
export { LiveRedaction, type RedactionRuleSpec } from './live.js';
