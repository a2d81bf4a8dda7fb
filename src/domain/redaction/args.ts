/**
 * A console call's argument list: `console.log("password:", pw)` and `console.log(a, b)` where a
 * token was split in two. Each argument alone holds no secret a rule can see; the list does. The
 * argument after a label argument is the secret, and a rule that fires on two adjacent arguments
 * joined is applied back to the parts it covers (#18 item 3).
 */
import { isSecretValue, isSensitiveKey } from './keyed.js';
import { isSpace } from './trigger.js';

/** Label words the keyed rules do not take alone (`pass=` is not a secret, `"pass", pw` is). */
const LABEL_WORDS = new Set(['pass', 'pw', 'psw', 'pword', 'pin', 'passcode', 'passcodes', 'key', 'keys']);
/** cheap first look: a label argument holds one of these (case-insensitive) */
const LABEL_HINT = /pass|pw|pin|secret|token|key|auth|cred|sess|sid|jwt|cookie|otp/i;
const MAX_LABEL = 40;
/** longer arguments are not joined with their neighbour: a split token is short */
const MAX_JOIN = 1024;
const MARK = '[REDACTED:';

/**
 * `"password:"`, `"api key ="`, `"pass"`, `"Your token is"`: an argument that names the next one.
 * Without a ':' or '=' only one or two words count (`"pass"`, `"auth token"`), so a sentence that
 * happens to end in "token" does not make the number after it a secret.
 */
export function isLabel(s: string): boolean {
  if (s.length === 0 || s.length > MAX_LABEL || tooManyWords(s) || !LABEL_HINT.test(s)) return false;
  let t = s.trim();
  const sep = /\s*(?:[:=]|->|=>)$/.exec(t) ?? /\s+(?:is|was|are)$/i.exec(t);
  if (sep) t = t.slice(0, sep.index);
  if (t.length === 0) return false;
  const words = t.split(/\s+/);
  if (words.length > (sep ? 4 : 2)) return false;
  const last = words[words.length - 1]!;
  const lower = last.toLowerCase();
  // "api key", "session id": the last word says what, the one before says whose
  if ((lower === 'key' || lower === 'id') && words.length > 1) return isSensitiveKey(`${words[words.length - 2]} ${last}`);
  // a key alone is a label here: `console.log("key:", k)` names what follows, unlike `key: 3` in prose
  return LABEL_WORDS.has(lower) || isSensitiveKey(last);
}

/**
 * isLabel's word count, read before its regexes and without them: most arguments are short
 * phrases (`"retry script failed"`), and turning them down by the hint, the separators and the
 * split is ~6 % of redaction on the bench's records; counting first takes ~8 % off that (issue 17).
 * Exact: true only where isLabel's own count says no (test/unit/redaction/args.test.ts). The
 * trimmed text's inner runs of whitespace are at most its words less one; a separator
 * (`\s*[:=]`, `->`, `=>`, `\s+is|was|are`) ends in ':', '=', '>', 's' or 'e' and takes at most
 * one run with it. So: more than 4 runs is too many, and more than 1 when the text cannot end
 * in a separator. Exported for its test.
 */
export function tooManyWords(s: string): boolean {
  let end = s.length - 1;
  while (end >= 0 && isSpace(s.charCodeAt(end))) end--;
  const last = s.charCodeAt(end) | 0x20;
  // ':' | 0x20 is ':', '=' is '=', '>' is '>'; 'S' and 'E' fold to 's' and 'e'
  const limit = last === 58 || last === 61 || last === 62 || last === 115 || last === 101 ? 4 : 1;
  // The runs that begin with a ' ' after a word, found by indexOf (memchr) instead of a loop over
  // every character of a sliced string (what msgpackr's strings are): a subset of the runs, so
  // more than `limit` of them already says "too many", as it does for most phrases
  let spaced = 0;
  for (let i = s.indexOf(' ', 1); i >= 0 && i < end; i = s.indexOf(' ', i + 1)) {
    if (!isSpace(s.charCodeAt(i - 1)) && ++spaced > limit) return true;
  }
  let runs = 0;
  let word = false;
  for (let i = 0; i <= end; i++) {
    const c = s.charCodeAt(i);
    // printable ASCII first: isSpace's chain of compares on every letter cost more than the regexes saved
    if (c > 32 && c < 127 ? false : isSpace(c)) {
      if (word) {
        word = false;
        if (++runs > limit) return true;
      }
    } else word = true;
  }
  return false;
}

/** Is some argument (not the last) a label? Then the next one is a secret. */
export function hasLabel(args: readonly unknown[]): boolean {
  for (let i = 0; i + 1 < args.length; i++) {
    const a = args[i];
    if (typeof a === 'string' && isLabel(a)) return true;
  }
  return false;
}

/** The short string arguments glued together, where a rule could see a secret split between two; null if fewer than two. */
export function joinedArgs(args: readonly unknown[]): string | null {
  if (args.length < 2) return null;
  let joined = '';
  let strings = 0;
  for (const a of args) {
    if (typeof a === 'string' && a.length <= MAX_JOIN) {
      joined += a;
      strings++;
    }
  }
  return strings >= 2 ? joined : null;
}

export interface ArgSecret {
  /** the text a secret had in the argument list, to be removed from the message built from it */
  value: string;
  /** the label argument before it, if that is how it was found */
  label?: string;
}

/**
 * Redacts, in place, what only the list shows; the parts were each redacted already. Returns
 * the texts removed, so the caller can remove them from the message (the extension joins the
 * arguments with spaces into `message`). `labels: false` (reads, user rules only): labels were
 * handled at ingest and no user rule depends on them.
 */
export function redactArgs(args: unknown[], redact: (s: string) => string, count: (cls: string) => void, labels = true): ArgSecret[] {
  const found: ArgSecret[] = [];
  for (let i = 0; i + 1 < args.length; i++) {
    const a = args[i];
    const b = args[i + 1];
    if (labels && typeof a === 'string' && (typeof b === 'string' || typeof b === 'number') && isLabel(a) && isSecretValue(b) && !String(b).includes(MARK)) {
      found.push({ value: String(b), label: a });
      args[i + 1] = `${MARK}keyed_secret]`;
      count('keyed_secret');
      i++;
      continue;
    }
    if (typeof a !== 'string' || typeof b !== 'string' || a.length === 0 || b.length === 0 || a.length + b.length > MAX_JOIN) continue;
    const joined = a + b;
    const out = redact(joined);
    if (out === joined) continue;
    // the one changed stretch: parts already redacted alone are unchanged in `out`
    let p = 0;
    while (p < joined.length && p < out.length && joined.charCodeAt(p) === out.charCodeAt(p)) p++;
    let q = 0;
    while (q < joined.length - p && q < out.length - p && joined.charCodeAt(joined.length - 1 - q) === out.charCodeAt(out.length - 1 - q)) q++;
    const end = joined.length - q;
    const cls = /^\[REDACTED:([a-z0-9_]+)\]/.exec(out.slice(p))?.[1] ?? 'split_secret';
    const label = `${MARK}${cls}]`;
    if (p < a.length) {
      found.push({ value: a.slice(p, Math.min(end, a.length)) });
      args[i] = a.slice(0, p) + label + a.slice(Math.min(end, a.length));
    }
    if (end > a.length) {
      const from = Math.max(p - a.length, 0);
      found.push({ value: b.slice(from, end - a.length) });
      args[i + 1] = b.slice(0, from) + label + b.slice(end - a.length);
    }
    count(cls);
  }
  return found;
}

/** The message line the extension built from the same arguments: the same secrets go. */
export function scrubMessage(message: string, found: readonly ArgSecret[]): string {
  let out = message;
  for (const f of found) {
    const label = `${MARK}keyed_secret]`;
    // a short value replaced everywhere would mangle the line: only where it follows its label
    if (f.label !== undefined && f.value.length < 6) out = out.split(`${f.label} ${f.value}`).join(`${f.label} ${label}`);
    else if (f.value.length >= 6) out = out.split(f.value).join(label);
  }
  return out;
}
