/**
 * The pre-filter in front of the rules: "could any built-in rule match this text?", answered for
 * a whole batch of records in one pass over their joined text.
 *
 * Its verdict is a superset of the TRIGGER regex (rules.ts), which stays the specification; a test
 * compares the two on the corpus and on random strings. TRIGGER is one alternation of ~30 branches
 * with no common first character, so V8's regex engine tries every branch at every position
 * (~7 ns a byte, two thirds of the engine's cost on clean traffic). Here every branch is anchored
 * on a character that is rare in ordinary text (':', '=', '@', '_', '-', '.', 'J') found with
 * indexOf, which is memchr-fast, and confirmed by looking a few characters back; the branches
 * without such an anchor are short regexes that V8 can skip through quickly.
 */

import { BEYOND_LATIN1 } from './base64.js';
import { KIND_ANCHOR, KIND_CARD_RUN, scanCandidates, type Candidates } from './prefilter-scan.js';

/** [0-9A-Z]: the 16 characters after an AWS key id's four-letter prefix */
const UPPER_DIGIT = new Uint8Array(128);
for (const c of '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ') UPPER_DIGIT[c.charCodeAt(0)] = 1;
const CARD_DIGITS = /[2-6]\d{3}[ -]?\d{4}[ -]?\d{2}/g;

/** [A-Za-z0-9_.$-]: the characters allowed between a keyword and its ':' or '=' */
const ID = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$-') ID[c.charCodeAt(0)] = 1;

/** keywords of TRIGGER's key/value branch, lower case; 'pass' covers pass[wp], 'pw' covers pwd (a superset) */
const KEYWORDS = ['key', 'secret', 'token', 'pass', 'pw', 'psw', 'pin', 'auth', 'cred', 'sess', 'sid', 'sig', 'jwt', 'otp', 'cookie', 'appid', 'hmac'].map((w) => [...w].map((c) => c.charCodeAt(0)));
/**
 * The keywords by their first two (lower-case) letters, (first << 7) | second: most positions
 * start none. A table of first letters alone sent every 's', 't', 'p', 'a' and 'c' of a file
 * name before a ':line' through the keyword loop (issue 17).
 */
const BY_PAIR: number[][][] = Array.from({ length: 128 * 128 }, () => []);
const PAIR = new Uint8Array(128 * 128);
for (const w of KEYWORDS) {
  BY_PAIR[(w[0]! << 7) | w[1]!]!.push(w);
  PAIR[(w[0]! << 7) | w[1]!] = 1;
}

/** JavaScript's `\s` (and what `trim` removes), for one UTF-16 code unit */
export function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

function isId(c: number): boolean {
  return c < 128 && ID[c] === 1;
}

/** does `word` occur at `at`, ignoring ASCII case (c | 0x20 folds A-Z and changes no other character into a-z) */
function wordAt(s: string, at: number, word: number[]): boolean {
  for (let i = 0; i < word.length; i++) if ((s.charCodeAt(at + i) | 0x20) !== word[i]) return false;
  return true;
}

function literalAt(s: string, at: number, lit: string): boolean {
  if (at < 0) return false;
  return s.startsWith(lit, at);
}

/**
 * TRIGGER's key/value branch read backwards from its ':' or '=' at `p`:
 * keyword, [A-Za-z0-9_.$-]{0,24}, \\{0,8}, an optional quote, \s{0,5}, then p.
 */
function keyedBefore(s: string, p: number): boolean {
  // the commonest colon by far: a URL's "http(s)://", which holds no keyword
  // (and a WebSocket's "ws(s)://"): no keyword is inside these words
  if (s.charCodeAt(p + 1) === 47 && urlSchemeBefore(s, p)) return false;
  let j = p - 1;
  for (let n = 0; n < 5 && j >= 0 && isSpace(s.charCodeAt(j)); n++) j--;
  if (j >= 0 && (s.charCodeAt(j) === 34 || s.charCodeAt(j) === 39)) j--;
  for (let n = 0; n < 8 && j >= 0 && s.charCodeAt(j) === 92; n++) j--;
  const end = j + 1;
  // walk back over the id characters (at most 30: a keyword of ≤ 6 ending ≤ 24 before `end`),
  // trying a keyword wherever its first two letters are; (c | 0x20) folds A-Z and keeps every id
  // character below 128, and `next` is the one after `at`, read (an id character) a step before
  let next = 0;
  for (let at = j; at >= 0 && end - at <= 30; at--) {
    const c = s.charCodeAt(at);
    if (c >= 128 || ID[c] !== 1) return false;
    const pair = ((c | 0x20) << 7) | next;
    next = c | 0x20;
    if (at < j && PAIR[pair] === 1) {
      for (const w of BY_PAIR[pair]!) if (at + w.length <= end && at + w.length >= end - 24 && wordAt(s, at, w)) return true;
    }
  }
  return false;
}

/** [A-Za-z0-9+/=_.~%-]: what a value shaped like a secret is made of (shape.ts), percent-encoded or not */
const VALUE = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_.~%-') VALUE[c.charCodeAt(0)] = 1;

/**
 * TRIGGER's name=value branch at its '=' at p: a name character before, then PAIR_VALUE value
 * characters (the shortest value pairs.ts takes). `?page=2&sort=asc` fails on the first short value.
 */
const PAIR_VALUE = 22;
function pairAt(s: string, p: number): boolean {
  if (p === 0 || !isId(s.charCodeAt(p - 1)) || p + PAIR_VALUE >= s.length) return false;
  for (let i = p + 1; i <= p + PAIR_VALUE; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || VALUE[c] !== 1) return false;
  }
  return true;
}

/**
 * "https", "http", "wss" or "ws" ends at p (its ':'), not inside a longer id: read by character
 * codes, where four startsWith calls were most of the commonest colon's cost. A charCodeAt before
 * the text's start is NaN and equals nothing.
 */
function urlSchemeBefore(s: string, p: number): boolean {
  let at: number;
  const last = s.charCodeAt(p - 1);
  // 104 h, 112 p, 115 s, 116 t, 119 w
  if (last === 115) {
    const c2 = s.charCodeAt(p - 2);
    if (c2 === 112 && s.charCodeAt(p - 3) === 116 && s.charCodeAt(p - 4) === 116 && s.charCodeAt(p - 5) === 104) at = p - 5;
    else if (c2 === 115 && s.charCodeAt(p - 3) === 119) at = p - 3;
    else if (c2 === 119) at = p - 2;
    else return false;
  } else if (last === 112 && s.charCodeAt(p - 2) === 116 && s.charCodeAt(p - 3) === 116 && s.charCodeAt(p - 4) === 104) at = p - 4;
  else return false;
  return at === 0 || !isId(s.charCodeAt(at - 1));
}

/** the prefix-token branches that end in '_' at p: gh[pousr]_, github_pat_, [sr]k_(live|test)_, npm_ */
function underscoreToken(s: string, p: number): boolean {
  if (p >= 3 && literalAt(s, p - 3, 'gh') && 'pousr'.includes(s[p - 1]!)) return true;
  if (literalAt(s, p - 10, 'github_pat')) return true;
  if (p >= 7 && (literalAt(s, p - 6, 'k_live') || literalAt(s, p - 6, 'k_test')) && (s[p - 7] === 's' || s[p - 7] === 'r')) return true;
  return literalAt(s, p - 3, 'npm');
}

/**
 * A[KSGIRNP][IS][ADAP][0-9A-Z]{16} at its 'A' at p: read by hand after an indexOf of the 'A' (a
 * quarter of a record has one), where the regex tried its first class at every position (~10 %
 * of the pre-filter on the bench's records).
 */
function awsKeyIdAt(s: string, p: number): boolean {
  if (p + 20 > s.length || !'KSGIRNP'.includes(s[p + 1]!) || !'IS'.includes(s[p + 2]!) || !'ADAP'.includes(s[p + 3]!)) return false;
  for (let i = p + 4; i < p + 20; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || UPPER_DIGIT[c] !== 1) return false;
  }
  return true;
}

/** ... that end in '-' at p: glpat-, xox[abposr]-, sk- */
function dashToken(s: string, p: number): boolean {
  // by the letter before the '-' (k: sk, t: glpat, else xox?), one character code for most dashes
  const c = s.charCodeAt(p - 1);
  if (c === 107) return s.charCodeAt(p - 2) === 115;
  if (c === 116) return literalAt(s, p - 5, 'glpat');
  return s.charCodeAt(p - 2) === 120 && s.charCodeAt(p - 3) === 111 && s.charCodeAt(p - 4) === 120 && 'abposr'.includes(s[p - 1]!);
}

/** :\/\/[^\s/@]{1,200}@ read backwards from its '@' at p */
function userinfoBefore(s: string, p: number): boolean {
  let j = p - 1;
  let n = 0;
  while (j >= 0 && n < 200) {
    const c = s.charCodeAt(j);
    if (c === 47 || c === 64 || isSpace(c)) break;
    j--;
    n++;
  }
  if (n < 1 || j < 2 || s.charCodeAt(j) !== 47) return false;
  if (s.charCodeAt(j - 1) === 47 && s.charCodeAt(j - 2) === 58) return true;
  // jdbc:oracle:thin:user/password@: the user, then ':' and the driver's name back to "jdbc:oracle:"
  // (a bounded look back: a text of many `a/b@` must not rescan all of itself at each)
  return s.slice(Math.max(0, j - 151), j).includes('jdbc:oracle:');
}

/** [Bb]earer |BEARER |[Bb]asic |BASIC  at its 'B': by the letter after it first (e, a, E, A), not by four startsWith calls */
function schemeUpper(t: string, p: number): boolean {
  const c = t.charCodeAt(p + 1);
  return c === 101 ? t.startsWith('Bearer ', p) : c === 97 ? t.startsWith('Basic ', p) : c === 69 ? t.startsWith('BEARER ', p) : c === 65 && t.startsWith('BASIC ', p);
}

/** ... at its 'b' */
function schemeLower(t: string, p: number): boolean {
  const c = t.charCodeAt(p + 1);
  return c === 101 ? t.startsWith('bearer ', p) : c === 97 && t.startsWith('basic ', p);
}

const keyedOrPair = (t: string, p: number): boolean => keyedBefore(t, p) || pairAt(t, p);
const slackHook = (t: string, p: number): boolean => literalAt(t, p - 3, 'hooks.slack');
const jwtStart = (t: string, p: number): boolean => literalAt(t, p - 2, 'ey');
const always = (): boolean => true;
/** AIza is read at the 'A' the AWS key id's branch is anchored on: one pass over the text fewer */
const googleOrAws = (t: string, p: number): boolean => t.startsWith('AIza', p) || awsKeyIdAt(t, p);

/**
 * A position the candidate finder listed, confirmed by the same function its pass would call
 * (its multi-character anchors read again from the text: the finder only narrows them).
 */
function confirmAt(t: string, p: number): boolean {
  switch (t.charCodeAt(p)) {
    case 58: // :
      return keyedBefore(t, p);
    case 61: // =
      return keyedOrPair(t, p);
    case 64: // @
      return userinfoBefore(t, p);
    case 95: // _
      return underscoreToken(t, p);
    case 45: // -
      return dashToken(t, p);
    case 83: // S
      return t.startsWith('SG.', p);
    case 107: // k
      return t.startsWith('ks.sl', p) && slackHook(t, p);
    case 74: // J
      return jwtStart(t, p);
    case 80: // P
      return t.startsWith('PRIVATE KEY', p);
    case 66: // B
      return schemeUpper(t, p);
    case 98: // b
      return schemeLower(t, p);
    case 65: // A
      return googleOrAws(t, p);
    default:
      return false;
  }
}

/** [0-9 -]: what a card number's match is made of (CARD_DIGITS) */
function isCardChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 32 || c === 45;
}
const CARD_ONE = new RegExp(CARD_DIGITS.source);

/**
 * Marks `hit[r] = 1` for every record r whose text may hold a secret. `text` is the records'
 * texts joined, record r starting at `starts[r]` (ascending). A match that straddles two records
 * marks one of them: harmless, the rules then look at that record alone.
 *
 * A text of Latin-1 characters goes through the candidate finder (prefilter-scan.ts), any other
 * through the passes; both mark the same records (test/unit/redaction/prefilter.test.ts).
 */
export function markTriggered(text: string, starts: ArrayLike<number>, hit: Uint8Array): void {
  const found = findCandidates(text);
  if (found !== null) markFound(text, starts, hit, found);
  else markByPasses(text, starts, hit);
}

/**
 * The candidate finder's list for a text it takes (Latin-1 only), else null. It is as fast as
 * the passes or faster at every length, 4 characters included (PERFORMANCE.md), so it takes
 * short texts too.
 */
export function findCandidates(text: string): Candidates | null {
  return BEYOND_LATIN1.test(text) ? null : scanCandidates(text);
}

/** The finder's list, confirmed in order: anchors by their pass's function, card runs by CARD_DIGITS over the run. */
export function markFound(text: string, starts: ArrayLike<number>, hit: Uint8Array, found: Candidates): void {
  if (starts.length === 0) return;
  const n = starts.length;
  const { count, words } = found;
  // the anchors and the card runs are each listed in ascending order: a cursor each
  let r = 0;
  let rc = 0;
  let cardEnd = -1;
  for (let i = 0, o = found.at; i < count; i++, o += 2) {
    const p = words[o + 1]!;
    if (words[o] === KIND_ANCHOR) {
      while (r + 1 < n && starts[r + 1]! <= p) r++;
      if (hit[r] !== 1 && confirmAt(text, p)) hit[r] = 1;
      continue;
    }
    if (words[o] !== KIND_CARD_RUN) continue;
    // a run of [0-9 -] is listed once per chunk it spans: read whole the first time
    if (p < cardEnd) continue;
    let a = p;
    while (a > 0 && isCardChar(text.charCodeAt(a - 1))) a--;
    let e = p + 1;
    while (e < text.length && isCardChar(text.charCodeAt(e))) e++;
    cardEnd = e;
    // a match is made of these characters only, so it lies inside one run, and a run inside one record ('\n' is none of them)
    while (rc + 1 < n && starts[rc + 1]! <= a) rc++;
    if (hit[rc] !== 1 && CARD_ONE.test(text.slice(a, e))) hit[rc] = 1;
  }
}

/** The passes over the text, one per anchor: for a text with a character above U+00FF, or one the finder cannot take. */
export function markByPasses(text: string, starts: ArrayLike<number>, hit: Uint8Array): void {
  const n = starts.length;
  if (n === 0) return;
  // Each pass walks forward, so the record holding a position is found by moving a cursor, not
  // by searching; after a hit the pass goes on at the next record not yet marked.
  let r = 0;
  const seek = (p: number): void => {
    while (r + 1 < n && starts[r + 1]! <= p) r++;
  };
  /** marks the record at the cursor; where to look next */
  const markAndSkip = (): number => {
    hit[r] = 1;
    while (r + 1 < n && hit[r + 1] === 1) r++;
    return r + 1 < n ? starts[r + 1]! : text.length;
  };
  const anchored = (ch: string, confirm: (s: string, p: number) => boolean): void => {
    r = 0;
    let p = text.indexOf(ch);
    while (p >= 0) {
      seek(p);
      p = text.indexOf(ch, hit[r] === 1 || confirm(text, p) ? markAndSkip() : p + 1);
    }
  };
  const regex = (re: RegExp): void => {
    r = 0;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      seek(m.index);
      re.lastIndex = markAndSkip();
    }
  };
  anchored(':', keyedBefore);
  anchored('=', keyedOrPair);
  anchored('@', userinfoBefore);
  anchored('_', underscoreToken);
  anchored('-', dashToken);
  // '.' is in every host name: 'SG.' is cheaper as a literal (its 'S' is rare). 'hooks.slack' is
  // not: a literal whose first character is common ('h' of every "https") is searched at ~1 ns a
  // character, so it is found from its middle, "ks.sl" (0.9× the whole pre-filter's cost)
  anchored('SG.', always);
  anchored('ks.sl', slackHook);
  anchored('J', jwtStart);
  anchored('PRIVATE KEY', always);
  // the schemes anchored on the B (rare in prose), cheaper than the alternation tried at every position
  anchored('B', schemeUpper);
  anchored('b', schemeLower);
  anchored('A', googleOrAws);
  regex(CARD_DIGITS);
}

const ONE = [0];

/** The same question for one string. */
export function mayTrigger(s: string): boolean {
  const hit = new Uint8Array(1);
  markTriggered(s, ONE, hit);
  return hit[0] === 1;
}
