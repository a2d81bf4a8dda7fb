/**
 * The security checks of one request record: what `analyze security` folds over the store and what
 * the workers raise as alerts when the record arrives. One module, so a finding the agent is
 * pushed is the finding analyze lists, worded the same.
 *
 * The checks read only what survives redaction: a redacted credential keeps its key
 * (`?token=[REDACTED]`) and a redacted userinfo keeps its '@', so a finding is still visible in
 * the stored record, and its text never needs the secret.
 */

import type { CookieRecord } from '../wire/schemas.js';

export type FindingSeverity = 'high' | 'medium' | 'low';

/**
 * What a document is checked for, in the order answers list them. The extension's service worker
 * sends these (and a few more it reads alongside: extension/src/sw/security-headers.ts) from this
 * one list, so the server never checks a header the extension does not send.
 */
export const DOCUMENT_HEADERS = [
  'content-security-policy',
  'strict-transport-security',
  'x-frame-options',
  'x-content-type-options',
  'referrer-policy',
  'permissions-policy',
  'cross-origin-opener-policy',
  'cross-origin-embedder-policy',
] as const;

/** What a check needs of a request: from a network record or a network_bodies record. */
export interface RequestSeen {
  url: string;
  /** the page that made it (network records carry it; bodies records do not) */
  pageUrl?: string | undefined;
  /** response headers (bodies records only; absent when the extension did not capture them) */
  responseHeaders?: Record<string, string> | undefined;
  contentType?: string | undefined;
  /** cookies the response set, as the extension describes them (never their values) */
  cookies?: CookieRecord[] | undefined;
  /** the extension says whether this response is a page's document (undefined: guess from content type) */
  document?: boolean | undefined;
}

const CRED_PARAM = /[?&](?:password|passwd|pwd|token|access_token|api_key|apikey|secret|client_secret|auth|session)=/i;
const USERINFO = /^[a-z]+:\/\/[^/?#]*@/i;

type Add = (severity: FindingSeverity, what: string) => void;

/** Calls `add` once per finding the request shows (a cookie finding names the cookie). */
export function requestFindings(r: RequestSeen, add: Add): void {
  urlFindings(r.url, r.pageUrl, add);
  headerFindings(r, add);
}

/** What the URL and the page that asked for it show: two regexes and a prefix test, cheap enough for every request. */
export function urlFindings(reqUrl: string, pageUrl: string | undefined, add: Add): void {
  // the character each needs first: most URLs have no '@', and many no query
  if (reqUrl.includes('@') && USERINFO.test(reqUrl)) add('high', 'credentials in URL (userinfo)');
  if (reqUrl.includes('?') && mayNameCredential(reqUrl) && CRED_PARAM.test(reqUrl)) add('high', 'credential-like query parameter in URL');
  if (pageUrl?.startsWith('https:') && reqUrl.startsWith('http:')) add('medium', 'mixed content (http request from an https page)');
}

/**
 * Whether some '=' follows a letter a CRED_PARAM name ends with (d, n, y, t, h, in either case):
 * nothing else can match it, and most query parameters (`page=`, `q=`, `v=`) do not, so the
 * regex runs for few URLs (every request is checked). Case as the regex folds it without the u
 * flag: ASCII letters only.
 */
function mayNameCredential(url: string): boolean {
  for (let at = url.indexOf('=', 1); at > 0; at = url.indexOf('=', at + 1)) {
    const c = url.charCodeAt(at - 1) | 0x20;
    if (c === 100 || c === 110 || c === 121 || c === 116 || c === 104) return true;
  }
  return false;
}

/** What the response shows: cookie flags, and a document's security headers. */
export function headerFindings(r: RequestSeen, add: Add): void {
  const reqUrl = r.url;
  const https = reqUrl.startsWith('https:');
  for (const c of r.cookies ?? []) cookieFindings(c, https, add);
  if (!r.responseHeaders) return;
  const headers = lower(r.responseHeaders);
  // a producer that sent the header itself (the extension never does: fetch hides it)
  const setCookie = headers['set-cookie'];
  if (setCookie) {
    for (const c of setCookie.split(/\n|,(?=\s*[^;=]+=)/)) {
      const name = c.split('=')[0]!.trim();
      if (!/;\s*secure/i.test(c) && https) add('medium', `cookie ${name} without Secure`);
      if (!/;\s*httponly/i.test(c)) add('low', `cookie ${name} without HttpOnly`);
    }
  }
  const ctype = r.contentType ?? headers['content-type'] ?? '';
  if (r.document === true || (r.document === undefined && ctype.includes('text/html') && Object.keys(headers).length)) documentFindings(headers, https, add);
}

/** A cookie's flags, from the extension's description of it (no value is ever needed). */
export function cookieFindings(c: CookieRecord, https: boolean, add: Add): void {
  // a deletion sets nothing that could leak
  if (c.expiry === 'deletion') return;
  if (!c.secure && https) add('medium', `cookie ${c.name} without Secure`);
  if (c.same_site === 'none' && !c.secure) add('medium', `cookie ${c.name} SameSite=None without Secure (browsers refuse it)`);
  if (!c.http_only) add('low', `cookie ${c.name} without HttpOnly (scripts can read it)`);
}

/** A document's security headers (lower-case names). */
export function documentFindings(headers: Record<string, string>, https: boolean, add: Add): void {
  const csp = headers['content-security-policy'];
  if (!csp) add('medium', `document without Content-Security-Policy${headers['content-security-policy-report-only'] ? ' (report-only is set: it enforces nothing)' : ''}`);
  else if (/script-src[^;]*'unsafe-inline'/i.test(csp) || (!/script-src/i.test(csp) && /default-src[^;]*'unsafe-inline'/i.test(csp))) add('low', "Content-Security-Policy allows 'unsafe-inline' scripts");
  if (!/nosniff/i.test(headers['x-content-type-options'] ?? '')) add('low', 'document without X-Content-Type-Options: nosniff');
  if (https && !headers['strict-transport-security']) add('low', 'https document without Strict-Transport-Security');
  if (!headers['x-frame-options'] && !/frame-ancestors/i.test(csp ?? '')) add('low', 'document without X-Frame-Options or frame-ancestors');
}

export function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
