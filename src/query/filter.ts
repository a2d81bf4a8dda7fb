/** Which records an observe call wants: a cheap byte prefilter first, then the decoded check. */
import { isError, isFailing } from '../domain/record-flags.js';
import { REC_ERROR, REC_FAILING } from '../shm/index.js';
import { needle, stringNeedle, textNeedle } from './needles.js';
import type { Rec } from './scan.js';

export interface FilterArgs {
  /** an observe `what`; 'errors' and 'failing' (summary's failed requests) also filter */
  what: string;
  min_level?: 'debug' | 'log' | 'info' | 'warn' | 'error' | undefined;
  method?: string | undefined;
  status_min?: number | undefined;
  status_max?: number | undefined;
  connection_id?: string | undefined;
  direction?: 'incoming' | 'outgoing' | undefined;
  url?: string | undefined;
  contains?: string | undefined;
}

const LEVELS = ['debug', 'log', 'info', 'warn', 'error'];

export { isError, isFailing } from '../domain/record-flags.js';

export function matcher(a: FilterArgs): (r: Rec) => boolean {
  const minLevel = a.min_level ? LEVELS.indexOf(a.min_level) : -1;
  const method = a.method?.toUpperCase();
  const contains = a.contains?.toLowerCase();
  return (r) => {
    if (a.what === 'errors' && !isError(r)) return false;
    if (a.what === 'failing' && !isFailing(r)) return false;
    if (minLevel >= 0 && LEVELS.indexOf(r.level ?? '') < minLevel) return false;
    if (method && (r.method ?? '').toUpperCase() !== method) return false;
    if (a.status_min !== undefined && !(r.status !== undefined && r.status >= a.status_min)) return false;
    if (a.status_max !== undefined && !(r.status !== undefined && r.status <= a.status_max)) return false;
    if (a.connection_id !== undefined && r.id !== a.connection_id) return false;
    if (a.direction !== undefined && r.direction !== a.direction) return false;
    if (a.url) {
      const u = [r.url, r.request_url, r.page_url, r.to_url].filter((x) => typeof x === 'string').join(' ');
      if (!u.includes(a.url)) return false;
    }
    if (contains && !JSON.stringify(r).toLowerCase().includes(contains)) return false;
    return true;
  };
}

export const ERROR_BYTES = [needle('"level":"error"', 'error'), needle('"type":"exception"', 'exception'), needle('"type":"network"', 'network')];
const FAILED_BYTES = [needle('"status":4', null), needle('"status":5', null), needle('"status":0', null), needle('"error":', 'error')];

/**
 * What a scan tests before it decodes a record. `anyFlag`: the header flag (shm/layout.ts REC_*)
 * every record the filter keeps has; a record its writer classified is tested by it alone, one
 * stored before (or by a writer that does not classify) by `anyOf`'s bytes.
 */
export interface Prefilter {
  anyOf?: Buffer[];
  allOf?: Buffer[];
  anyFlag?: number;
}

export function prefilter(a: FilterArgs): Prefilter {
  const allOf: Buffer[] = [];
  if (a.url) allOf.push(textNeedle(a.url));
  if (a.connection_id) allOf.push(stringNeedle(a.connection_id));
  const out: Prefilter = allOf.length ? { allOf } : {};
  if (a.what === 'errors') {
    out.anyOf = ERROR_BYTES;
    out.anyFlag = REC_ERROR;
  }
  if (a.what === 'failing') {
    out.anyOf = FAILED_BYTES;
    out.anyFlag = REC_FAILING;
  }
  return out;
}
