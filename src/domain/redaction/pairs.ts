/**
 * `name=value` pairs whose name says nothing (`?appid=…`, `&sig=…` of a SAS token,
 * `;AccountKey=…` of a connection string): the value goes when it is shaped like a credential
 * (shape.ts), unless the name says what else it is (a hash, a version, an id, a cursor) (#20 item 1).
 * Names that say "secret" are the keyed scanner's (keyed.ts). One indexOf walk over the '='s;
 * each value is read once: linear.
 */
import { isValueEnd, type Span } from './keyed.js';
import { secretShaped, MIN_MIXED } from './shape.js';

/** last words of names whose random-looking value is content, not a credential */
const CONTENT = new Set([
  'hash', 'sha', 'sha1', 'sha256', 'sha384', 'sha512', 'md5', 'digest', 'checksum', 'etag', 'integrity', 'commit', 'rev', 'revision', 'ref',
  'v', 'ver', 'version', 'build', 'cursor', 'after', 'before', 'id', 'ids', 'uuid', 'guid', 'oid', 'file', 'filename', 'path', 'name',
  'trace', 'span', 'traceparent', 'tracestate',
]);
/** publicKey=, publishable_key=: public by design */
const PUBLIC_NAME = /publi(?:c|shable)/i;

/** [A-Za-z0-9_.[\]$-]: what a name in `name=value` is made of */
const NAME = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]$-') NAME[c.charCodeAt(0)] = 1;
const isName = (c: number): boolean => c < 128 && NAME[c] === 1;
const MAX_NAME = 64;
const MAX_VALUE = 4096;

/** the name's last word, lower case: `trace_id` → id, `commitSha` → sha, `appid` → appid */
function lastWord(name: string): string {
  let e = name.length;
  while (e > 0 && !/[A-Za-z0-9]/.test(name[e - 1]!)) e--;
  let b = e;
  while (b > 0 && /[a-z0-9]/.test(name[b - 1]!)) b--;
  // camelCase: the capital starts the last word
  if (b > 0 && /[A-Z]/.test(name[b - 1]!)) b--;
  return name.slice(b, e).toLowerCase();
}

export function scanPairs(s: string): Span[] {
  const spans: Span[] = [];
  let p = s.indexOf('=');
  while (p >= 0) {
    const next = s.charCodeAt(p + 1);
    const prev = s.charCodeAt(p - 1);
    let resume = p + 1;
    // `==`, `=>`, `!=`, `<=` are code; a name must end right before the '='
    if (next !== 61 && next !== 62 && p > 0 && isName(prev)) {
      let l = p - 1;
      while (l > 0 && p - l < MAX_NAME && isName(s.charCodeAt(l - 1))) l--;
      let ve = p + 1;
      const lim = Math.min(s.length, ve + MAX_VALUE);
      while (ve < lim && !isValueEnd(s.charCodeAt(ve)) && s.charCodeAt(ve) !== 35) ve++;
      if (ve - p - 1 >= MIN_MIXED && !s.startsWith('[REDACTED', p + 1) && !CONTENT.has(lastWord(s.slice(l, p))) && !PUBLIC_NAME.test(s.slice(l, p)) && secretShaped(s.slice(p + 1, ve))) {
        spans.push({ start: p + 1, end: ve, cls: 'high_entropy' });
      }
      resume = Math.max(ve, p + 1);
    }
    p = s.indexOf('=', resume);
  }
  return spans;
}
