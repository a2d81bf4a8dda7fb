/**
 * Security findings in captured traffic: credentials in URLs, mixed content, cookies without
 * Secure/HttpOnly, documents without the usual headers. Folded per finding and endpoint, worst
 * first. Document headers and cookie attributes come from the extension's service worker
 * (`network_bodies` records with `document` / `cookies`, PROTOCOL.md §2), the only place that
 * sees them; a producer that sends raw headers (HTTP routes, SDKs) is still read the old way.
 */
import { kindId } from '../domain/kinds.js';
import { pathTemplate } from '../domain/signals/signature.js';
import type { CookieRecord } from '../domain/wire/schemas.js';
import type { StoreReader } from '../shm/index.js';
import { scan } from './scan.js';
import type { TabScope } from './tab-scope.js';

export type FindingSeverity = 'high' | 'medium' | 'low';

export interface SecurityFinding {
  severity: FindingSeverity;
  what: string;
  /** the endpoint, as a path template */
  where: string;
  count: number;
}

/** The security headers of one document, as its latest load had them. */
export interface DocumentHeaders {
  url: string;
  status: number;
  ts: number;
  loads: number;
  /** header → value (lower-case names), only those present */
  present: Record<string, string>;
  /** the checked headers it lacks; HSTS only counts over https */
  missing: string[];
}

/** One cookie as the latest response that set it described it; never its value. */
export interface CookieSeen extends CookieRecord {
  /** the endpoint that set it, as a path template */
  where: string;
  https: boolean;
  count: number;
  ts: number;
}

export interface SecurityReport {
  findings: SecurityFinding[];
  documents: DocumentHeaders[];
  cookies: CookieSeen[];
}

/** What a document is checked for, in the order answers list them. */
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

const CRED_PARAM = /[?&](?:password|passwd|pwd|token|access_token|api_key|apikey|secret|client_secret|auth|session)=/i;
const ORDER: Record<FindingSeverity, number> = { high: 0, medium: 1, low: 2 };
/** bounds what one report keeps, whatever the buffer holds */
const MAX_DOCUMENTS = 50;
const MAX_COOKIES = 100;

/** All findings, high first then most frequent; `url` keeps only requests whose URL contains it. */
export function securityFindings(reader: StoreReader, maxScan: number, url?: string, scope?: TabScope): SecurityFinding[] {
  return securityReport(reader, maxScan, url, scope).findings;
}

/** Findings, plus each document's headers and each cookie's attributes as last seen. */
export function securityReport(reader: StoreReader, maxScan: number, url?: string, scope?: TabScope): SecurityReport {
  const findings = new Map<string, SecurityFinding>();
  const documents = new Map<string, DocumentHeaders>();
  const cookies = new Map<string, CookieSeen>();
  const add = (severity: FindingSeverity, what: string, where: string): void => {
    const key = `${what}|${where}`;
    const f = findings.get(key);
    if (f) f.count++;
    else findings.set(key, { severity, what, where, count: 1 });
  };
  for (const kind of ['network', 'network_bodies'] as const) {
    const k = kindId(kind);
    for (const h of scan(reader, { kind: k, from: reader.tailOrd(k), limit: maxScan, maxScan, scope }).hits) {
      const reqUrl = h.rec.url ?? '';
      if (url && !reqUrl.includes(url)) continue;
      const where = pathTemplate(reqUrl);
      const https = reqUrl.startsWith('https:');
      if (/^[a-z]+:\/\/[^/?#]*@/i.test(reqUrl)) add('high', 'credentials in URL (userinfo)', where);
      if (CRED_PARAM.test(reqUrl)) add('high', 'credential-like query parameter in URL', where);
      const page = h.rec.page_url ?? '';
      if (page.startsWith('https:') && reqUrl.startsWith('http:')) add('medium', 'mixed content (http request from an https page)', where);
      if (kind !== 'network_bodies') continue;
      const rec = h.rec;
      const ts = rec.ts ?? h.clientTime;
      const status = rec.status ?? 0;
      const headers = lower(rec.response_headers ?? {});
      for (const c of rec.cookies ?? []) {
        cookieFindings(add, c, https, where);
        const key = `${c.name}|${c.domain ?? ''}|${c.path ?? ''}`;
        const seen = cookies.get(key);
        // the scan runs oldest first: the latest response's attributes win
        if (seen || cookies.size < MAX_COOKIES) cookies.set(key, { ...c, where, https, count: (seen?.count ?? 0) + 1, ts });
      }
      // a producer that sent the header itself (the extension never does: fetch hides it)
      const setCookie = headers['set-cookie'];
      if (setCookie) {
        for (const c of setCookie.split(/\n|,(?=\s*[^;=]+=)/)) {
          const name = c.split('=')[0]!.trim();
          if (!/;\s*secure/i.test(c) && https) add('medium', `cookie ${name} without Secure`, where);
          if (!/;\s*httponly/i.test(c)) add('low', `cookie ${name} without HttpOnly`, where);
        }
      }
      const ctype = rec.content_type ?? headers['content-type'] ?? '';
      if (rec.document === true || (rec.document === undefined && ctype.includes('text/html') && Object.keys(headers).length)) {
        documentFindings(add, headers, https, where);
        if (rec.document === true) {
          const key = reqUrl.split('#')[0]!;
          const prev = documents.get(key);
          if (prev || documents.size < MAX_DOCUMENTS) documents.set(key, documentHeaders(reqUrl, status, ts, (prev?.loads ?? 0) + 1, headers, https));
        }
      }
    }
  }
  return {
    findings: [...findings.values()].sort((x, y) => ORDER[x.severity] - ORDER[y.severity] || y.count - x.count),
    documents: [...documents.values()].sort((x, y) => y.ts - x.ts),
    cookies: [...cookies.values()].sort((x, y) => y.ts - x.ts),
  };
}

type Add = (severity: FindingSeverity, what: string, where: string) => void;

function cookieFindings(add: Add, c: CookieRecord, https: boolean, where: string): void {
  // a deletion sets nothing that could leak
  if (c.expiry === 'deletion') return;
  if (!c.secure && https) add('medium', `cookie ${c.name} without Secure`, where);
  if (c.same_site === 'none' && !c.secure) add('medium', `cookie ${c.name} SameSite=None without Secure (browsers refuse it)`, where);
  if (!c.http_only) add('low', `cookie ${c.name} without HttpOnly (scripts can read it)`, where);
}

function documentFindings(add: Add, headers: Record<string, string>, https: boolean, where: string): void {
  const csp = headers['content-security-policy'];
  if (!csp) add('medium', `document without Content-Security-Policy${headers['content-security-policy-report-only'] ? ' (report-only is set: it enforces nothing)' : ''}`, where);
  else if (/script-src[^;]*'unsafe-inline'/i.test(csp) || (!/script-src/i.test(csp) && /default-src[^;]*'unsafe-inline'/i.test(csp))) add('low', "Content-Security-Policy allows 'unsafe-inline' scripts", where);
  if (!/nosniff/i.test(headers['x-content-type-options'] ?? '')) add('low', 'document without X-Content-Type-Options: nosniff', where);
  if (https && !headers['strict-transport-security']) add('low', 'https document without Strict-Transport-Security', where);
  if (!headers['x-frame-options'] && !/frame-ancestors/i.test(csp ?? '')) add('low', 'document without X-Frame-Options or frame-ancestors', where);
}

function documentHeaders(url: string, status: number, ts: number, loads: number, headers: Record<string, string>, https: boolean): DocumentHeaders {
  const present: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of DOCUMENT_HEADERS) {
    const v = headers[name];
    if (v !== undefined) present[name] = v;
    // browsers ignore HSTS over http, and frame-ancestors supersedes X-Frame-Options: no gap
    else if ((name !== 'strict-transport-security' || https) && (name !== 'x-frame-options' || !/frame-ancestors/i.test(headers['content-security-policy'] ?? ''))) missing.push(name);
  }
  if (headers['content-security-policy-report-only'] !== undefined) present['content-security-policy-report-only'] = headers['content-security-policy-report-only'];
  return { url, status, ts, loads, present, missing };
}

function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
