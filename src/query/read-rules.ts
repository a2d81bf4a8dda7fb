/**
 * The user redaction rules reads apply to every record they decode, before any filter, noise
 * rule or renderer sees it (#18 item 3): stored text keeps the rules in force when it arrived,
 * so a rule added at run time reaches older records only here. Without this, `contains` matched
 * the raw text (an oracle for the secret) and a string cut to its display length before egress
 * kept a prefix the rule no longer matched.
 *
 * On main the rules in force are bound to the reader once (the composition root does it), so
 * every scan finds them without each caller passing them; the scan worker gets them as data with
 * each query and compiles them once per version. No rules (the common case): one lookup per scan,
 * nothing per record.
 */
import { kindName } from '../domain/kinds.js';
import { compileUserOnly, type ReadRulesSpec, type RedactionEngine } from '../domain/redaction/index.js';
import type { StoreReader } from '../shm/index.js';

const bound = new WeakMap<StoreReader, () => RedactionEngine | undefined>();

/** Every read through `reader` applies what `current()` returns at the time of the read. */
export function bindReadRules(reader: StoreReader, current: () => RedactionEngine | undefined): void {
  bound.set(reader, current);
}

export function readRulesOf(reader: StoreReader): RedactionEngine | undefined {
  return bound.get(reader)?.();
}

/** One entry: the rules change rarely, and one worker serves one process's rule set. */
let cached: { key: string; engine: RedactionEngine } | undefined;

/** The rules a query brought, compiled once per version (and rule text, should two sets share one). */
export function compiledReadRules(spec: ReadRulesSpec): RedactionEngine {
  const key = `${spec.version}:${JSON.stringify(spec.rules)}`;
  if (cached?.key !== key) cached = { key, engine: compileUserOnly({ rules: spec.rules.map((r) => ({ name: r.name, pattern: r.pattern, ...(r.replacement !== undefined ? { replacement: r.replacement } : {}) })), allowlist: spec.allowlist }) };
  return cached.engine;
}

/** The record as the rules in force now would have stored it; the same fields ingest redacts. */
export function redactRead<R extends object>(engine: RedactionEngine, kind: number, rec: R): R {
  // a decoded record of our own is a plain object the read owns: redacted in place, like at ingest,
  // text replaced by text, so it keeps its shape
  return engine.redactRecord(kindName(kind), rec as Record<string, unknown>) as R;
}
