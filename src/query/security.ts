/**
 * Security findings in captured traffic: credentials in URLs, mixed content, cookies without
 * Secure/HttpOnly, documents without the usual headers. Folded per finding and endpoint, worst
 * first. Document headers and cookie attributes come from the extension's service worker
 * (`network_bodies` records with `document` / `cookies`, PROTOCOL.md §2), the only place that
 * sees them; a producer that sends raw headers (HTTP routes, SDKs) is still read the old way.
 */
import { kindId } from '../domain/kinds.js';
import { DOCUMENT_HEADERS, lower, requestFindings, type FindingSeverity } from '../domain/signals/security.js';

export { DOCUMENT_HEADERS };
import { pathTemplate } from '../domain/signals/signature.js';
import type { CookieRecord } from '../domain/wire/schemas.js';
import type { StoreReader } from '../shm/index.js';
import { scan } from './scan.js';
import type { TabScope } from './tab-scope.js';

export type { FindingSeverity };

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
      const rec = h.rec;
      const bodies = kind === 'network_bodies';
      // network_bodies records carry no page_url: their mixed content is the network record's finding
      requestFindings({ url: reqUrl, pageUrl: rec.page_url, responseHeaders: bodies ? rec.response_headers : undefined, contentType: rec.content_type, cookies: bodies ? rec.cookies : undefined, document: bodies ? rec.document : undefined }, (severity, what) => add(severity, what, where));
      if (!bodies) continue;
      const ts = rec.ts ?? h.clientTime;
      for (const c of rec.cookies ?? []) {
        const key = `${c.name}|${c.domain ?? ''}|${c.path ?? ''}`;
        const seen = cookies.get(key);
        // the scan runs oldest first: the latest response's attributes win
        if (seen || cookies.size < MAX_COOKIES) cookies.set(key, { ...c, where, https, count: (seen?.count ?? 0) + 1, ts });
      }
      if (rec.document === true) {
        const key = reqUrl.split('#')[0]!;
        const prev = documents.get(key);
        if (prev || documents.size < MAX_DOCUMENTS) documents.set(key, documentHeaders(reqUrl, rec.status ?? 0, ts, (prev?.loads ?? 0) + 1, lower(rec.response_headers ?? {}), https));
      }
    }
  }
  return {
    findings: [...findings.values()].sort((x, y) => ORDER[x.severity] - ORDER[y.severity] || y.count - x.count),
    documents: [...documents.values()].sort((x, y) => y.ts - x.ts),
    cookies: [...cookies.values()].sort((x, y) => y.ts - x.ts),
  };
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
