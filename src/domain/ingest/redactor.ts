/**
 * The seam where redaction plugs into ingest: every record passes through `redactRecord`
 * after validation and before truncation and storage. The full engine lives in
 * src/domain/redaction; `headerStripRedactor` is the minimum that is always safe to apply.
 */
import type { Kind } from '../kinds.js';
import { redactCookie, redactSetCookie } from '../redaction/cookies.js';
import { isSensitiveKey } from '../redaction/keyed.js';

/**
 * The one untyped view of a validated record: redaction walks every field whatever its kind, so
 * it takes the record as a plain map. Everything before and after it uses the schema's type.
 */
export type UntypedRecord = Record<string, unknown>;

export interface Redactor {
  /** May mutate and return `rec`. Throwing means "could not redact": the caller drops free text. */
  redactRecord(kind: Kind, rec: object): UntypedRecord;
  /**
   * Optional pre-filter over all records of one kind in a batch: 1 where a record may hold a
   * secret (a superset). Records marked 0 are stored without calling redactRecord.
   */
  triggered?(kind: Kind, recs: readonly object[]): Uint8Array;
}

const SENSITIVE_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key)$|token|secret|key|password|auth/i;

function stripHeaders(h: unknown): void {
  if (!h || typeof h !== 'object') return;
  const map = h as Record<string, unknown>;
  for (const name of Object.keys(map)) {
    const lower = name.toLowerCase();
    const v = map[name];
    if (lower === 'set-cookie' && typeof v === 'string') map[name] = redactSetCookie(v);
    else if (lower === 'cookie' && typeof v === 'string') map[name] = redactCookie(v);
    else if (SENSITIVE_HEADER.test(name) || isSensitiveKey(name)) map[name] = '[REDACTED:header]';
  }
}

export const headerStripRedactor: Redactor = {
  redactRecord(_kind, record) {
    const rec = record as UntypedRecord;
    stripHeaders(rec.headers);
    stripHeaders(rec.request_headers);
    stripHeaders(rec.response_headers);
    return rec;
  },
  // only a record with headers has anything to strip (the rest stay as they came)
  triggered(_kind, recs) {
    const marks = new Uint8Array(recs.length);
    for (let j = 0; j < recs.length; j++) {
      const r = recs[j] as UntypedRecord;
      if (r.headers !== undefined || r.request_headers !== undefined || r.response_headers !== undefined) marks[j] = 1;
    }
    return marks;
  },
};

export { FREE_TEXT_FIELDS } from '../wire/schemas.js';
