/**
 * One redaction engine, compiled once from one rule set: used by the ingest workers on every
 * text-bearing field before a record enters a ring, and again at every egress (tool results,
 * health, logs). A secret becomes `[REDACTED:<class>]`; the text around it stays.
 */
import { z } from 'zod';
import type { ErrorCode } from '../../errors.js';
import type { UserPattern } from '../patterns/user-pattern.js';
import type { Kind } from '../kinds.js';
import { BUILTIN_RULES, isCard, SENSITIVE_HEADER, type Rule } from './rules.js';
import { markUserRules, userRule, UserRuleError, type UserRule } from './user-rules.js';
import { isKeyedSecret, isSecretValue, keyFlags, SECRETISH, SENSITIVE } from './keyed.js';
import { sensitiveVariables } from './graphql.js';
import { MIN_MIXED } from './shape.js';
import { redactCookie, redactSetCookie } from './cookies.js';
import { hasLabel, joinedArgs, redactArgs, scrubMessage } from './args.js';
import { candidateRuns, decodeRun, eachRun, isUserPassword, MAX_RUNS } from './base64.js';
import { findCandidates, markByPasses, markFound, mayTrigger } from './trigger.js';

export const RedactionConfigSchema = z
  .object({
    rules: z.array(z.object({ name: z.string().min(1).max(64).regex(/^[a-z0-9_]+$/), pattern: z.string().min(1).max(500), replacement: z.string().max(100).optional() })).max(100).default([]),
    /** exact strings that are never redacted (e.g. a public test key) */
    allowlist: z.array(z.string().min(1).max(500)).max(1000).default([]),
  })
  .strict();

export type RedactionConfig = z.input<typeof RedactionConfigSchema>;

export class RedactionConfigError extends Error {
  override name = 'RedactionConfigError';
  /** the stable code a tool answers with (`pattern_refused` for a user pattern) */
  constructor(
    message: string,
    readonly code: ErrorCode = 'invalid_argument',
  ) {
    super(message);
  }
}

export interface Finding {
  class: string;
  start: number;
  end: number;
}

const MARK = '[REDACTED:';


const LOG_FIELDS = ['message', 'args', 'url', 'source', 'stack', 'filename', 'request_url', 'response', 'error', 'headers', 'status_text'];
export const TEXT_FIELDS: Record<Kind, readonly string[]> = {
  logs: LOG_FIELDS,
  ext_logs: LOG_FIELDS,
  network: ['url', 'page_url', 'error'],
  network_bodies: ['url', 'request_headers', 'response_headers', 'request_body', 'response_body'],
  ws_events: ['url', 'data', 'reason'],
  actions: ['url', 'value', 'selectors', 'from_url', 'to_url'],
  perf: ['url'],
};
const ENCODED = /%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\\/|\+/;

/**
 * Pushes the text of a record's TEXT_FIELDS, in order, onto `parts`; true when an object key names
 * a secret. A string field equal to the same field of the previous record (`last[j]`) is not
 * pushed: it goes once into `shared` (`slot[j]`: its index there, -1 until it repeats) and the
 * pair (record i, that index) into `uses`, for one look shared by every record that repeats it (a batch's
 * page URL sits in every record).
 */
type Gather = (rec: Record<string, unknown>, i: number, parts: string[], collect: Collect, last: unknown[], slot: Int32Array, shared: string[], uses: number[]) => boolean;

/** collect with the engine's keyInfo bound: what the gatherers call for an object field */
type Collect = (v: unknown, out: string[], depth: number) => boolean;

/**
 * One gatherer per kind, compiled once from its field list so that each field is read by name:
 * the same loop over the names (`rec[k]`, k varying) was a megamorphic keyed load per field, most
 * of them absent, ~6 % of redaction on the bench's records. Most fields are absent or a string: no
 * call for those. The names are this file's constants, never input.
 */
function compileGather(fields: readonly string[], repeats: readonly string[]): Gather {
  const body = fields.map((f, j) => {
    const str = repeats.includes(f) ? `{ if (v === last[${j}]) { if (slot[${j}] === -1) { slot[${j}] = shared.length; shared.push(v); } uses.push(i, slot[${j}]); } else { last[${j}] = v; slot[${j}] = -1; parts.push(v); } }` : 'parts.push(v);';
    return `v = rec[${JSON.stringify(f)}];\nif (typeof v === 'string') ${str}\nelse if (v !== undefined && v !== null && typeof v === 'object') keyed = collect(v, parts, 0) || keyed;`;
  });
  return new Function('rec', 'i', 'parts', 'collect', 'last', 'slot', 'shared', 'uses', `let keyed = false;\nlet v;\n${body.join('\n')}\nreturn keyed;`) as Gather;
}

/**
 * The fields that repeat from record to record in a batch: the page's URL (a socket's for
 * ws_events). Comparing every field with the previous record's cost more than it saved (a string
 * compare is a call; a message or a request URL rarely repeats).
 */
const REPEATS: Record<Kind, readonly string[]> = { logs: ['url'], ext_logs: ['url'], network: ['page_url'], network_bodies: [], ws_events: ['url'], actions: ['url'], perf: ['url'] };

/** keyInfo's bit beside keyFlags' (SENSITIVE 1, SECRETISH 2, COUNTS 4): the key's own text may hold a secret */
const KEY_TEXT = 8;
/**
 * How many keys an engine remembers keyInfo for (then it starts again), and the longest it keeps:
 * the memory stays bounded whatever keys a page sends (a longer key is looked at every time).
 */
const KEYS_KEPT = 4096;
const KEY_KEPT_MAX = 256;

/** how many clean repeated strings an engine remembers, and the longest it keeps */
const CLEAN_KEPT = 8;
const CLEAN_MAX = 2048;

const GATHER = Object.fromEntries(Object.entries(TEXT_FIELDS).map(([k, f]) => [k, compileGather(f, REPEATS[k as Kind])])) as Record<Kind, Gather>;
/** the same, leaving out the repeating field: for a batch in which it holds one value throughout (allSame) */
const GATHER_BUT_REPEAT = Object.fromEntries(Object.entries(TEXT_FIELDS).map(([k, f]) => [k, compileGather(f.filter((x) => !REPEATS[k as Kind].includes(x)), [])])) as Record<Kind, Gather>;

/**
 * Does the kind's repeating field hold one string, the same in every record? The page URL sits in
 * nearly every record of a batch, and comparing two decoded strings of equal text is a runtime
 * call (msgpackr's strings are slices of a larger string): ~30 ns a record, 8 % of redaction on
 * the bench's batches (issue 17). Joined, the whole column is compared with the first value
 * repeated in one call: the same verdict exactly. Compiled per kind, as the gatherers are, so that
 * the field is read by name.
 */
type AllSame = (recs: readonly Record<string, unknown>[]) => string | undefined;
function compileAllSame(f: string): AllSame {
  const at = JSON.stringify(f);
  return new Function(
    'recs',
    `const first = recs[0][${at}];
if (typeof first !== 'string') return undefined;
const col = new Array(recs.length);
for (let i = 0; i < recs.length; i++) {
  const v = recs[i][${at}];
  if (typeof v !== 'string' || v.length !== first.length) return undefined;
  col[i] = v;
}
return col.join('') === first.repeat(recs.length) ? first : undefined;`,
  ) as AllSame;
}
const ALL_SAME = Object.fromEntries(Object.entries(REPEATS).map(([k, f]) => [k, f[0] === undefined ? undefined : compileAllSame(f[0])])) as Record<Kind, AllSame | undefined>;

export class RedactionEngine {
  private readonly rules: Array<Rule | UserRule>;
  private readonly allow: Set<string>;
  private readonly userPatterns: UserPattern[];
  private readonly tally = new Map<string, number>();
  /** repeated strings the pre-filter found nothing in (markShared) */
  private readonly clean: string[] = [];
  /** keyInfo's answers: an object key's flags and whether its own text may hold a secret */
  private readonly keys = new Map<string, number>();
  /** collect over this engine's keyInfo, made once: the gatherers call it for every object field */
  private readonly collectText: Collect = (v, out, depth) => collect(v, out, depth, this.keyInfoFn);
  private readonly keyInfoFn = (k: string): number => this.keyInfo(k);

  /**
   * `builtins: false` is the read-time engine (src/domain/redaction/read-rules.ts): only the user
   * rules, over text the built-in rules already redacted at ingest, so nothing built-in runs twice.
   */
  constructor(
    private readonly config: z.output<typeof RedactionConfigSchema>,
    private readonly builtins = true,
  ) {
    // user patterns run on the linear-time engine (src/domain/patterns/user-pattern.ts), never on V8
    const user: UserRule[] = config.rules.map((r) => {
      try {
        return userRule(r);
      } catch (e) {
        if (e instanceof UserRuleError) throw new RedactionConfigError(e.message, e.code);
        throw e;
      }
    });
    this.rules = builtins ? [...user, ...BUILTIN_RULES] : user;
    this.allow = new Set(config.allowlist);
    this.userPatterns = user.map((r) => r.pattern);
  }

  /** Could any rule match? A keyword alone ("token expired") triggers, but no rule fires on it. */
  private mayHold(s: string): boolean {
    for (const p of this.userPatterns) if (p.test(s)) return true;
    return this.builtins && mayTrigger(s);
  }

  /** Does the text hold a base64 run whose decoding holds a secret? */
  private encodedSecret(s: string): boolean {
    let found = false;
    eachRun(s, (a, b, capped) => (found = capped || this.decodedHolds(s.slice(a, b))));
    return found;
  }

  /** The rules, one level down: a run inside a decoded run is not decoded again. */
  private decodedHolds(run: string): boolean {
    const d = decodeRun(run);
    return d !== null && ((this.builtins && isUserPassword(d)) || this.applyRules(d, null, false) !== d);
  }

  /**
   * Which records of one kind may hold a secret (1): a superset, so the others can be stored
   * as they are. One pass over the batch's joined text instead of one per record: the scans
   * are memchr-fast over a long string, and a call per record would cost more than the scan.
   */
  triggered(kind: Kind, recs: readonly Record<string, unknown>[]): Uint8Array {
    const n = recs.length;
    const hit = new Uint8Array(n);
    const starts = new Int32Array(n);
    const parts: string[] = [];
    const allSame = ALL_SAME[kind];
    // one page URL throughout (the common batch): looked at once, in `shared`, for every record
    const same = allSame !== undefined && n > 1 ? allSame(recs) : undefined;
    const gather = same === undefined ? GATHER[kind] : GATHER_BUT_REPEAT[kind];
    const fields = TEXT_FIELDS[kind].length;
    // A string field that repeats the previous record's is looked at once, on its own, in a second
    // text (`shared`); each record that repeats it takes that verdict. The same string gets the same
    // verdict wherever it sits: the rules apply field by field, and the pre-filter reads a field
    // the same between the same '\n' boundaries. What only its neighbours in the record could add
    // (a match across two fields, runs counted per record) no rule applies to.
    const last: unknown[] = new Array<unknown>(fields);
    const slot = new Int32Array(fields).fill(-1);
    const shared: string[] = [];
    /** pairs: record, index in `shared` */
    const uses: number[] = [];
    let at = 0;
    for (let i = 0; i < n; i++) {
      starts[i] = at;
      const from = parts.length;
      const rec = recs[i]!;
      if (gather(rec, i, parts, this.collectText, last, slot, shared, uses)) hit[i] = 1;
      // the argument list glued together goes through the same one scan: a token split in two
      if (Array.isArray(rec.args)) {
        if (hasLabel(rec.args)) hit[i] = 1;
        const glued = joinedArgs(rec.args);
        if (glued !== null) parts.push(glued);
      }
      for (let p = from; p < parts.length; p++) at += parts[p]!.length + 1;
      if (parts.length === from) {
        parts.push('');
        at += 1;
      }
    }
    this.mark(parts.join('\n'), starts, hit);
    if (same !== undefined) {
      if (this.markShared([same])?.[0] === 1) hit.fill(1);
    } else if (shared.length) {
      const sharedHit = this.markShared(shared);
      if (sharedHit !== null) for (let u = 0; u < uses.length; u += 2) if (sharedHit[uses[u + 1]!] === 1) hit[uses[u]!] = 1;
    }
    return hit;
  }

  /**
   * The verdicts for the repeated strings, each looked at alone; null when none may hold a secret.
   * The page URL repeats from batch to batch as well: a string found clean is remembered (the
   * last CLEAN_KEPT, each ≤ CLEAN_MAX characters), and its verdict is the same next time, since
   * it depends on nothing but the string and this engine's rules, which never change.
   */
  private markShared(shared: string[]): Uint8Array | null {
    const m = shared.length;
    const look: string[] = [];
    const at: number[] = [];
    for (let k = 0; k < m; k++) {
      const v = shared[k]!;
      if (!this.clean.includes(v)) {
        look.push(v);
        at.push(k);
      }
    }
    if (look.length === 0) return null;
    const starts = new Int32Array(look.length);
    for (let k = 1; k < look.length; k++) starts[k] = starts[k - 1]! + look[k - 1]!.length + 1;
    const lookHit = new Uint8Array(look.length);
    this.mark(look.join('\n'), starts, lookHit);
    const sharedHit = new Uint8Array(m);
    for (let k = 0; k < look.length; k++) {
      if (lookHit[k] === 1) sharedHit[at[k]!] = 1;
      else if (look[k]!.length <= CLEAN_MAX) {
        if (this.clean.length >= CLEAN_KEPT) this.clean.shift();
        this.clean.push(look[k]!);
      }
    }
    return sharedHit;
  }

  /** Every check of the pre-filter over texts joined by '\n', text r starting at starts[r]. */
  private mark(text: string, starts: Int32Array, hit: Uint8Array): void {
    const n = starts.length;
    // one pass of the candidate finder for the built-in anchors and the base64 runs (a Latin-1
    // text), else the passes and the run probe; the runs are read off its list first: a run's
    // decoding goes through the rules, which may use the finder again
    const found = findCandidates(text);
    const runs = found ? candidateRuns(text, found) : undefined;
    if (found) markFound(text, starts, hit, found);
    else markByPasses(text, starts, hit);
    if (this.userPatterns.length) markUserRules(text, starts, hit, this.userPatterns);
    this.markEncoded(text, starts, hit, runs);
    // decode, then look again: only for records that hold an escape at all
    if (text.indexOf('%') >= 0 || text.indexOf('\\') >= 0) {
      for (let i = 0; i < n; i++) {
        if (hit[i] === 1) continue;
        const sub = text.slice(starts[i]!, i + 1 < n ? starts[i + 1]! - 1 : text.length);
        if ((sub.indexOf('%') >= 0 || sub.indexOf('\\') >= 0) && ENCODED.test(sub) && this.mayHoldDecoded(sub)) hit[i] = 1;
      }
    }
  }

  /**
   * encodedSecret for every record not yet marked, in one pass over the batch's text instead of one
   * call per record: a run never crosses a record ('\n' joins them and is not base64), so the runs
   * found are the same, and each record's runs are counted against MAX_RUNS on their own.
   */
  private markEncoded(text: string, starts: Int32Array, hit: Uint8Array, found?: readonly number[]): void {
    const n = starts.length;
    let r = 0;
    let runs = 0;
    const visit = (a: number, b: number): false => {
      if (r + 1 < n && starts[r + 1]! <= a) {
        while (r + 1 < n && starts[r + 1]! <= a) r++;
        runs = 0;
      }
      if (hit[r] === 1) return false;
      if (++runs > MAX_RUNS || this.decodedHolds(text.slice(a, b))) hit[r] = 1;
      return false;
    };
    // the runs the candidate finder listed (candidateRuns), or found by probing the text
    if (found) for (let k = 0; k < found.length; k += 2) visit(found[k]!, found[k + 1]!);
    else eachRun(text, visit);
  }

  private mayHoldDecoded(s: string): boolean {
    let cur = s;
    for (let round = 0; round < 3 && ENCODED.test(cur); round++) {
      const decoded = decode(cur);
      if (decoded === cur) return false;
      if (this.mayHold(decoded) || this.encodedSecret(decoded)) return true;
      cur = decoded;
    }
    return false;
  }

  listRules(): Array<{ name: string; pattern: string; builtin: boolean }> {
    return this.rules.map((r) => ({ name: r.name, pattern: 'source' in r ? r.source : r.re.source, builtin: r.builtin }));
  }

  /** A new engine with one more user rule; throws RedactionConfigError and leaves this one as it was. */
  withRule(rule: { name: string; pattern: string; replacement?: string }): RedactionEngine {
    const parsed = RedactionConfigSchema.safeParse({ ...this.config, rules: [...this.config.rules.filter((r) => r.name !== rule.name), rule] });
    if (!parsed.success) throw new RedactionConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    return new RedactionEngine(parsed.data);
  }

  withoutRule(name: string): RedactionEngine {
    if (!this.config.rules.some((r) => r.name === name)) throw new RedactionConfigError(`no user rule "${name}" (built-in rules cannot be removed)`);
    return new RedactionEngine({ ...this.config, rules: this.config.rules.filter((r) => r.name !== name) });
  }

  counts(): Record<string, number> {
    return Object.fromEntries(this.tally);
  }

  /** What a string would become, and where the secrets were. */
  test(s: string): { output: string; findings: Finding[] } {
    const findings: Finding[] = [];
    const output = this.apply(s, findings, false);
    return { output, findings };
  }

  redactText(s: string): string {
    // the shortest thing any rule redacts ("pwd=x") is 5 characters
    if (s.length < 5) return s;
    const direct = this.apply(s, null, true);
    // Decode, then match: a secret hidden by %-encoding, '+' or JSON escapes is found in a decoded
    // copy; offsets cannot be mapped back, so the decoded, redacted text replaces the original.
    // Up to three rounds: a URL inside a query parameter is encoded twice, JSON in a URL once more.
    let cur = direct;
    for (let round = 0; round < 3 && ENCODED.test(cur); round++) {
      const decoded = decode(cur);
      if (decoded === cur) break;
      const again = this.apply(decoded, null, true);
      if (again !== decoded) return again;
      cur = decoded;
    }
    return direct;
  }

  /** Deep, for any JSON value (egress of tool results, health). */
  redactValue(v: unknown, depth = 0, vars?: Set<string>): unknown {
    if (typeof v === 'string') return this.redactText(v);
    // a card number sent as a JSON number
    if (this.builtins && typeof v === 'number' && v >= 1e12 && Number.isSafeInteger(v) && isCard(String(v))) return this.count('card', '[REDACTED:card]');
    if (v === null || typeof v !== 'object') return v;
    // deeper than any real payload: nothing below is looked at, so nothing below is kept
    if (depth > 32) return this.count('depth', '[REDACTED:depth]');
    if (Array.isArray(v)) return v.map((x) => this.redactValue(x, depth + 1));
    // a GraphQL request as an object ({query, variables}, or graphql-ws's payload): the variables
    // passed to sensitive arguments (login(password: $p)) are secrets whatever they are called
    const rec = v as Record<string, unknown>;
    const gql = this.builtins && typeof rec.query === 'string' && rec.variables !== null && typeof rec.variables === 'object' ? sensitiveVariables(rec.query) : undefined;
    // a "__proto__" key (JSON.parse makes it an own property) must stay a key, not become the prototype
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, x] of Object.entries(v)) {
      const key = this.keyFor(k, out);
      // {password: "…"} as an object (console args, parsed bodies): the key says what the value is
      if (this.builtins && (typeof x === 'string' || typeof x === 'number') && (isKeyedSecret(k, x) || (vars?.has(k) === true && isSecretValue(x))) && !this.allow.has(String(x))) {
        const sv = String(x);
        const scheme = /^(Bearer|Basic|Token|Digest)\s+\S/i.exec(sv)?.[1];
        const cls = vars?.has(k) ? 'graphql_variable' : keyFlags(k) & SENSITIVE ? 'keyed_secret' : 'high_entropy';
        out[key] = scheme ? this.count(scheme.toLowerCase(), `${scheme} [REDACTED:${scheme.toLowerCase()}]`) : this.count(cls, `[REDACTED:${cls}]`);
      } else out[key] = this.redactValue(x, depth + 1, k === 'variables' && gql?.size ? gql : undefined);
    }
    return out;
  }

  /**
   * The ingest seam (src/domain/ingest/redactor.ts): every text-bearing field of a record.
   * Validated enums and numbers (level, method, status, event, …) cannot carry a secret.
   */
  redactRecord(kind: Kind, rec: Record<string, unknown>): Record<string, unknown> {
    // One trigger scan over all of the record's text instead of one per field: most records hold
    // no secret, and the per-call cost of a regex dominates on short strings.
    const parts: string[] = [];
    let keyed = false;
    for (const k of TEXT_FIELDS[kind]) keyed = this.collectText(rec[k], parts, 0) || keyed;
    keyed &&= this.builtins;
    const joined = parts.join('\n');
    // indexOf is memchr-fast; the decoded second look is only for text that has an escape at all
    const args = Array.isArray(rec.args) ? (rec.args as unknown[]) : null;
    if (!keyed && !this.mayHold(joined) && !(args && ((this.builtins && hasLabel(args)) || this.mayHold(joinedArgs(args) ?? ''))) && !this.encodedSecret(joined) && !((joined.indexOf('%') >= 0 || joined.indexOf('\\') >= 0) && ENCODED.test(joined) && this.mayHoldDecoded(joined))) return rec;
    for (const k of TEXT_FIELDS[kind]) {
      const v = rec[k];
      if (v === undefined) continue;
      if (typeof v === 'string') rec[k] = this.redactText(v);
      else if (k === 'headers' || k === 'request_headers' || k === 'response_headers') rec[k] = this.redactHeaders(v);
      else if (v !== null && typeof v === 'object') rec[k] = this.redactValue(v);
    }
    // what only the argument list shows (a label and its value, a token split in two), then the
    // same text in the message the extension built from the list
    const list = rec.args;
    if (Array.isArray(list) && list.length >= 2) {
      const found = redactArgs(list, (t) => this.applyRules(t, null, false), (cls) => this.count(cls, ''), this.builtins);
      if (found.length && typeof rec.message === 'string') rec.message = scrubMessage(rec.message, found);
    }
    return rec;
  }

  /**
   * What an object key says (keyFlags: SENSITIVE, SECRETISH, COUNTS) and KEY_TEXT when the key's
   * own text may hold a secret, so the rules run on it: a map keyed by session tokens or API keys
   * (`{ "eyJ…": {…} }`) is a secret as a key. Remembered per key, bounded: keys repeat from record
   * to record far more than values do, so a key costs one lookup, as keyFlags did alone.
   */
  private keyInfo(k: string): number {
    let f = this.keys.get(k);
    if (f === undefined) {
      f = keyFlags(k);
      // redactText leaves text shorter than 5 as it is
      if (k.length >= 5 && (this.mayHold(k) || this.encodedSecret(k) || (ENCODED.test(k) && this.mayHoldDecoded(k)))) f |= KEY_TEXT;
      if (k.length <= KEY_KEPT_MAX) {
        if (this.keys.size >= KEYS_KEPT) this.keys.clear();
        this.keys.set(k, f);
      }
    }
    return f;
  }

  /** The key an output object gets for `k`: `k` itself, or its text redacted when it holds a secret (two alike stay two). */
  private keyFor(k: string, out: Record<string, unknown>): string {
    if (!(this.keyInfo(k) & KEY_TEXT)) return k;
    const redacted = this.redactText(k);
    let key = redacted;
    if (redacted !== k) for (let n = 2; key in out; n++) key = `${redacted} #${n}`;
    return key;
  }

  private redactHeaders(h: unknown): unknown {
    if (!h || typeof h !== 'object') return h;
    // null prototype: a header named "__proto__" stays a header
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [name, value] of Object.entries(h as Record<string, unknown>)) {
      const lower = name.toLowerCase();
      const key = this.keyFor(name, out);
      if (typeof value !== 'string') out[key] = value;
      else if (!this.builtins) out[key] = this.redactText(value);
      else if (lower === 'set-cookie') out[key] = this.count('cookie', redactSetCookie(value));
      else if (lower === 'cookie') out[key] = this.count('cookie', redactCookie(value));
      // X-Session-Id, X-Refresh-Token, Sid…: a name that says "secret" (the keyed words) is as good as the list
      else if (SENSITIVE_HEADER.test(name) || isKeyedSecret(name, value)) {
        // keep the scheme so the agent still sees what kind of credential was sent
        const scheme = /^(Bearer|Basic|Token|Digest|AWS4-HMAC-SHA256)\s/i.exec(value)?.[1];
        const cls = scheme ? scheme.toLowerCase().replace(/[^a-z0-9]/g, '') : 'header';
        out[key] = this.count(cls, scheme ? `${scheme} [REDACTED:${cls}]` : '[REDACTED:header]');
      } else out[key] = this.redactText(value);
    }
    return out;
  }

  private count(cls: string, v: string): string {
    this.tally.set(cls, (this.tally.get(cls) ?? 0) + 1);
    return v;
  }

  private applySpans(s: string, spans: Array<{ start: number; end: number; cls: string }>, findings: Finding[] | null, tally: boolean, replacement?: string): string {
    if (spans.length === 0) return s;
    let out = '';
    let at = 0;
    for (const sp of spans) {
      const secret = s.slice(sp.start, sp.end);
      if (secret.includes(MARK) || this.allow.has(secret)) continue;
      const label = replacement ?? `[REDACTED:${sp.cls}]`;
      out += s.slice(at, sp.start);
      findings?.push({ class: sp.cls, start: sp.start, end: sp.end });
      if (tally) this.tally.set(sp.cls, (this.tally.get(sp.cls) ?? 0) + 1);
      out += label;
      at = sp.end;
    }
    return out + s.slice(at);
  }

  /** The rules, then the base64 runs of what is left (already redacted spans are not runs). */
  private apply(s: string, findings: Finding[] | null, tally: boolean): string {
    const out = this.applyRules(s, findings, tally);
    let at = 0;
    let res = '';
    eachRun(out, (a, b, capped) => {
      if (!capped && !this.decodedHolds(out.slice(a, b))) return false;
      findings?.push({ class: 'base64_secret', start: a, end: b });
      if (tally) this.tally.set('base64_secret', (this.tally.get('base64_secret') ?? 0) + 1);
      res += `${out.slice(at, a)}[REDACTED:base64_secret]`;
      at = b;
      return false;
    });
    return at === 0 ? out : res + out.slice(at);
  }

  private applyRules(s: string, findings: Finding[] | null, tally: boolean): string {
    if (!this.mayHold(s)) return s;
    let out = s;
    for (const rule of this.rules) {
      if (rule.scan) {
        out = this.applySpans(out, rule.scan(out), findings, tally, (rule as UserRule).replacement);
        continue;
      }
      rule.re.lastIndex = 0;
      if (!rule.re.test(out)) continue;
      rule.re.lastIndex = 0;
      out = out.replace(rule.re, (...args: unknown[]) => {
        const match = args[0] as string;
        const offset = args[args.length - 3] as number;
        const groups = args[args.length - 1] as Record<string, string | undefined> | string;
        const g = typeof groups === 'object' && groups ? groups : {};
        const secret = g.s ?? g.q ?? g.q2 ?? match;
        if (secret.startsWith(MARK) || secret.includes(MARK) || this.allow.has(secret)) return match;
        if (rule.verify && !rule.verify(secret)) return match;
        const at = match.lastIndexOf(secret);
        const label = (rule as UserRule).replacement ?? `[REDACTED:${rule.name}]`;
        if (tally) this.tally.set(rule.name, (this.tally.get(rule.name) ?? 0) + 1);
        findings?.push({ class: rule.name, start: offset + at, end: offset + at + secret.length });
        return `${match.slice(0, at)}${label}${match.slice(at + secret.length)}`;
      });
    }
    return out;
  }
}

/** Gathers the text of a field; true when an object key names a secret (or the value is too deep to look at). */
function collect(v: unknown, out: string[], depth: number, keyInfo: (k: string) => number): boolean {
  if (typeof v === 'string') out.push(v);
  else if (v !== null && typeof v === 'object') {
    if (depth >= 32) return true;
    let keyed = false;
    // a string or a number (most values) is handled here, not by a call that returns at once
    if (Array.isArray(v))
      for (const x of v) {
        if (typeof x === 'string') out.push(x);
        else if (x !== null && typeof x === 'object') keyed = collect(x, out, depth + 1, keyInfo) || keyed;
      }
    else
      // a key's own text is pushed only when it may hold a secret (keyInfo, remembered per key):
      // most keys are names (id, ok, role) that were most of an argument list's parts
      for (const k of Object.keys(v)) {
        const x = (v as Record<string, unknown>)[k];
        const f = keyInfo(k);
        if (f & KEY_TEXT) out.push(k);
        // a secret-ish name (appKey) counts only with a value long enough to be shaped like a secret
        if (f & SENSITIVE || (f & SECRETISH && typeof x === 'string' && x.length >= MIN_MIXED)) keyed = true;
        if (typeof x === 'string') out.push(x);
        else if (x !== null && typeof x === 'object') keyed = collect(x, out, depth + 1, keyInfo) || keyed;
      }
    return keyed;
  }
  return false;
}

function decode(s: string): string {
  let out = s.replace(/\\u([0-9A-Fa-f]{4})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))).replace(/\\\//g, '/');
  out = out.replace(/\+/g, ' ');
  try {
    out = decodeURIComponent(out);
  } catch {
    out = out.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
  return out;
}

/** Compiles the one rule set; fails closed with a message naming the bad rule. */
export function compileRedaction(config: RedactionConfig = {}): RedactionEngine {
  const parsed = RedactionConfigSchema.safeParse(config);
  if (!parsed.success) throw new RedactionConfigError(`redaction config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return new RedactionEngine(parsed.data);
}

/**
 * The engine reads apply (src/domain/redaction/read-rules.ts): the given user rules only, each
 * already accepted by the live engine, over text the built-in rules redacted at ingest.
 */
export function compileUserOnly(config: RedactionConfig): RedactionEngine {
  const parsed = RedactionConfigSchema.safeParse(config);
  if (!parsed.success) throw new RedactionConfigError(`redaction config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return new RedactionEngine(parsed.data, false);
}
