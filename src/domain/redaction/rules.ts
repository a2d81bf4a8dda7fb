/**
 * The built-in rule set. Every pattern is linear on hostile input: no nested or overlapping
 * unbounded quantifiers, bounded repetition where a pattern could restart at every position.
 * Order matters: structured values first, key/value context next, the generic rule last.
 */
import { scanKeyed, type Span } from './keyed.js';
import { scanGraphql } from './graphql.js';
import { scanPairs } from './pairs.js';

export interface Rule {
  name: string;
  /** global regex; group `s` (or the whole match) is the secret */
  re: RegExp;
  /** extra check on the candidate (Luhn, entropy); false = not a secret */
  verify?: (secret: string) => boolean;
  /** a scanner used instead of `re` (which then never matches); spans are the secrets */
  scan?: (s: string) => Span[];
  builtin: boolean;
}

/** Base64 of "user:password" (text only; an Authorization header is redacted whatever it holds). */
function basicCredential(v: string): boolean {
  if (/\d/.test(v) && v.length >= 16) return true;
  const d = Buffer.from(v, 'base64').toString('latin1');
  return d.includes(':') && /^[\x20-\x7e]+$/.test(d);
}

export function luhn(digits: string): boolean {
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

/** Issuer ranges and lengths: Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay. */
function cardIssuer(d: string): boolean {
  const n = d.length;
  if (/^4/.test(d)) return n === 13 || n === 16 || n === 19;
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(d)) return n === 16;
  if (/^3[47]/.test(d)) return n === 15;
  if (/^(6011|65|64[4-9])/.test(d)) return n >= 16 && n <= 19;
  if (/^35(2[89]|[3-8])/.test(d)) return n >= 16 && n <= 19;
  if (/^3(0[0-5]|[689])/.test(d)) return n >= 14 && n <= 19;
  if (/^62/.test(d)) return n >= 16 && n <= 19;
  return false;
}

export function isCard(candidate: string): boolean {
  const d = candidate.replace(/[ -]/g, '');
  return d.length >= 13 && d.length <= 19 && cardIssuer(d) && luhn(d);
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const looksRandom = (s: string): boolean => s.length >= 16 && entropy(s) >= 3.3 && /\d/.test(s) && /[a-zA-Z]/.test(s);

export const BUILTIN_RULES: Rule[] = [
  // the body runs to the END line or, when the key was cut short (a truncated log), as far as
  // it goes; [^-] and '-' not starting '----' cannot overlap, so this is linear
  { name: 'private_key', re: /-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY( BLOCK)?-----(?:[^-]|-(?!----)){0,20000}(?:-----END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY( BLOCK)?-----)?/g },
  { name: 'jwt', re: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g },
  // "Bearer authentication" is prose: a credential is not a lowercase word
  { name: 'bearer', re: /\b(?:[Bb]earer|BEARER)\s+(?<s>[A-Za-z0-9._~+/=-]{8,})/g, verify: (v: string) => !/^[a-z]+$/.test(v) },
  { name: 'basic', re: /\b(?:[Bb]asic|BASIC)\s+(?<s>[A-Za-z0-9+/]{8,}={0,2})/g, verify: basicCredential },
  // the user may be empty: redis://:password@host
  { name: 'url_userinfo', re: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s/?#:@"']{0,200}:(?<s>[^\s/?#@"']{1,200})@/gi },
  // Oracle's JDBC thin form: jdbc:oracle:thin:scott/tiger@//host:1521/svc
  { name: 'oracle_userinfo', re: /\bjdbc:oracle:[a-z]{1,10}:[^\s/@:"']{1,128}\/(?<s>[^\s/@"']{1,200})@/g },
  { name: 'aws_access_key', re: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/g },
  { name: 'aws_secret_key', re: /(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?\s{0,5}[:=]\s{0,5}["']?(?<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi },
  { name: 'github_token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})/g },
  { name: 'gitlab_token', re: /\bglpat-[A-Za-z0-9_-]{20,64}/g },
  { name: 'slack_token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,200}/g },
  { name: 'slack_webhook', re: /hooks\.slack\.com\/(?:services|workflows)\/(?<s>[A-Za-z0-9_/]{10,200})/g },
  { name: 'stripe_key', re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,128}/g },
  { name: 'anthropic_key', re: /\bsk-ant-[A-Za-z0-9_-]{20,255}/g },
  { name: 'openai_key', re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}/g },
  { name: 'google_api_key', re: /\bAIza[0-9A-Za-z_-]{35}/g },
  { name: 'npm_token', re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: 'sendgrid_key', re: /\bSG\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{16,64}/g },
  // key/value secrets (JSON keys at any depth, query and form fields, header lines, escaped JSON): a scanner
  { name: 'keyed_secret', re: /(?!)/g, scan: scanKeyed },
  // a GraphQL variable passed to a sensitive argument: login(password: $p) … "variables": {"p": "…"}
  { name: 'graphql_variable', re: /(?!)/g, scan: scanGraphql },
  // name=value with a name that says nothing and a value shaped like a credential: ?appid=…, &sig=…
  { name: 'high_entropy', re: /(?!)/g, scan: scanPairs },
  { name: 'card', re: /(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])/g, verify: isCard },
  { name: 'generic_secret', re: /(?<![A-Za-z0-9])(?:key|secret|token|password|passwd|pwd)[A-Za-z0-9_-]{0,20}["']?\s{0,5}[:=]\s{0,5}["']?(?<s>[A-Za-z0-9+/_=.-]{16,512})/gi, verify: (v: string) => looksRandom(v) && !/^pk_(?:live|test)_/.test(v) },
].map((r) => ({ ...r, builtin: true }));

/**
 * One cheap pass tells whether any rule could match; most telemetry holds no secret. It is a
 * superset of the rules (a keyword counts only when a ':' or '=' follows it, as the keyed
 * rules require), kept short because its cost grows with its alternatives; case variants are
 * spelled out because the case-insensitive flag costs ~20 % here.
 */
export const TRIGGER = /PRIVATE KEY|eyJ|[Bb]earer |BEARER |[Bb]asic |BASIC |:\/\/[^\s/@]{1,200}@|A[KSGIRNP][IS][ADAP][0-9A-Z]{16}|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|[sr]k_(?:live|test)_|sk-|AIza|npm_|SG\.|jdbc:oracle:[a-z]{1,10}:[^\s/@:"']{1,128}\/[^\s/@"']{1,200}@|(?:[Kk]ey|KEY|[Ss]ecret|SECRET|[Tt]oken|TOKEN|[Pp]ass|PASS|[Pp]w|PW|[Pp]sw|PSW|[Pp]in|PIN|[Aa]uth|AUTH|[Cc]red|CRED|[Ss]ess|SESS|[Ss]id|SID|[Ss]ig|SIG|[Jj]wt|JWT|[Oo]tp|OTP|[Cc]ookie|COOKIE|[Aa]ppid|APPID|[Hh]mac|HMAC)[A-Za-z0-9_.$-]{0,24}\\{0,8}["']?\s{0,5}[:=]|[A-Za-z0-9_.$-]=[A-Za-z0-9+/=_.~%-]{22}|[2-6]\d{3}[ -]?\d{4}[ -]?\d{2}/;

/** Header names whose values are credentials whatever they look like. */
export const SENSITIVE_HEADER = /^(?:authorization|proxy-authorization|x-api-key|x-auth-token|x-csrf-token|x-xsrf-token)$|token|secret|password|api-?key|auth/i;
