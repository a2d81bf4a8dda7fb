/**
 * Security findings in captured traffic: credentials in URLs, mixed content, cookies without
 * Secure/HttpOnly, documents without the usual headers. Folded per finding and endpoint, worst first.
 */
import { kindId } from '../domain/kinds.js';
import { requestFindings, type FindingSeverity } from '../domain/signals/security.js';
import { pathTemplate } from '../domain/signals/signature.js';
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
      // network_bodies records carry no page_url: their mixed content is the network record's finding
      requestFindings({ url: reqUrl, pageUrl: h.rec.page_url, responseHeaders: kind === 'network_bodies' ? h.rec.response_headers : undefined, contentType: h.rec.content_type }, (severity, what) => add(severity, what, where));
    }
  }
  return [...findings.values()].sort((x, y) => ORDER[x.severity] - ORDER[y.severity] || y.count - x.count);
}
