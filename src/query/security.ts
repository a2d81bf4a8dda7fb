/**
 * Security findings in captured traffic: credentials in URLs, mixed content, cookies without
 * Secure/HttpOnly, documents without the usual headers. Folded per finding and endpoint, worst first.
 */
import { kindId } from '../domain/kinds.js';
import { pathTemplate } from '../domain/signals/signature.js';
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

const CRED_PARAM = /[?&](?:password|passwd|pwd|token|access_token|api_key|apikey|secret|client_secret|auth|session)=/i;
const ORDER: Record<FindingSeverity, number> = { high: 0, medium: 1, low: 2 };

/** All findings, high first then most frequent; `url` keeps only requests whose URL contains it. */
export function securityFindings(reader: StoreReader, maxScan: number, url?: string, scope?: TabScope): SecurityFinding[] {
  const findings = new Map<string, SecurityFinding>();
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
      if (/^[a-z]+:\/\/[^/?#]*@/i.test(reqUrl)) add('high', 'credentials in URL (userinfo)', where);
      if (CRED_PARAM.test(reqUrl)) add('high', 'credential-like query parameter in URL', where);
      const page = h.rec.page_url ?? '';
      if (page.startsWith('https:') && reqUrl.startsWith('http:')) add('medium', 'mixed content (http request from an https page)', where);
      if (kind !== 'network_bodies') continue;
      const headers = lower(h.rec.response_headers ?? {});
      const setCookie = headers['set-cookie'];
      if (setCookie) {
        for (const c of setCookie.split(/\n|,(?=\s*[^;=]+=)/)) {
          const name = c.split('=')[0]!.trim();
          if (!/;\s*secure/i.test(c) && reqUrl.startsWith('https:')) add('medium', `cookie ${name} without Secure`, where);
          if (!/;\s*httponly/i.test(c)) add('low', `cookie ${name} without HttpOnly`, where);
        }
      }
      const ctype = h.rec.content_type ?? headers['content-type'] ?? '';
      if (ctype.includes('text/html') && Object.keys(headers).length) {
        if (!headers['content-security-policy']) add('medium', 'document without Content-Security-Policy', where);
        if (!headers['x-content-type-options']) add('low', 'document without X-Content-Type-Options: nosniff', where);
        if (reqUrl.startsWith('https:') && !headers['strict-transport-security']) add('low', 'https document without Strict-Transport-Security', where);
        if (!headers['x-frame-options'] && !/frame-ancestors/i.test(headers['content-security-policy'] ?? '')) add('low', 'document without X-Frame-Options or frame-ancestors', where);
      }
    }
  }
  return [...findings.values()].sort((x, y) => ORDER[x.severity] - ORDER[y.severity] || y.count - x.count);
}

function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
