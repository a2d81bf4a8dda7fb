/**
 * GraphQL variables bound to sensitive arguments: `mutation … { login(password: $p) }` with
 * `"variables": {"p": "…"}` (#20 item 1). The argument's name says what the variable holds; the
 * variable's own name (`p`) says nothing, so the keyed scanner cannot see it. Inline literals
 * (`login(password: "…")`) are the keyed scanner's already.
 *
 * Linear: one indexOf walk over the '$'s, then one walk per variable name found (at most MAX_VARS).
 */
import { isSensitiveKey, readValue, secretSpan, separatorAfter, SENSITIVE, type Span } from './keyed.js';

const MAX_VARS = 16;
const isWord = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/** names of the variables passed to sensitive arguments in a query's text */
export function sensitiveVariables(s: string): Set<string> {
  const vars = new Set<string>();
  let p = s.indexOf('$');
  while (p >= 0 && vars.size < MAX_VARS) {
    // `arg: $var` — back over spaces to ':', over spaces to the argument's name
    let j = p - 1;
    for (let k = 0; k < 8 && j >= 0 && isSpace(s.charCodeAt(j)); k++) j--;
    if (j > 0 && s.charCodeAt(j) === 58) {
      j--;
      for (let k = 0; k < 8 && j >= 0 && isSpace(s.charCodeAt(j)); k++) j--;
      const ae = j + 1;
      while (j >= 0 && ae - j <= 64 && isWord(s.charCodeAt(j))) j--;
      let ve = p + 1;
      while (ve < s.length && ve - p <= 64 && isWord(s.charCodeAt(ve))) ve++;
      if (ae > j + 1 && ve > p + 1 && isSensitiveKey(s.slice(j + 1, ae))) vars.add(s.slice(p + 1, ve));
    }
    p = s.indexOf('$', p + 1);
  }
  return vars;
}

/** Spans of the values of those variables wherever a quoted key of that name has one in `s`. */
export function scanGraphql(s: string): Span[] {
  if (s.indexOf('$') < 0) return [];
  const vars = sensitiveVariables(s);
  if (vars.size === 0) return [];
  const spans: Span[] = [];
  for (const name of vars) {
    let p = s.indexOf(name);
    while (p >= 0) {
      const r = p + name.length;
      // a quoted key, whole: `"p"` or `\"p\"`, not the end of `"ip"` nor the start of `"pass"`
      if (s.charCodeAt(p - 1) === 34) {
        const i = separatorAfter(s, r);
        if (i >= 0 && s.charCodeAt(i) === 58) {
          let j = i + 1;
          while (j < i + 6 && (s.charCodeAt(j) === 32 || s.charCodeAt(j) === 9)) j++;
          const v = readValue(s, j, 58, false);
          const span = v && !s.startsWith('[REDACTED', v.vs) ? secretSpan(s, v, 58, SENSITIVE) : null;
          if (span) spans.push(span.cls === 'keyed_secret' ? { ...span, cls: 'graphql_variable' } : span);
        }
      }
      p = s.indexOf(name, r);
    }
  }
  // several names: the rules want spans in order and not overlapping
  spans.sort((a, b) => a.start - b.start);
  return spans.filter((sp, k) => k === 0 || sp.start >= spans[k - 1]!.end);
}
