/**
 * The rule set in force. Changing it (configure action "redaction") swaps in a new engine on
 * main and bumps a version that travels with every ingest task, so each worker recompiles the
 * same rules before its next batch: one rule set everywhere, never two.
 *
 * Stored text keeps the rules in force when it arrived, so a rule added at run time has not
 * touched the records before it. Reads apply it to them (`reads`, `readSpec`) before any filter
 * or renderer sees a record: otherwise `contains` is an oracle for what the rule hides, and a
 * string cut to its display length before egress keeps a prefix the rule no longer matches.
 */
import { compileRedaction, compileUserOnly, type RedactionConfig, type RedactionEngine } from './engine.js';

export interface RedactionRuleSpec {
  name: string;
  pattern: string;
  replacement?: string | undefined;
}

/** The user rules reads must apply, as data: how they travel to the scan worker with a query. */
export interface ReadRulesSpec {
  /** changes whenever the rules do: the worker's cache key */
  version: number;
  rules: RedactionRuleSpec[];
  allowlist: string[];
}

export class LiveRedaction {
  engine: RedactionEngine;
  version = 0;
  rules: RedactionRuleSpec[];
  allowlist: string[];
  /**
   * The user rules reads apply on main, or undefined when every rule has been in force since the
   * first record (the config file's, the common case): then reads cost nothing.
   */
  reads: RedactionEngine | undefined;
  /** names of rules in force, unchanged, since startup: every stored record went through them */
  private readonly fromStart: Set<string>;

  constructor(config: { rules: RedactionRuleSpec[]; allowlist: string[] }) {
    this.rules = config.rules.map((r) => ({ ...r }));
    this.allowlist = [...config.allowlist];
    this.engine = compileRedaction(this.config());
    this.fromStart = new Set(this.rules.map((r) => r.name));
  }

  config(): RedactionConfig {
    return { rules: this.rules.map(plain), allowlist: this.allowlist };
  }

  /** The rules reads apply, for the scan worker; undefined when there are none. */
  readSpec(): ReadRulesSpec | undefined {
    const rules = this.rules.filter((r) => !this.fromStart.has(r.name));
    return rules.length ? { version: this.version, rules, allowlist: this.allowlist } : undefined;
  }

  /** Throws RedactionConfigError (with the reason) and changes nothing when the rule is refused. */
  add(rule: RedactionRuleSpec): void {
    const next = this.engine.withRule(plain(rule));
    this.rules = [...this.rules.filter((r) => r.name !== rule.name), rule];
    this.engine = next;
    this.changed(rule.name);
  }

  remove(name: string): void {
    const next = this.engine.withoutRule(name);
    this.rules = this.rules.filter((r) => r.name !== name);
    this.engine = next;
    this.changed(name);
  }

  private changed(name: string): void {
    // a config rule replaced or removed stops covering what arrives from now on
    this.fromStart.delete(name);
    this.version++;
    const spec = this.readSpec();
    this.reads = spec ? compileUserOnly({ rules: spec.rules.map(plain), allowlist: spec.allowlist }) : undefined;
  }
}

const plain = (r: RedactionRuleSpec): { name: string; pattern: string; replacement?: string } => ({ name: r.name, pattern: r.pattern, ...(r.replacement !== undefined ? { replacement: r.replacement } : {}) });
