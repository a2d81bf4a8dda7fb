/**
 * The rule set in force. Changing it (configure action "redaction") swaps in a new engine on
 * main and bumps a version that travels with every ingest task, so each worker recompiles the
 * same rules before its next batch: one rule set everywhere, never two.
 */
import { compileRedaction, type RedactionConfig, type RedactionEngine } from './engine.js';

export interface RedactionRuleSpec {
  name: string;
  pattern: string;
  replacement?: string | undefined;
}

export class LiveRedaction {
  engine: RedactionEngine;
  version = 0;
  rules: RedactionRuleSpec[];
  allowlist: string[];

  constructor(config: { rules: RedactionRuleSpec[]; allowlist: string[] }) {
    this.rules = config.rules.map((r) => ({ ...r }));
    this.allowlist = [...config.allowlist];
    this.engine = compileRedaction(this.config());
  }

  config(): RedactionConfig {
    return { rules: this.rules.map((r) => ({ name: r.name, pattern: r.pattern, ...(r.replacement !== undefined ? { replacement: r.replacement } : {}) })), allowlist: this.allowlist };
  }

  /** Throws RedactionConfigError (with the reason) and changes nothing when the rule is refused. */
  add(rule: RedactionRuleSpec): void {
    const next = this.engine.withRule({ name: rule.name, pattern: rule.pattern, ...(rule.replacement !== undefined ? { replacement: rule.replacement } : {}) });
    this.rules = [...this.rules.filter((r) => r.name !== rule.name), rule];
    this.engine = next;
    this.version++;
  }

  remove(name: string): void {
    const next = this.engine.withoutRule(name);
    this.rules = this.rules.filter((r) => r.name !== name);
    this.engine = next;
    this.version++;
  }
}
