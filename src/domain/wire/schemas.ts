/**
 * PROTOCOL.md v1 as zod schemas; the TypeScript types are z.infer of them.
 * Frames are validated without their record arrays (each record is validated on its own, so one
 * bad record does not reject its batch). Unknown fields are stripped, not rejected: producers
 * may be newer than we are. Hard caps here refuse abuse; truncation limits live in normalize.ts.
 */
import { z } from 'zod';
import { KINDS, type Kind } from '../kinds.js';

const HARD_STRING = 1024 * 1024; // a single string above this is abuse, not data to truncate
const str = (max = HARD_STRING) => z.string().max(max);
const int = () => z.number().int().min(-(2 ** 53)).max(2 ** 53);
const num = () => z.number().finite();
const ts = z.union([num(), z.string().max(64)]);
const headers = z.record(z.string().max(1024), z.string().max(64 * 1024));

// ---------------------------------------------------------------- frames (client → server)

export const HelloFrameSchema = z.object({
  t: z.literal('hello'),
  v: int(),
  client: str(64),
  version: str(64),
  session: z.string().min(1).max(128),
  last_acked_seq: int().min(-1).optional(),
  token: str(1024).optional(),
  /** [ext] pairing (PROTOCOL.md "Pairing"): the producer's nonce, and `pair` for the one-time exchange */
  auth: z
    .object({
      v: int(),
      nonce: z.string().regex(/^[0-9a-f]{64}$/),
      pair: z.object({ mode: z.enum(['code', 'tofu']), pub: str(256) }).optional(),
    })
    .optional(),
});

const records = z.array(z.unknown()).optional();
/** one optional array per kind, named as the kind (kinds.ts) */
const recordArrays = Object.fromEntries(KINDS.map((k) => [k, records])) as { [K in Kind]: typeof records };

export const BatchFrameSchema = z.object({
  t: z.literal('batch'),
  seq: int().min(0),
  sent_at: num(),
  tab_id: int().optional(),
  page_url: str(8192).optional(),
  ...recordArrays,
});

export const PingFrameSchema = z.object({ t: z.literal('ping'), ts: num() });
export const PongFrameSchema = z.object({ t: z.literal('pong'), ts: num() });
export const ResultFrameSchema = z.object({
  t: z.literal('result'),
  id: z.string().min(1).max(128),
  status: z.enum(['complete', 'error', 'timeout']),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});

/** [ext] the side panel's session token (PROTOCOL.md "Panel tokens"): `id` pairs the answer with the ask */
export const PanelTokenFrameSchema = z.object({ t: z.literal('panel_token'), id: z.string().min(1).max(64) });

export const ClientFrameSchema = z.discriminatedUnion('t', [HelloFrameSchema, BatchFrameSchema, PingFrameSchema, PongFrameSchema, ResultFrameSchema, PanelTokenFrameSchema]);

export type HelloFrame = z.infer<typeof HelloFrameSchema>;
export type BatchFrame = z.infer<typeof BatchFrameSchema>;
export type ClientFrame = z.infer<typeof ClientFrameSchema>;
export const CLIENT_FRAME_TYPES = new Set(['hello', 'batch', 'ping', 'pong', 'result', 'panel_token']);

// ---------------------------------------------------------------- records (PROTOCOL.md §2)

export const LogRecordSchema = z.object({
  ts,
  level: z.enum(['debug', 'log', 'info', 'warn', 'error']),
  type: z.enum(['console', 'exception', 'network']),
  message: str(),
  args: z.array(z.unknown()).max(1000).optional(),
  url: str().optional(),
  source: str().optional(),
  stack: str().optional(),
  filename: str().optional(),
  lineno: int().optional(),
  colno: int().optional(),
  method: str(32).optional(),
  request_url: str().optional(),
  status: int().optional(),
  status_text: str(1024).optional(),
  duration: num().optional(),
  response: str().optional(),
  error: str().optional(),
  headers: headers.optional(),
  args_truncated: z.boolean().optional(),
  response_truncated: z.boolean().optional(),
});

export const NetworkRecordSchema = z.object({
  ts,
  method: str(32),
  url: str(),
  status: int(),
  duration: num(),
  initiator_type: str(64).optional(),
  transfer_size: num().optional(),
  encoded_body_size: num().optional(),
  decoded_body_size: num().optional(),
  page_url: str().optional(),
  error: str().optional(),
});

/**
 * One cookie a response set, as the extension reads its Set-Cookie header: the value is never
 * sent (PROTOCOL.md §2). A field here that could carry one does not exist.
 */
export const CookieSchema = z.object({
  name: str(256),
  secure: z.boolean(),
  http_only: z.boolean(),
  same_site: str(16).optional(),
  domain: str(256).optional(),
  path: str(256).optional(),
  partitioned: z.boolean().optional(),
  /** session: no Expires/Max-Age; long_lived: over a year; deletion: already expired */
  expiry: z.enum(['session', 'persistent', 'long_lived', 'deletion']),
});

export const NetworkBodyRecordSchema = z.object({
  ts,
  method: str(32),
  url: str(),
  status: int(),
  content_type: str(1024).optional(),
  duration: num().optional(),
  request_headers: headers.optional(),
  response_headers: headers.optional(),
  request_body: str().optional(),
  response_body: str().optional(),
  request_truncated: z.boolean().optional(),
  response_truncated: z.boolean().optional(),
  /** [ext] the tab's own document load, seen by the service worker: response_headers holds its security headers only */
  document: z.boolean().optional(),
  /** [ext] the cookies this response set: name and attributes, never a value */
  cookies: z.array(CookieSchema).max(50).optional(),
  /** [ext] cookies past the 50 sent */
  cookies_dropped: int().min(0).optional(),
});

export const WsEventRecordSchema = z.object({
  ts,
  // untracked: the extension let the connection go for a newer one (it follows 20 at once)
  event: z.enum(['open', 'message', 'close', 'error', 'untracked']),
  id: z.string().min(1).max(256),
  url: str().optional(),
  direction: z.enum(['incoming', 'outgoing']).optional(),
  data: str().optional(),
  size: num().optional(),
  code: int().optional(),
  reason: str(4096).optional(),
  truncated: z.boolean().optional(),
  adopted: z.boolean().optional(),
});

export const CLICK_EFFECTS = ['dom', 'request', 'navigation', 'none'] as const;

export const ActionRecordSchema = z.object({
  ts,
  type: z.enum(['click', 'input', 'keypress', 'navigate', 'scroll', 'select', 'submit']),
  url: str().optional(),
  selectors: z
    .object({
      test_id: str(1024).optional(),
      aria_label: str(1024).optional(),
      role: str(128).optional(),
      id: str(1024).optional(),
      text: str(4096).optional(),
      css_path: str(4096).optional(),
    })
    .optional(),
  value: str().optional(),
  key: str(64).optional(),
  from_url: str().optional(),
  to_url: str().optional(),
  scroll_y: num().optional(),
  source: z.enum(['user', 'agent']).optional(),
  /**
   * click only: what the click changed first, within 1 s (the extension watches the DOM, the
   * page's requests and its navigation); "none" is a dead click. Absent: not watched.
   */
  effect: z.enum(CLICK_EFFECTS).optional(),
});

const metric = num().nullable().optional();
export const PerfRecordSchema = z.object({
  ts,
  url: str(),
  timing: z.object({ ttfb: metric, fcp: metric, lcp: metric, cls: metric, inp: metric, dom_content_loaded: metric, load: metric }),
  long_tasks: z.object({ count: num(), total_blocking_time: num(), longest: num() }).optional(),
  resources: z.object({ count: num(), transfer_size: num() }).optional(),
});

/** The schema column of the kinds table (kinds.ts): every kind has exactly one. */
export const RECORD_SCHEMAS = {
  logs: LogRecordSchema,
  network: NetworkRecordSchema,
  network_bodies: NetworkBodyRecordSchema,
  ws_events: WsEventRecordSchema,
  actions: ActionRecordSchema,
  perf: PerfRecordSchema,
  ext_logs: LogRecordSchema,
} as const satisfies Record<Kind, z.ZodType>;

export type LogRecord = z.infer<typeof LogRecordSchema>;
export type NetworkRecord = z.infer<typeof NetworkRecordSchema>;
export type NetworkBodyRecord = z.infer<typeof NetworkBodyRecordSchema>;
export type CookieRecord = z.infer<typeof CookieSchema>;
export type WsEventRecord = z.infer<typeof WsEventRecordSchema>;
export type ActionRecord = z.infer<typeof ActionRecordSchema>;
export type PerfRecord = z.infer<typeof PerfRecordSchema>;

/** A record of kind K as it passed validation. */
export type WireRecordOf<K extends Kind> = z.infer<(typeof RECORD_SCHEMAS)[K]>;

/** What ingest adds to a validated record before it is stored (redaction, truncation, detection). */
export interface IngestMarks {
  /** redaction threw: free text was dropped, metadata kept */
  redaction_failed?: boolean;
  /** the error signature hash detection computed (observe folds errors by it) */
  _sig?: number;
  message_truncated?: boolean;
  stack_truncated?: boolean;
  value_truncated?: boolean;
}

/** Fields that carry page text; dropped whole when redaction fails on a record (fail closed). */
export const FREE_TEXT_FIELDS = ['message', 'args', 'stack', 'request_body', 'response_body', 'data', 'response', 'headers', 'request_headers', 'response_headers', 'value', 'reason', 'error', 'selectors'] as const;
type FreeText = (typeof FREE_TEXT_FIELDS)[number];

/**
 * A stored record of kind K: validated, its time in epoch ms, with ingest's marks. Its free-text
 * fields may be gone (a record whose redaction failed keeps its metadata only).
 */
export type IngestedRecordOf<K extends Kind> = Omit<WireRecordOf<K>, 'ts' | FreeText> &
  Partial<Pick<WireRecordOf<K>, Extract<keyof WireRecordOf<K>, FreeText>>> & { ts: number } & IngestMarks;

/** A stored record with its kind beside it: switching on `kind` narrows `rec`. */
export type IngestedRecord = { [K in Kind]: { kind: K; rec: IngestedRecordOf<K> } }[Kind];
