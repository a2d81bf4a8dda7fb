/**
 * Redaction rules a user adds (configure, or the config file's `redaction.rules`), as the engine
 * runs them: each pattern goes through the one user-pattern door (linear-time, never empty), and
 * becomes a span scanner beside the built-in rules, so no user pattern ever meets V8's
 * backtracking engine on page text (#18 item 1).
 */
import { GasolineError, type ErrorCode } from '../../errors.js';
import { compileUserPattern, type UserPattern } from '../patterns/user-pattern.js';
import type { Span } from './keyed.js';
import type { Rule } from './rules.js';

export interface UserRule extends Rule {
  replacement?: string | undefined;
  /** the pattern as the user wrote it (listed back to them) */
  source: string;
  pattern: UserPattern;
}

/** A rule the config or a tool call brought; throws with `code` and a message naming the rule. */
export class UserRuleError extends Error {
  constructor(
    message: string,
    readonly code: ErrorCode,
  ) {
    super(message);
  }
}

export function userRule(r: { name: string; pattern: string; replacement?: string | undefined }): UserRule {
  let pattern: UserPattern;
  try {
    pattern = compileUserPattern(r.pattern, 'redaction');
  } catch (e) {
    if (e instanceof GasolineError) throw new UserRuleError(`redaction rule "${r.name}": ${e.code}: ${e.message}`, e.code);
    throw e;
  }
  const cls = r.name;
  return {
    name: r.name,
    // the scanner does the matching; this never matches (the engine's contract for `scan` rules)
    re: /(?!)/g,
    scan: (s: string): Span[] => pattern.spans(s).map((sp) => ({ start: sp.start, end: sp.end, cls })),
    builtin: false,
    replacement: r.replacement,
    source: r.pattern,
    pattern,
  };
}

/**
 * The batch trigger for user rules (the engine's `triggered`): marks each record of the joined
 * text in which some rule matches. One linear test per record and rule, not a search from record
 * to record: a search can read to the end of the batch before it settles, and a batch of many
 * records would then cost records × text (see UserPattern.spans).
 */
export function markUserRules(text: string, starts: ArrayLike<number>, hit: Uint8Array, patterns: readonly UserPattern[]): void {
  const n = starts.length;
  for (let i = 0; i < n; i++) {
    if (hit[i] === 1) continue;
    const rec = text.slice(starts[i]!, i + 1 < n ? starts[i + 1]! - 1 : text.length);
    for (const p of patterns) {
      if (p.test(rec)) {
        hit[i] = 1;
        break;
      }
    }
  }
}
