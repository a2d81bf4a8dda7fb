/**
 * The seam where redaction plugs into ingest: every record passes through `redactRecord`
 * after validation and before truncation and storage. The full engine lives in
 * src/domain/redaction; `headerStripRedactor` is the minimum that is always safe to apply.
 */
import type { Kind } from '../kinds.js';

export interface Redactor {
  /** May mutate and return `rec`. Throwing means "could not redact": the caller drops free text. */
  redactRecord(kind: Kind, rec: Record<string, unknown>): Record<string, unknown>;
}

const SENSITIVE_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key)$|token|secret|key|password|auth/i;

function stripHeaders(h: unknown): void {
  if (!h || typeof h !== 'object') return;
  const map = h as Record<string, unknown>;
  for (const name of Object.keys(map)) if (SENSITIVE_HEADER.test(name)) map[name] = '[REDACTED:header]';
}

export const headerStripRedactor: Redactor = {
  redactRecord(_kind, rec) {
    stripHeaders(rec.headers);
    stripHeaders(rec.request_headers);
    stripHeaders(rec.response_headers);
    return rec;
  },
};

/** Fields that carry page text; dropped whole when redaction fails on a record (fail closed). */
export const FREE_TEXT_FIELDS = ['message', 'args', 'stack', 'request_body', 'response_body', 'data', 'response', 'headers', 'request_headers', 'response_headers', 'value', 'reason', 'error', 'selectors'] as const;
