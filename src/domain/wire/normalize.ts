/**
 * After validation and redaction: one time form, and the truncation limits of PROTOCOL.md §2,
 * enforced whatever the producer did. A value cut by a limit is marked `*_truncated: true`.
 * Redaction always runs before this: a secret cut in half would survive as its first half.
 */
import type { Kind } from '../kinds.js';

/** Every truncation limit, in UTF-16 code units (what JS strings measure). */
export const LIMITS = {
  message: 16 * 1024,
  stack: 16 * 1024,
  url: 8 * 1024,
  arg: 10 * 1024,
  response: 5 * 1024,
  request_body: 8 * 1024,
  response_body: 16 * 1024,
  ws_data: 4 * 1024,
  header_value: 4 * 1024,
  error: 4 * 1024,
  value: 1024,
  args: 100,
} as const;

/** ISO-8601 string or epoch ms → epoch ms; NaN when unparseable. */
export function toEpochMs(ts: number | string): number {
  if (typeof ts === 'number') return ts;
  const t = Date.parse(ts);
  return t;
}

/** Cuts a string without splitting a surrogate pair. */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

type Rec = Record<string, unknown>;

/**
 * An upper bound of `JSON.stringify(v).length`, given up (returning more than `budget`) once it
 * passes `budget`: a console argument is stringified only when it might be too long, instead of
 * for every record (that stringify was two thirds of normalize). Each UTF-16 unit of a string
 * costs at most 6 (`\u001f`, a lone surrogate), a number at most 24; objects with a prototype of
 * their own (Date, bytes) may serialise as anything (`toJSON`), so they give up at once.
 */
function jsonBound(v: unknown, budget: number): number {
  switch (typeof v) {
    case 'string':
      return 2 + 6 * v.length;
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'bigint':
      return budget + 1; // JSON.stringify throws on it: let it
    case 'object': {
      if (v === null) return 4;
      let n = 2;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length && n <= budget; i++) n += 1 + jsonBound(v[i], budget - n);
        return n;
      }
      if (Object.getPrototypeOf(v) !== Object.prototype) return budget + 1;
      const o = v as Rec;
      for (const k in o) {
        if (n > budget) break;
        n += 4 + 6 * k.length + jsonBound(o[k], budget - n);
      }
      return n;
    }
    default:
      // undefined or a function in an array becomes "null"; in an object it is left out
      return 4;
  }
}

/** whether the record in hand was changed: the worker stores a record it did not change as its producer's bytes */
let changed = false;

function cutField(r: Rec, field: string, max: number, flag?: string): void {
  const v = r[field];
  if (typeof v === 'string' && v.length > max) {
    r[field] = cut(v, max);
    if (flag) r[flag] = true;
    changed = true;
  }
}

function cutHeaders(r: Rec, field: string): void {
  const h = r[field] as Record<string, string> | undefined;
  if (!h) return;
  for (const k of Object.keys(h)) {
    if (h[k]!.length > LIMITS.header_value) {
      h[k] = cut(h[k]!, LIMITS.header_value);
      changed = true;
    }
  }
}

/** Address-like fields per kind: only these are measured (a loop over absent fields costs 5 % of ingest). */
export const URL_FIELDS: Record<Kind, readonly string[]> = {
  logs: ['url', 'request_url', 'source', 'filename'],
  ext_logs: ['url', 'request_url', 'source', 'filename'],
  network: ['url', 'page_url'],
  network_bodies: ['url'],
  ws_events: ['url'],
  actions: ['url', 'from_url', 'to_url'],
  perf: ['url'],
};

/**
 * Per kind, its URL_FIELDS cut to LIMITS.url, compiled once so each field is read by name: a loop
 * over the names (`r[f]`, f varying) is a megamorphic keyed load per field, most of them absent.
 * The source is built from the constant lists above (JSON-quoted), never from input.
 */
const CUT_URLS = Object.fromEntries(
  Object.entries(URL_FIELDS).map(([kind, fields]) => {
    const body = fields.map((f) => `v = r[${JSON.stringify(f)}]; if (typeof v === 'string' && v.length > max) { r[${JSON.stringify(f)}] = cut(v, max); cuts = true; }`);
    return [kind, new Function('r', 'cut', 'max', `let v;\nlet cuts = false;\n${body.join('\n')}\nreturn cuts;`) as (r: Rec, c: typeof cut, max: number) => boolean];
  }),
) as Record<Kind, (r: Rec, c: typeof cut, max: number) => boolean>;

/**
 * Field names drive truncation whatever the kind, so it works on the record's untyped view.
 * Returns whether it changed anything (a record it left alone may be stored as its producer's bytes).
 */
export function normalizeRecord(kind: Kind, record: object): boolean {
  const r = record as Rec;
  changed = CUT_URLS[kind](r, cut, LIMITS.url);
  cutRest(kind, r);
  return changed;
}

function cutRest(kind: Kind, r: Rec): void {
  if (r.error !== undefined) cutField(r, 'error', LIMITS.error);
  switch (kind) {
    case 'logs':
    case 'ext_logs': {
      cutField(r, 'message', LIMITS.message, 'message_truncated');
      cutField(r, 'stack', LIMITS.stack, 'stack_truncated');
      cutField(r, 'response', LIMITS.response, 'response_truncated');
      cutHeaders(r, 'headers');
      const args = r.args as unknown[] | undefined;
      if (args) {
        let truncated = args.length > LIMITS.args;
        const out = truncated ? args.slice(0, LIMITS.args) : args;
        for (let i = 0; i < out.length; i++) {
          const a = out[i];
          // Only values that can be long are measured; numbers, booleans and short strings pass.
          if (typeof a === 'string') {
            if (a.length > LIMITS.arg) {
              out[i] = cut(a, LIMITS.arg);
              truncated = true;
            }
          } else if (a !== null && typeof a === 'object' && jsonBound(a, LIMITS.arg) > LIMITS.arg) {
            const json = JSON.stringify(a);
            if (json.length > LIMITS.arg) {
              out[i] = `${cut(json, LIMITS.arg)}…`;
              truncated = true;
            }
          }
        }
        r.args = out;
        if (truncated) {
          r.args_truncated = true;
          changed = true;
        }
      }
      return;
    }
    case 'network_bodies':
      cutField(r, 'request_body', LIMITS.request_body, 'request_truncated');
      cutField(r, 'response_body', LIMITS.response_body, 'response_truncated');
      cutHeaders(r, 'request_headers');
      cutHeaders(r, 'response_headers');
      return;
    case 'ws_events':
      cutField(r, 'data', LIMITS.ws_data, 'truncated');
      return;
    case 'actions':
      cutField(r, 'value', LIMITS.value, 'value_truncated');
      return;
    case 'network':
    case 'perf':
      return;
  }
}
