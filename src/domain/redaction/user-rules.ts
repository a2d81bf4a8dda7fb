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
 * text in which some rule matches, jumping to the next unmarked record after a hit, as the
 * built-in trigger does.
 */
export function markUserRules(text: string, starts: ArrayLike<number>, hit: Uint8Array, patterns: readonly UserPattern[]): void {
  const n = starts.length;
  for (const p of patterns) {
    let r = 0;
    let from = 0;
    for (;;) {
      const at = p.searchFrom(text, from);
      if (at < 0) break;
      while (r + 1 < n && starts[r + 1]! <= at) r++;
      hit[r] = 1;
      while (r + 1 < n && hit[r + 1] === 1) r++;
      if (r + 1 >= n) break;
      from = starts[r + 1]!;
    }
  }
}
