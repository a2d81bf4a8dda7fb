/**
 * What an error and a failing request are, decided once per record: by the ingest worker when it
 * stores the record (its header flags, shm/layout.ts REC_*), and by reads that test a decoded record
 * (query/filter.ts). One definition, so a header bit and a decoded test never disagree.
 */
import { REC_CLASSIFIED, REC_ERROR, REC_FAILING } from '../shm/index.js';

/** the fields the tests read, of a record of any kind as it is stored */
export interface Classifiable {
  readonly level?: unknown;
  readonly type?: unknown;
  readonly status?: number | undefined;
  readonly error?: unknown;
}

/** a console error, an exception, or a failed request logged as a console entry */
export const isError = (r: Classifiable): boolean => r.level === 'error' || r.type === 'exception' || (r.type === 'network' && ((r.status ?? 0) >= 400 || r.status === undefined || r.error !== undefined));

/** A request that failed: 4xx/5xx, or no answer at all (status 0 or a network error). */
export const isFailing = (r: Classifiable): boolean => (r.status !== undefined && (r.status >= 400 || r.status === 0)) || r.error !== undefined;

/** The header flags of a record about to be stored. */
export function recordFlags(r: Classifiable): number {
  return REC_CLASSIFIED | (isError(r) ? REC_ERROR : 0) | (isFailing(r) ? REC_FAILING : 0);
}
