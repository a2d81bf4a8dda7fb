/**
 * What `analyze security` needs and a page can never see: the tab's document response headers
 * and the attributes of the cookies responses set (fetch and XHR hide Set-Cookie from scripts;
 * the page's own load is no request a page hook observes). The service worker reads them with
 * chrome.webRequest and sends them as `network_bodies` records (PROTOCOL.md §2, `document`,
 * `cookies`). A cookie's value never leaves this module: only its name and attributes do.
 * Pure functions here; the listener is registered in index.ts.
 */
import { DOCUMENT_HEADERS } from '../../../src/domain/signals/security.js';
import type { Json, WireRecord } from '../shared/protocol.js';

/**
 * The headers that decide a document's protections; nothing else of the response is sent. The
 * ones the server checks come from its own list, so the two cannot drift apart.
 */
export const SECURITY_HEADERS = ['content-type', ...DOCUMENT_HEADERS, 'content-security-policy-report-only', 'cross-origin-resource-policy'] as const;

const HEADER_VALUE_MAX = 2048;
const COOKIES_MAX = 50;
const NAME_MAX = 256;
/** Chrome caps a cookie's life at 400 days; past a year it is worth naming */
const LONG_LIVED_S = 365 * 24 * 3600;

export type ExpiryClass = 'session' | 'persistent' | 'long_lived' | 'deletion';

export interface CookieAttrs {
  name: string;
  secure: boolean;
  http_only: boolean;
  same_site?: string;
  domain?: string;
  path?: string;
  partitioned?: boolean;
  expiry: ExpiryClass;
}

/**
 * One Set-Cookie header line → the cookie's name and attributes. The value is skipped, never
 * copied. `now` is the response's time, for Expires in the past (a deletion).
 */
export function cookieAttrs(line: string, now: number): CookieAttrs | null {
  const parts = line.split(';');
  const pair = parts[0] ?? '';
  const eq = pair.indexOf('=');
  // RFC 6265: a pair without "=" is ignored by browsers, so it sets nothing worth reporting
  if (eq < 0) return null;
  const name = pair.slice(0, eq).trim().slice(0, NAME_MAX);
  const out: CookieAttrs = { name, secure: false, http_only: false, expiry: 'session' };
  let maxAge: number | undefined;
  let expires: number | undefined;
  for (const raw of parts.slice(1)) {
    const i = raw.indexOf('=');
    const key = (i < 0 ? raw : raw.slice(0, i)).trim().toLowerCase();
    const val = i < 0 ? '' : raw.slice(i + 1).trim();
    if (key === 'secure') out.secure = true;
    else if (key === 'httponly') out.http_only = true;
    else if (key === 'partitioned') out.partitioned = true;
    else if (key === 'samesite') out.same_site = val.toLowerCase().slice(0, 16);
    else if (key === 'domain' && val) out.domain = val.slice(0, NAME_MAX);
    else if (key === 'path' && val) out.path = val.slice(0, NAME_MAX);
    else if (key === 'max-age' && /^-?\d+$/.test(val)) maxAge = Number(val);
    else if (key === 'expires') {
      const t = Date.parse(val);
      if (Number.isFinite(t)) expires = t;
    }
  }
  // Max-Age wins over Expires, as in browsers
  const lifeS = maxAge ?? (expires !== undefined ? (expires - now) / 1000 : undefined);
  if (lifeS !== undefined) out.expiry = lifeS <= 0 ? 'deletion' : lifeS > LONG_LIVED_S ? 'long_lived' : 'persistent';
  return out;
}

export interface SeenResponse {
  url: string;
  method: string;
  statusCode: number;
  timeStamp: number;
  type: string;
  responseHeaders?: Array<{ name: string; value?: string }>;
}

/**
 * The record for one response, or null when it carries nothing to report (a sub-resource that set
 * no cookie). The tab's document always gives one: its headers, present or not, are the finding.
 */
export function securityRecord(d: SeenResponse): WireRecord | null {
  // a redirect's headers protect no document: only its cookies count
  const document = d.type === 'main_frame' && (d.statusCode < 300 || d.statusCode >= 400);
  const headers: Record<string, string> = {};
  const cookies: CookieAttrs[] = [];
  let dropped = 0;
  for (const h of d.responseHeaders ?? []) {
    const name = h.name.toLowerCase();
    if (name === 'set-cookie') {
      // Chrome hands one header per cookie; some servers still fold several into one with "\n"
      for (const line of (h.value ?? '').split('\n')) {
        const c = cookieAttrs(line, d.timeStamp);
        if (!c) continue;
        if (cookies.length < COOKIES_MAX) cookies.push(c);
        else dropped++;
      }
    } else if (document && (SECURITY_HEADERS as readonly string[]).includes(name)) {
      // a header sent twice is joined as browsers combine it
      const v = (h.value ?? '').slice(0, HEADER_VALUE_MAX);
      headers[name] = headers[name] === undefined ? v : `${headers[name]}, ${v}`.slice(0, HEADER_VALUE_MAX);
    }
  }
  if (!document && !cookies.length) return null;
  const rec: WireRecord = { ts: d.timeStamp, method: d.method.slice(0, 32), url: d.url.slice(0, 8192), status: d.statusCode };
  if (document) {
    rec.document = true;
    rec.response_headers = headers;
    if (headers['content-type']) rec.content_type = headers['content-type'].slice(0, 1024);
  }
  if (cookies.length) rec.cookies = cookies.map((c) => ({ ...c }) as Record<string, Json>);
  if (dropped) rec.cookies_dropped = dropped;
  return rec;
}
