/** The redaction room's door. */
export { compileRedaction, compileUserOnly, RedactionConfigError, RedactionConfigSchema, RedactionEngine, type Finding, type RedactionConfig } from './engine.js';
export { isCard, luhn } from './rules.js';
export { LiveRedaction, type ReadRulesSpec, type RedactionRuleSpec } from './live.js';
