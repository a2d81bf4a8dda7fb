/**
 * Key/value secrets: `"accessToken": "…"`, `password=…`, `X-Auth-Token: …`, `\"pwd\":\"…\"`.
 * A hand-written scanner instead of one big regex: a cheap keyword search finds candidate
 * identifiers, the identifier is classified by its words (so `access_token`, `accessToken`,
 * `clientsecret`, `db_password` are secrets and `token_type`, `max_tokens`, `author`,
 * `secretary` are not), then the value after `:` or `=` is read with bounded loops. Every
 * character is looked at a bounded number of times: linear on hostile input.
 */
import { secretShaped } from './shape.js';

/** A word (or the end of an all-lowercase compound word) that names a secret. */
const SENSITIVE_WORDS = new Set([
  'password', 'passwd', 'passphrase', 'passcode', 'pincode', 'pwd', 'pswd', 'secret', 'token', 'credential', 'credentials', 'auth', 'authorization',
  'apikey', 'privatekey', 'accesskey', 'secretkey', 'sessionid', 'sessid', 'sid', 'session', 'jwt', 'cookie', 'otp',
]);
/**
 * Short password words that are secrets only as the last word of a name (`pass`, `db_pass`,
 * `userPin`, `pw`), so that `pass_through`, `pin_position` and `pinned` are not (#20 item 1).
 */
const WEAK_LAST = new Set(['pass', 'pin', 'pw', 'psw', 'pword']);
/** Of those, the ones whose all-digit unquoted value is a count, not a password: `"pass": 1200` in test results. */
const COUNT_WORDS = new Set(['pass', 'pw']);
/** Compound words that end like these are secrets too: accesstoken, newpassword, clientsecret, xauthtoken. */
const SENSITIVE_ENDINGS = ['password', 'passwd', 'passphrase', 'passcode', 'pincode', 'secret', 'token', 'credential', 'credentials', 'apikey', 'privatekey', 'sessionid', 'sessid', 'sessiontoken'];
/** Word pairs: api key, private key, access key, signing key, … */
const KEY_QUALIFIERS = new Set(['api', 'private', 'access', 'secret', 'signing', 'encryption', 'master', 'license', 'client', 'session', 'auth']);
/**
 * Last words of names whose value is a secret when it is shaped like one (shape.ts): `appKey`,
 * `AccountKey`, `signature`, `sig`, `hmac`, `appid` (#20 item 1). A key name alone says too little
 * (`key: "user-prefs"`, `signature: "f(a, b)"`), a random-looking value under it says enough.
 */
const SECRETISH_LAST = new Set(['key', 'keys', 'sig', 'signature', 'signatures', 'hmac', 'appid', 'appkey']);
/** A last word that makes the name describe a secret instead of holding one: token_type, session_timeout. */
const DESCRIPTIVE_LAST = new Set([
  'type', 'types', 'count', 'counts', 'limit', 'limits', 'length', 'len', 'expires', 'expiry', 'expiration', 'exp', 'at', 'in', 'url', 'uri',
  'endpoint', 'name', 'names', 'kind', 'mode', 'field', 'header', 'policy', 'required', 'enabled', 'disabled', 'valid', 'ttl', 'timeout',
  'lifetime', 'max', 'min', 'size', 'usage', 'used', 'version', 'hint', 'label', 'strength', 'format', 'method', 'methods', 'provider',
  'scheme', 'status', 'state', 'error', 'errors', 'present', 'set', 'changed', 'reset', 'policy', 'rules', 'placeholder', 'visible', 'icon',
  'hidden', 'input', 'button', 'link', 'page', 'path', 'route', 'storage', 'store', 'manager', 'service', 'index', 'duration', 'age',
  // mongodb's authSource=admin, authMechanism=SCRAM-SHA-256
  'source', 'mechanism',
]);

/** what a name says about its value: bit flags, cached */
export const SENSITIVE = 1;
export const SECRETISH = 2;
/** an all-digit unquoted value under it is a count (`pass: 12`) */
export const COUNTS = 4;

const splitCache = new Map<string, number>();

/** SENSITIVE | SECRETISH | COUNTS for a JSON key, query/form field, header or variable name. */
export function keyFlags(name: string): number {
  if (name.length === 0 || name.length > 64) return 0;
  const hit = splitCache.get(name);
  if (hit !== undefined) return hit;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((w) => w.replace(/[0-9]+$/, ''))
    .filter((w) => w.length > 0);
  let sensitive = false;
  for (let i = 0; i < words.length && !sensitive; i++) {
    const w = words[i] as string;
    if (SENSITIVE_WORDS.has(w)) sensitive = true;
    else if (w === 'key' && i > 0 && KEY_QUALIFIERS.has(words[i - 1] as string)) sensitive = true;
    else if (w.length > 5) for (const end of SENSITIVE_ENDINGS) if (w.endsWith(end) && w.length > end.length) sensitive = true;
  }
  const last = words[words.length - 1] ?? '';
  if (WEAK_LAST.has(last)) sensitive = true;
  if (sensitive && words.length > 1 && DESCRIPTIVE_LAST.has(last)) sensitive = false;
  let flags = sensitive ? SENSITIVE | SECRETISH : 0;
  // publishableKey, publicKey, vapidPublicKey: public by design
  const shown = words.some((w) => w === 'public' || w === 'publishable' || w.startsWith('publickey') || w.startsWith('publishablekey'));
  if (!shown && (SECRETISH_LAST.has(last) || (last.length > 4 && last.endsWith('key')) || (last === 'id' && words[words.length - 2] === 'app'))) flags |= SECRETISH;
  if (COUNT_WORDS.has(last)) flags |= COUNTS;
  if (splitCache.size > 4096) splitCache.clear();
  splitCache.set(name, flags);
  return flags;
}

/** Is `name` (a JSON key, query/form field, header or variable name) one that holds a secret whatever it looks like? */
export function isSensitiveKey(name: string): boolean {
  return (keyFlags(name) & SENSITIVE) !== 0;
}

/** Values after a sensitive key that are words about the secret, not the secret. */
const NOT_A_VALUE = /^(?:null|undefined|none|nil|true|false|yes|no|ok|on|off|empty|missing|required|invalid|expired|present|set|unset|redacted|hidden|\*+|x+|\.+|-+|0|1)$/i;

/** Would a value stored under a sensitive key be a secret (not null, a flag or a placeholder)? */
export function isSecretValue(v: string | number): boolean {
  const s = String(v);
  if (typeof v === 'number' && s.length < 4) return false;
  return s.length > 0 && !s.startsWith('[REDACTED') && !NOT_A_VALUE.test(s);
}

/** The value under key `k` of an object (console arguments, parsed bodies, headers): is it a secret? */
export function isKeyedSecret(k: string, v: string | number): boolean {
  const f = keyFlags(k);
  if (f === 0) return false;
  if (f & SENSITIVE) return isSecretValue(v) && !(f & COUNTS && typeof v === 'number');
  return typeof v === 'string' && !v.startsWith('[REDACTED') && secretShaped(v);
}

export interface Span {
  start: number;
  end: number;
  cls: string;
}

const KEYWORD = /pass|pw|psw|pin|secret|token|auth|cred|sess|sid|sig|key|jwt|cookie|otp|appid|hmac/gi;
const isIdent = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46 || c === 36;
const isSpace = (c: number): boolean => c === 32 || c === 9;
/** end of an unquoted value: whitespace, & , ; } ] < > " ' ) and the escape backslash */
export const isValueEnd = (c: number): boolean => c <= 32 || c === 38 || c === 44 || c === 59 || c === 125 || c === 93 || c === 60 || c === 62 || c === 34 || c === 39 || c === 41 || c === 92;
/** end of a value in an ADO/ODBC/JDBC connection string: `;`, a line break, a quote (`Password=my pass word;`) */
const isConnEnd = (c: number): boolean => c === 59 || c === 10 || c === 13 || c === 34 || c === 39 || c === 92;
const MAX_VALUE = 4096;

/** s[vs, ve) is a comma between two list items, with optional spaces: `, ` or `,` */
function isListGap(s: string, vs: number, ve: number): boolean {
  if (ve - vs > 8) return false;
  let comma = false;
  for (let j = vs; j < ve; j++) {
    const c = s.charCodeAt(j);
    if (c === 44) comma = true;
    else if (!isSpace(c)) return false;
  }
  return comma;
}

/** Is the key starting at `l` a pair of a `;`-separated connection string (`…;Password=`)? */
function inConnString(s: string, l: number): boolean {
  let j = l - 1;
  for (let k = 0; k < 5 && j >= 0 && isSpace(s.charCodeAt(j)); k++) j--;
  return j >= 0 && s.charCodeAt(j) === 59;
}

export interface ValueSpan {
  vs: number;
  ve: number;
  quoted: boolean;
}

/**
 * The value that starts at `i` (after the separator and its spaces): quoted (plainly or escaped
 * once or more), an ODBC `{…}`, the rest of a connection-string pair, or a bare word. Null for an
 * object or array (its own keys are looked at) or nothing. `open` is the key's quote, to find the
 * value of `["password:", "hunter2"]`.
 */
export function readValue(s: string, i: number, sep: number, conn: boolean): ValueSpan | null {
  let vs = i;
  let ve = i;
  const c = s.charCodeAt(i);
  let quoted = false;
  let vb = 0;
  while (vb < 8 && s.charCodeAt(i + vb) === 92) vb++;
  if (vb > 0 && s.charCodeAt(i + vb) === 34) {
    // \"value\" — JSON inside a JSON string (escaped once or more)
    vs = i + vb + 1;
    // bounded search: an unclosed quote must not make every later key rescan the rest of the text
    const close = s.slice(vs, vs + MAX_VALUE + vb + 1).indexOf(s.slice(i, vs));
    ve = close < 0 ? Math.min(s.length, vs + MAX_VALUE) : vs + close;
    quoted = true;
  } else if (c === 34 || c === 39) {
    vs = i + 1;
    ve = vs;
    const lim = Math.min(s.length, vs + MAX_VALUE);
    while (ve < lim) {
      const d = s.charCodeAt(ve);
      if (d === c || d === 10) break;
      ve += d === 92 ? 2 : 1;
    }
    ve = Math.min(ve, s.length);
    quoted = true;
  } else if (c === 123 && sep === 61) {
    // ODBC `PWD={p;ss w0rd}`: braces quote a value, `}}` is a literal brace
    vs = i + 1;
    ve = vs;
    const lim = Math.min(s.length, vs + MAX_VALUE);
    while (ve < lim) {
      const d = s.charCodeAt(ve);
      if (d === 10) break;
      if (d === 125) {
        if (s.charCodeAt(ve + 1) !== 125) break;
        ve++;
      }
      ve++;
    }
    quoted = true;
  } else if (c === 123 || c === 91) {
    return null; // an object or array: its own keys are looked at
  } else if (conn && sep === 61) {
    const lim = Math.min(s.length, vs + MAX_VALUE);
    while (ve < lim && !isConnEnd(s.charCodeAt(ve))) ve++;
    while (ve > vs && isSpace(s.charCodeAt(ve - 1))) ve--;
  } else {
    const lim = Math.min(s.length, vs + MAX_VALUE);
    while (ve < lim && !isValueEnd(s.charCodeAt(ve))) ve++;
    // "Authorization: Bearer abc" unquoted: the credential is the next word
    if (s.charCodeAt(ve) === 32 && /^(?:bearer|basic|token|digest)$/i.test(s.slice(vs, ve))) {
      let j = ve;
      while (j < ve + 5 && s.charCodeAt(j) === 32) j++;
      let je = j;
      const jl = Math.min(s.length, j + MAX_VALUE);
      while (je < jl && !isValueEnd(s.charCodeAt(je))) je++;
      if (je > j) ve = je;
    }
  }
  // `["password:", "hunter2"]` (a console argument list, JSON-quoted at any depth): the quote
  // after the ':' closes the label and what it "quotes" is the `, ` between two items; the
  // value is the next item (#18 item 3: this redacted the `","` and kept the password)
  if (quoted && isListGap(s, vs, ve) && s.startsWith(s.slice(i, i + vb + 1), ve)) {
    const open = s.slice(i, i + vb + 1);
    vs = ve + open.length;
    const close = s.slice(vs, vs + MAX_VALUE + open.length).indexOf(open);
    ve = close < 0 ? Math.min(s.length, vs + MAX_VALUE) : vs + close;
  }
  return ve > vs ? { vs, ve, quoted } : null;
}

/** `i` past the spaces and the `:` or `=` after a key ending at `r` (its closing quote may be escaped); -1 if none */
export function separatorAfter(s: string, r: number): number {
  let i = r;
  // closing quote of the key: plain, or escaped once or more (JSON inside JSON inside JSON)
  let b = 0;
  while (b < 8 && s.charCodeAt(i + b) === 92) b++;
  if (s.charCodeAt(i + b) === 34 || s.charCodeAt(i + b) === 39) i += b + 1;
  let k = 0;
  while (k < 5 && isSpace(s.charCodeAt(i))) i++, k++;
  const sep = s.charCodeAt(i);
  if (sep !== 58 && sep !== 61) return -1;
  // `x == y`, `a => b`, `::` are code, not assignments
  const next = s.charCodeAt(i + 1);
  if (next === 61 || next === 62 || (sep === 58 && next === 58)) return -1;
  return i;
}

/** The span to redact for the value read at `v` (scheme kept, placeholders skipped), or null. */
export function secretSpan(s: string, v: ValueSpan, sep: number, flags: number): Span | null {
  let vs = v.vs;
  let value = s.slice(vs, v.ve);
  // keep the scheme: "Authorization": "Bearer …"
  const scheme = /^(Bearer|Basic|Token|Digest)\s+/i.exec(value);
  let cls = 'keyed_secret';
  if (scheme) {
    vs += scheme[0].length;
    value = value.slice(scheme[0].length);
    cls = scheme[1]!.toLowerCase();
    if (value.length === 0) return null;
  }
  if (NOT_A_VALUE.test(value)) return null;
  if (!(flags & SENSITIVE)) {
    // a secret-ish name (appKey, signature): only a value shaped like a credential
    if (!secretShaped(value)) return null;
    cls = 'high_entropy';
  }
  // unquoted short values after ':' in prose ("session: 3") are rarely secrets
  if (!v.quoted && sep === 58 && value.length < 4) return null;
  // `"pass": 1200` in a test report counts passes
  if (!v.quoted && flags & COUNTS && /^\d+$/.test(value)) return null;
  return { start: vs, end: v.ve, cls };
}

/** Spans (value only) of every `<sensitive key> [:=] <value>` in `s`, in order, not overlapping. */
export function scanKeyed(s: string): Span[] {
  const spans: Span[] = [];
  KEYWORD.lastIndex = 0;
  let m: RegExpExecArray | null;
  let after = 0;
  while ((m = KEYWORD.exec(s)) !== null) {
    let l = m.index;
    if (l < after) continue;
    let r = l + m[0].length;
    const lmin = Math.max(after, l - 64);
    while (l > lmin && isIdent(s.charCodeAt(l - 1))) l--;
    const rmax = Math.min(s.length, r + 64);
    while (r < rmax && isIdent(s.charCodeAt(r))) r++;
    KEYWORD.lastIndex = r;
    // the identifier must be followed (after an optional closing quote, escaped or not) by : or =
    const i = separatorAfter(s, r);
    if (i < 0) continue;
    const sep = s.charCodeAt(i);
    // strip leading/trailing separators: "-x-auth-token" or ".password"
    const name = s.slice(l, r).replace(/^[-.$]+|[-.$]+$/g, '');
    const flags = keyFlags(name);
    if (flags === 0) continue;
    // "Cookie: a=1; sid=…" in text: the cookie names inside say which values are secrets
    if (/^(?:set-)?cookie$/i.test(name)) continue;
    let j = i + 1;
    for (let k = 0; k < 5 && isSpace(s.charCodeAt(j)); k++) j++;
    const v = readValue(s, j, sep, inConnString(s, l));
    if (v === null) continue;
    if (s.startsWith('[REDACTED', v.vs)) {
      after = v.ve;
      continue;
    }
    const span = secretSpan(s, v, sep, flags);
    if (span === null) continue;
    spans.push(span);
    after = v.ve;
    KEYWORD.lastIndex = v.ve;
  }
  return spans;
}
