/**
 * What makes two records "the same thing happening again", and how bad each one is. Folding
 * repeats and filling a result most-severe-first both read these, so an agent sees one line per
 * problem and the worst problems first whatever its character budget.
 */
import { kindName, type KindId } from '../domain/kinds.js';
import { errorSignature, normalizeMessage, pathTemplate } from '../domain/signals/signature.js';

import type { Rec } from './scan.js';

/** 4 breaks the page (exceptions, 5xx, failed requests) … 0 is chatter (debug). */
export type Severity = 0 | 1 | 2 | 3 | 4;

const s = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function statusSeverity(status: number | undefined, error: unknown): Severity {
  const n = status ?? 0;
  if (error !== undefined || n === 0 || n >= 500) return 4;
  return n >= 400 ? 3 : 1;
}

export function severity(kind: KindId, r: Rec): Severity {
  switch (kindName(kind)) {
    case 'logs':
    case 'ext_logs':
      if (r.type === 'exception') return 4;
      if (r.type === 'network') return statusSeverity(r.status, r.error);
      return r.level === 'error' ? 3 : r.level === 'warn' ? 2 : r.level === 'debug' ? 0 : 1;
    case 'network':
    case 'network_bodies':
      return statusSeverity(r.status, r.error);
    case 'ws_events':
      return r.event === 'error' || (r.event === 'close' && r.code !== 1000 && r.code !== 1001) ? 3 : 1;
    case 'actions':
    case 'perf':
      return 1;
  }
}

function selector(r: Rec): string {
  const sel = r.selectors;
  return s(sel?.test_id ?? sel?.aria_label ?? sel?.id ?? sel?.text ?? sel?.css_path);
}

/**
 * The normalized signature, prefixed by kind so a merged timeline never folds a log line into a
 * request. Logs reuse the error signature (message with numbers, ids, hashes, UUIDs, timestamps and
 * quoted values replaced; exceptions add their top frame; network entries are method + path
 * template + status) and add the level, so a warning never hides inside an error's count.
 */
export function foldKey(kind: KindId, r: Rec): string {
  const k = kindName(kind);
  switch (k) {
    case 'logs':
    case 'ext_logs':
      // errors carry the hash of their signature from the worker (src/domain/alerts/detect.ts):
      // folding a flood of them on main then costs a map lookup, not six regexes each
      if (typeof r._sig === 'number') return `${k}|${s(r.level)}|${s(r.type)}|#${r._sig}`;
      return `${k}|${s(r.level)}|${s(r.type)}|${errorSignature(r)}`;
    case 'network':
    case 'network_bodies':
      return `${k}|${s(r.method) || 'GET'} ${pathTemplate(s(r.url))} → ${s(r.status) || 'failed'}`;
    case 'ws_events':
      return `${k}|${s(r.event)}|${s(r.direction)}|${normalizeMessage(s(r.data))}|${s(r.code)}|${normalizeMessage(s(r.reason))}`;
    case 'actions':
      return `${k}|${s(r.type)}|${normalizeMessage(selector(r))}|${r.type === 'navigate' ? pathTemplate(s(r.to_url)) : s(r.key)}`;
    case 'perf':
      return `${k}|${pathTemplate(s(r.url))}`;
  }
}
