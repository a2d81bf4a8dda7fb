/**
 * The one door for patterns that come from a user (an agent's noise and redaction rules, the
 * config file's `redaction.rules`): they run on page text an attacker writes, in the ingest
 * workers, the scan worker and on main (egress). V8's RegExp backtracks, so `(?:a|a)+$` on a
 * page's "aaaa…!" never returns and freezes the thread (#18 item 1). Here every user pattern
 * compiles onto RE2 semantics (re2js, pure JS: see PERFORMANCE.md "User patterns"), whose match
 * time is linear in text × program size, and the program size is capped, so one match costs a
 * bounded amount per character whatever the pattern. What RE2 cannot run in linear time
 * (backreferences, lookaround) is refused with `pattern_refused` instead of falling back.
 *
 * Our own built-in rules stay on V8 RegExp: they are written and reviewed to be linear (see
 * redaction/rules.ts) and are 5–20× faster there on typical text.
 */
import { RE2JS } from 're2js';
import { gasolineError, type GasolineError } from '../../errors.js';

/** what the pattern is for: a redaction rule must never match the empty string */
export type PatternUse = 'noise' | 'redaction';

/**
 * RE2 program instructions at most. One match step costs ~one visit per live instruction per
 * character, so this is the constant of the linear bound: a 16 KiB message against the worst
 * accepted pattern stays in the tens of milliseconds (PERFORMANCE.md). Real rules are far smaller
 * (`acme_[A-Za-z0-9]{32}` is ~40); `a{1000}` is not.
 */
export const MAX_PROGRAM = 600;
export const MAX_PATTERN_LENGTH = 500;
/** wall-clock bound for finding every match in one text (see `spans`) */
export const SPAN_BUDGET_MS = 20;

/** A secret's span inside a match: the group named `s` (or `q`, `q2`) when the pattern has one, else the whole match. */
export interface PatternSpan {
  start: number;
  end: number;
}

const SECRET_GROUPS = ['s', 'q', 'q2'] as const;
/** texts on which any pattern that can match "" does so somewhere (anchors and \b included) */
const EMPTY_PROBES = ['', 'a', 'a b', ' ', '\n', '0_'];

/** A user pattern that compiled onto the linear-time engine; only `compileUserPattern` makes one. */
export class UserPattern {
  private readonly secretGroup: string | undefined;

  private constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {
    const named = re.namedGroups();
    this.secretGroup = SECRET_GROUPS.find((g) => g in named);
  }

  /** @internal the one mint (see compileUserPattern) */
  static mint(source: string, re: RE2JS): UserPattern {
    return new UserPattern(source, re);
  }

  /** Is there a match anywhere in `s`? */
  test(s: string): boolean {
    return this.re.test(s);
  }

  /** Where the first match at or after `from` starts, or -1. */
  searchFrom(s: string, from: number): number {
    const m = this.re.matcher(s);
    return m.find(from) ? m.start() : -1;
  }

  /**
   * The secret span of every match, left to right; a match of nothing is skipped (defence: refused
   * at compile time). One search is linear, but finding every match is not: a search may read to
   * the end of the text before settling on a short match (`a*b|a` on "aaaa…" reads n characters
   * n times; the fuzz test found 20 s on 3 000 characters). So the whole walk has a wall-clock
   * budget, and past it the rest of the text counts as this rule's secret: fail closed, never a
   * leak, never a stall. Real rules (a literal prefix, bounded classes) finish in microseconds.
   */
  spans(s: string, budgetMs = SPAN_BUDGET_MS): PatternSpan[] {
    const out: PatternSpan[] = [];
    const m = this.re.matcher(s);
    const t0 = performance.now();
    let at = 0;
    let finds = 0;
    while (at <= s.length && m.find(at)) {
      const start = m.start();
      // The first search is linear, so only the walk after it is timed: a stalled thread (GC, a
      // busy neighbour) must not turn one ordinary match into "the rest is secret", which would
      // also make answers differ run to run. No match starts between `at` and `start`, so failing
      // closed from `start` leaks nothing.
      if (++finds > 1 && performance.now() - t0 > budgetMs) {
        if (start < s.length) out.push({ start, end: s.length });
        break;
      }
      const end = m.end();
      if (end === start) {
        at = end + 1;
        continue;
      }
      const g = this.secretGroup;
      const gs = g !== undefined ? m.start(g) : -1;
      if (g !== undefined && gs >= 0 && m.end(g) > gs) out.push({ start: gs, end: m.end(g) });
      else out.push({ start, end });
      at = end;
    }
    return out;
  }
}

/**
 * Compiles a user pattern or throws `pattern_refused` with what to change. `noise` patterns
 * match case-insensitively (as noise rules always have); `redaction` ones as written.
 */
export function compileUserPattern(source: string, use: PatternUse, maxLength = MAX_PATTERN_LENGTH): UserPattern {
  if (source.length > maxLength) throw refused(`longer than ${maxLength} characters`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(fromJsSyntax(source), use === 'noise' ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    throw refused(explain(e instanceof Error ? e.message : String(e)));
  }
  const size = programSize(re);
  if (size > MAX_PROGRAM) throw refused(`compiles to ${size} steps (at most ${MAX_PROGRAM}): use smaller repeat counts, e.g. {16,64} instead of {1000}`);
  if (use === 'redaction') {
    for (const probe of EMPTY_PROBES) {
      for (const m of re.matchAll(probe)) {
        if (m[0].length === 0) throw refused(`it matches the empty string (at ${m.index} of ${JSON.stringify(probe)}): a redaction rule must match at least one character, e.g. x+ instead of x*`);
      }
    }
  }
  return UserPattern.mint(source, re);
}

/** The reason a pattern would be refused, or null: for validating without keeping the result. */
export function userPatternProblem(source: string, use: PatternUse, maxLength = MAX_PATTERN_LENGTH): string | null {
  try {
    compileUserPattern(source, use, maxLength);
    return null;
  } catch (e) {
    return (e as GasolineError).message;
  }
}

function refused(why: string): GasolineError {
  return gasolineError('pattern_refused', why);
}

/** RE2's parse errors, said in terms of what to do instead. */
function explain(msg: string): string {
  const what = msg.replace(/^error parsing regexp: /, '');
  if (/invalid escape sequence: `\\[1-9]|`\\k/.test(what)) return `backreferences (\\1, \\k<name>) are not supported: user patterns run on a linear-time engine (RE2 syntax); ${what}`;
  if (/\(\?[=!]|\(\?<[=!]|`\(\?<=|`\(\?<!/.test(what) || /\(\?<[=!]/.test(msg)) return `lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported: user patterns run on a linear-time engine (RE2 syntax); ${what}`;
  return `not a valid RE2 pattern: ${what}`;
}

/** JavaScript escapes RE2 spells differently: \uXXXX and \u{X…} become \x{…}; everything else passes as written. */
function fromJsSyntax(p: string): string {
  if (!p.includes('\\u')) return p;
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const rest = p.slice(i + 1);
    const m = /^u([0-9A-Fa-f]{4})/.exec(rest) ?? /^u\{([0-9A-Fa-f]{1,6})\}/.exec(rest);
    if (m) {
      out += `\\x{${m[1]}}`;
      i += m[0].length;
    } else {
      // an escape pair passes whole, so "\\u0041" stays a backslash followed by "u0041"
      out += c + (p[i + 1] ?? '');
      i++;
    }
  }
  return out;
}

/**
 * The size of the compiled program. re2js does not publish it; the field is pinned by a unit test
 * (test/unit/patterns/user-pattern.test.ts), so a library update that moves it fails there, not here.
 */
function programSize(re: RE2JS): number {
  const prog = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst;
  if (!Array.isArray(prog)) throw gasolineError('internal', 're2js no longer exposes its program size; update src/domain/patterns/user-pattern.ts');
  return prog.length;
}
