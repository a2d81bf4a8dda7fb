/**
 * The worker's core as pure functions: a decoded batch (or an HTTP body) → validated,
 * redacted, normalized records ready for the rings, plus per-record errors and counts.
 * A bad record is rejected with its index and reason; the good ones of the same batch go on.
 */
import { kindId, type Kind } from '../kinds.js';
import { HTTP_BODY_KEYS, BATCH_ARRAYS, RECORD_SCHEMAS, type BatchArray, type BatchFrame } from '../wire/schemas.js';
import { normalizeRecord, toEpochMs } from '../wire/normalize.js';
import { FREE_TEXT_FIELDS, type Redactor } from './redactor.js';
import type { ErrorCode } from '../../errors.js';
import type { StagedRecord } from '../../shm/index.js';

export interface IngestLimits {
  max_events_per_batch: number;
  max_errors_per_ack: number;
}

export interface IngestContext {
  recvTime: number;
  redactor: Redactor;
  limits: IngestLimits;
  /** sees every stored record once, redacted and cut to size (anomaly detection) */
  detect?: (kind: Kind, rec: Record<string, unknown>, pageUrl: string | undefined) => void;
}

export interface RecordError {
  index: number;
  kind: string;
  code: string;
  message: string;
}

export interface IngestOutput {
  records: StagedRecord[];
  /** per kind id */
  received: number[];
  rejected: number[];
  redactionFailed: number[];
  errors: RecordError[];
}

const KIND_OF: Record<BatchArray, Kind> = {
  logs: 'logs',
  network: 'network',
  network_bodies: 'network_bodies',
  ws_events: 'ws_events',
  actions: 'actions',
  perf: 'perf',
  ext_logs: 'ext_logs',
};

/** Fields where the batch's page_url fills in a missing page address. */
const PAGE_FIELD: Partial<Record<BatchArray, string>> = { logs: 'url', network: 'page_url', actions: 'url', ext_logs: 'url' };

function emptyOutput(): IngestOutput {
  const z = () => BATCH_ARRAYS.map(() => 0);
  return { records: [], received: z(), rejected: z(), redactionFailed: z(), errors: [] };
}

export function processBatchFrame(frame: BatchFrame, ctx: IngestContext): IngestOutput {
  resetStaging();
  const out = emptyOutput();
  let total = 0;
  for (const k of BATCH_ARRAYS) total += frame[k]?.length ?? 0;
  const tooMany = total > ctx.limits.max_events_per_batch;
  const tab = frame.tab_id ?? -1;
  for (const k of BATCH_ARRAYS) {
    const arr = frame[k];
    if (!arr || arr.length === 0) continue;
    if (tooMany) {
      // Refused whole but acknowledged (not nacked): resending it would never help.
      const id = kindId(KIND_OF[k]);
      out.received[id]! += arr.length;
      out.rejected[id]! += arr.length;
      pushError(out, ctx, { index: -1, kind: k, code: 'too_many_events', message: `batch holds ${total} events; max_events_per_batch is ${ctx.limits.max_events_per_batch}` });
      continue;
    }
    processArray(k, arr, tab, frame.page_url, ctx, out);
  }
  return out;
}

export type HttpRoute = keyof typeof HTTP_BODY_KEYS;

export type HttpIngestResult = ({ ok: true } & IngestOutput) | { ok: false; code: ErrorCode; message: string };

export function processHttpBody(route: HttpRoute, body: Uint8Array, ctx: IngestContext): HttpIngestResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (e) {
    return { ok: false, code: 'bad_json', message: `body is not valid JSON: ${(e as Error).message}` };
  }
  const [key, kind] = HTTP_BODY_KEYS[route];
  const arr = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(arr)) return { ok: false, code: 'invalid_body', message: `expected {"${key}": [...]} for ${route}` };
  if (arr.length > ctx.limits.max_events_per_batch) {
    return { ok: false, code: 'too_many_events', message: `${arr.length} entries; at most ${ctx.limits.max_events_per_batch} per request` };
  }
  resetStaging();
  const out = emptyOutput();
  processArray(kind, arr, -1, undefined, ctx, out);
  return { ok: true, ...out };
}

function processArray(k: BatchArray, arr: unknown[], tab: number, pageUrl: string | undefined, ctx: IngestContext, out: IngestOutput): void {
  const kind = KIND_OF[k];
  const id = kindId(kind);
  const schema = RECORD_SCHEMAS[k];
  const pageField = PAGE_FIELD[k];
  out.received[id]! += arr.length;
  const recs: Record<string, unknown>[] = [];
  const times: number[] = [];
  for (let i = 0; i < arr.length; i++) {
    const parsed = schema.safeParse(arr[i]);
    if (!parsed.success) {
      out.rejected[id]!++;
      const issue = parsed.error.issues[0]!;
      pushError(out, ctx, { index: i, kind: k, code: 'invalid_record', message: `${issue.path.join('.') || '(record)'}: ${issue.message}` });
      continue;
    }
    const rec = parsed.data as Record<string, unknown>;
    const clientTime = toEpochMs(rec.ts as number | string);
    if (Number.isNaN(clientTime)) {
      out.rejected[id]!++;
      pushError(out, ctx, { index: i, kind: k, code: 'invalid_record', message: `ts: ${JSON.stringify(rec.ts)} is neither epoch ms nor ISO 8601` });
      continue;
    }
    rec.ts = clientTime;
    if (pageField && pageUrl !== undefined && rec[pageField] === undefined) rec[pageField] = pageUrl;
    recs.push(rec);
    times.push(clientTime);
  }
  // Most records hold no secret; the redactor may say which could, for the whole array at once.
  let mayHold: Uint8Array | undefined;
  try {
    mayHold = ctx.redactor.triggered?.(kind, recs);
  } catch {
    mayHold = undefined; // then every record goes through the rules
  }
  for (let j = 0; j < recs.length; j++) {
    const rec = recs[j]!;
    let safe = rec;
    if (!mayHold || mayHold[j] === 1) {
      try {
        safe = ctx.redactor.redactRecord(kind, rec);
      } catch {
        // Fail closed: nothing unredacted is stored; the record keeps its metadata only.
        for (const f of FREE_TEXT_FIELDS) delete rec[f];
        rec.redaction_failed = true;
        out.redactionFailed[id]!++;
        safe = rec;
      }
    }
    normalizeRecord(k, safe);
    ctx.detect?.(kind, safe, pageUrl);
    out.records.push({ kind: id, clientTime: times[j]!, tab, payload: stage(JSON.stringify(safe)) });
  }
}

/**
 * Payload staging: UTF-8 is written into one reusable buffer and records get subarrays of it,
 * instead of a Buffer allocation per record (a third of the encode cost). The ring writer copies
 * the bytes before the next batch reuses the staging buffer, so a batch must be committed before
 * the next one is processed — which is how the worker runs.
 */
let staging = Buffer.allocUnsafeSlow(256 * 1024);
let stagingPos = 0;

export function resetStaging(): void {
  stagingPos = 0;
}

function stage(json: string): Uint8Array {
  const worst = json.length * 3;
  if (stagingPos + worst > staging.length) {
    if (worst > staging.length / 4) return Buffer.from(json, 'utf8');
    // Earlier records of this batch still point into the old buffer; it stays alive through them.
    staging = Buffer.allocUnsafeSlow(staging.length);
    stagingPos = 0;
  }
  const n = staging.write(json, stagingPos, 'utf8');
  const view = staging.subarray(stagingPos, stagingPos + n);
  stagingPos += n;
  return view;
}

function pushError(out: IngestOutput, ctx: IngestContext, e: RecordError): void {
  if (out.errors.length < ctx.limits.max_errors_per_ack) out.errors.push(e);
}
