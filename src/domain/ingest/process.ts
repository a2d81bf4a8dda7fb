/**
 * The worker's core as pure functions: a decoded batch (or an HTTP body) → validated,
 * redacted, normalized records ready for the rings, plus per-record errors and counts.
 * A bad record is rejected with its index and reason; the good ones of the same batch go on.
 */
import { HTTP_BODY, KINDS, PAGE_FIELD, kindId, type HttpRoute, type Kind } from '../kinds.js';
import { RECORD_SCHEMAS, type BatchFrame, type IngestedRecord, type IngestedRecordOf, type WireRecordOf } from '../wire/schemas.js';
import { normalizeRecord, toEpochMs } from '../wire/normalize.js';
import { compileCheck, NOT_SURE, taken, type FastCheck } from '../wire/fast-check.js';
import { FREE_TEXT_FIELDS, type Redactor, type UntypedRecord } from './redactor.js';
import type { ErrorCode } from '../../errors.js';
import { REC_MSGPACK, type StagedRecord } from '../../shm/index.js';
import { recordFlags, type Classifiable } from '../record-flags.js';
import type { RecordSpans } from '../wire/record-spans.js';
import { noteJsonBody } from '../wire/json-spans.js';
import { SIG_BYTES, writeSig } from '../wire/stored-record.js';

export interface IngestLimits {
  max_events_per_batch: number;
  max_errors_per_ack: number;
}

export interface IngestContext {
  recvTime: number;
  redactor: Redactor;
  limits: IngestLimits;
  /**
   * sees every stored record once, redacted and cut to size (anomaly detection). `r` is one
   * wrapper per array, its `rec` replaced record by record: keep `r.rec`, never `r`.
   */
  detect?: (r: IngestedRecord, pageUrl: string | undefined) => void;
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

/** The record schemas compiled once per thread: zod itself runs only for records these are not sure of. */
const RECORD_CHECKS = Object.fromEntries(KINDS.map((k) => [k, compileCheck(RECORD_SCHEMAS[k], true)])) as Record<Kind, FastCheck | null>;

export function emptyOutput(): IngestOutput {
  const z = () => KINDS.map(() => 0);
  return { records: [], received: z(), rejected: z(), redactionFailed: z(), errors: [] };
}

/**
 * `spans`: where the pre-scan found each record's bytes (decodeFrame's, for this frame). A record
 * that comes out of validation, redaction, normalisation and detection exactly as it was decoded
 * is then stored as those bytes (msgpack, REC_MSGPACK) instead of being serialised to JSON: the
 * encode was a quarter of the worker path (issue 17).
 */
export function processBatchFrame(frame: BatchFrame, ctx: IngestContext, spans?: RecordSpans): IngestOutput {
  resetStaging();
  const out = emptyOutput();
  let total = 0;
  for (const k of KINDS) total += frame[k]?.length ?? 0;
  const tooMany = total > ctx.limits.max_events_per_batch;
  const tab = frame.tab_id ?? -1;
  for (const k of KINDS) {
    const arr = frame[k];
    if (!arr || arr.length === 0) continue;
    if (tooMany) {
      // Refused whole but acknowledged (not nacked): resending it would never help.
      const id = kindId(k);
      out.received[id]! += arr.length;
      out.rejected[id]! += arr.length;
      pushError(out, ctx, { index: -1, kind: k, code: 'too_many_events', message: `batch holds ${total} events; max_events_per_batch is ${ctx.limits.max_events_per_batch}` });
      continue;
    }
    processArray(k, arr, tab, frame.page_url, ctx, out, spans);
  }
  return out;
}

export type HttpIngestResult = ({ ok: true } & IngestOutput) | { ok: false; code: ErrorCode; message: string };

/**
 * `spans`: the table the body's elements are noted in (noteJsonBody), so that a record left as it
 * came is stored as its bytes; left out, every record is serialised.
 */
export function processHttpBody(route: HttpRoute, body: Uint8Array, ctx: IngestContext, spans?: RecordSpans): HttpIngestResult {
  let parsed: unknown;
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, code: 'bad_json', message: `body is not valid JSON: ${(e as Error).message}` };
  }
  const { bodyKey: key, kind } = HTTP_BODY[route];
  const arr = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(arr)) return { ok: false, code: 'invalid_body', message: `expected {"${key}": [...]} for ${route}` };
  if (arr.length > ctx.limits.max_events_per_batch) {
    return { ok: false, code: 'too_many_events', message: `${arr.length} entries; at most ${ctx.limits.max_events_per_batch} per request` };
  }
  resetStaging();
  const out = emptyOutput();
  if (spans) noteJsonBody(text, body, key, kindId(kind), spans);
  processArray(kind, arr, -1, undefined, ctx, out, spans);
  return { ok: true, ...out };
}

function processArray<K extends Kind>(kind: K, arr: unknown[], tab: number, pageUrl: string | undefined, ctx: IngestContext, out: IngestOutput, spans?: RecordSpans): void {
  const id = kindId(kind);
  const recs = validateRecords(kind, arr, pageUrl, ctx, out, spans);
  redactRecords(kind, recs, ctx, out);
  const detect = ctx.detect;
  // one wrapper for the array, not one per record: detection keeps the record, not the wrapper
  const seen: { kind: K; rec: IngestedRecordOf<K> } | undefined = detect && recs.length ? { kind, rec: recs[0]! } : undefined;
  for (let j = 0; j < recs.length; j++) {
    const safe = recs[j]!;
    if (normalizeRecord(kind, safe)) verbatim[j] = -1;
    if (seen) {
      seen.rec = safe;
      // TS cannot pair a generic K with its record in the IngestedRecord union on its own
      detect!(seen as unknown as IngestedRecord, pageUrl);
    }
  }
  encodeRecords(id, recs, tab, out.records, spans);
}

/**
 * Per validated record of the array in hand (validateRecords writes it, each later stage may only
 * clear it): the row of its frame element in the span table when the record is still exactly what
 * the element's bytes decode to, else -1. Reused array after array, as the staging buffer is.
 */
let verbatim = new Int32Array(1024);

/** the stages after validation: this record is no longer its element's bytes */
export function notVerbatim(j: number): void {
  verbatim[j] = -1;
}

/**
 * The stages of a record array, in order: validate, redact, then per record normalize, detect and
 * encode. Exported one by one so the pipeline bench times each on the same code (µs per record by
 * stage, issue 17); processArray runs them fused.
 *
 * Validate: each record through its kind's check (zod where the check is not sure), its time made
 * epoch ms, the frame's page URL filled in. A bad record is counted and reported, not returned.
 */
export function validateRecords<K extends Kind>(kind: K, arr: unknown[], pageUrl: string | undefined, ctx: IngestContext, out: IngestOutput, spans?: RecordSpans): Array<IngestedRecordOf<K>> {
  const id = kindId(kind);
  const schema = RECORD_SCHEMAS[kind];
  const fast = RECORD_CHECKS[kind];
  const pageField = PAGE_FIELD[kind];
  out.received[id]! += arr.length;
  const recs: Array<IngestedRecordOf<K>> = [];
  if (verbatim.length < arr.length) verbatim = new Int32Array(arr.length * 2);
  // the span table describes this array only when it noted as many elements as were decoded
  const rows = spans !== undefined && spans.count[id] === arr.length ? spans : undefined;
  for (let i = 0; i < arr.length; i++) {
    taken.keys = 0;
    let checked = fast ? fast(arr[i]) : NOT_SURE;
    // what the compiled check took is counted; zod's parse is not: only a sure check's record may be its bytes
    let row = rows !== undefined && checked !== NOT_SURE ? rows.row(id, i) : -1;
    if (checked === NOT_SURE) {
      // zod decides, and words the rejection
      const parsed = schema.safeParse(arr[i]);
      if (!parsed.success) {
        out.rejected[id]!++;
        const issue = parsed.error.issues[0]!;
        pushError(out, ctx, { index: i, kind, code: 'invalid_record', message: `${issue.path.join('.') || '(record)'}: ${issue.message}` });
        continue;
      }
      checked = parsed.data;
    }
    // K's schema (or its compiled check) passed it: its output is K's record (TS cannot follow the index)
    const wire = checked as WireRecordOf<K>;
    // an ISO time becomes epoch ms here: no longer what the bytes say
    if (typeof wire.ts !== 'number') row = -1;
    const clientTime = toEpochMs(wire.ts);
    if (Number.isNaN(clientTime)) {
      out.rejected[id]!++;
      pushError(out, ctx, { index: i, kind, code: 'invalid_record', message: `ts: ${JSON.stringify(wire.ts)} is neither epoch ms nor ISO 8601` });
      continue;
    }
    // in place (the check's or zod's own output object): a copy per record would cost more than the rest of this loop
    (wire as UntypedRecord).ts = clientTime;
    const rec = wire as unknown as IngestedRecordOf<K>;
    if (pageField && pageUrl !== undefined) {
      // the field comes from the kinds table, not from the record's type
      const loose = rec as UntypedRecord;
      if (loose[pageField] === undefined) {
        loose[pageField] = pageUrl;
        row = -1;
      }
    }
    if (row >= 0 && taken.keys !== rows!.entries[row]) row = -1;
    verbatim[recs.length] = row;
    recs.push(rec);
  }
  return recs;
}

/** Redact: each record replaced by what the redactor made of it, or stripped of its free text (fail closed). */
export function redactRecords<K extends Kind>(kind: K, recs: Array<IngestedRecordOf<K>>, ctx: IngestContext, out: IngestOutput): void {
  const id = kindId(kind);
  // Most records hold no secret; the redactor may say which could, for the whole array at once.
  let mayHold: Uint8Array | undefined;
  try {
    mayHold = ctx.redactor.triggered?.(kind, recs);
  } catch {
    mayHold = undefined; // then every record goes through the rules
  }
  for (let j = 0; j < recs.length; j++) {
    if (mayHold && mayHold[j] !== 1) continue;
    // whatever the rules make of it, it is no longer known to be its bytes
    verbatim[j] = -1;
    const rec = recs[j]!;
    try {
      // redaction replaces text by text: the record keeps its kind's shape
      recs[j] = ctx.redactor.redactRecord(kind, rec) as IngestedRecordOf<K>;
    } catch {
      // Fail closed: nothing unredacted is stored; the record keeps its metadata only.
      const loose = rec as UntypedRecord;
      for (const f of FREE_TEXT_FIELDS) delete loose[f];
      rec.redaction_failed = true;
      out.redactionFailed[id]!++;
    }
  }
}

/** Encode: the record as its ring payload (JSON, staged; see `stage`). */
export function encodeRecord(kindId: number, rec: { ts: number } & Classifiable, tab: number): StagedRecord {
  return { kind: kindId, clientTime: rec.ts, tab, payload: stage(JSON.stringify(rec)), flags: recordFlags(rec) };
}

/** where one record's JSON ends and the next one's begins, in the JSON of the array */
const BOUNDARY = '},{"ts":';

/**
 * Encode a whole array: one JSON.stringify of the array, cut at the records' boundaries, instead of
 * one call per record (JSON.stringify is ~a quarter of the worker path; the array costs ~17 % less
 * than its records one by one). Every record's JSON starts with `{"ts":` (ts is the first key of
 * every record schema, and validate sets it), so the array holds at least n − 1 boundaries; a
 * nested object can make one more (`args: [{}, {"ts": 1}]`), and then the count is off and the
 * records are encoded one by one. Exactly n − 1 means every boundary found is a record's.
 */
export function encodeRecords(kindId: number, recs: ReadonlyArray<{ ts: number } & Classifiable>, tab: number, into: StagedRecord[], spans?: RecordSpans): void {
  if (spans !== undefined) {
    let kept = 0;
    for (let j = 0; j < recs.length; j++) {
      const row = verbatim[j]!;
      if (row < 0) continue;
      // detection gave an error its signature, the one key a record gets after normalisation: it
      // travels in front of the bytes (stageBytes), so any 32-bit one keeps the record as its bytes
      const sig = (recs[j] as { _sig?: number })._sig;
      if (sig !== undefined && !(Number.isInteger(sig) && sig >= -0x80000000 && sig <= 0xffffffff)) verbatim[j] = -1;
      else kept++;
    }
    if (kept > 0) return encodeMixed(kindId, recs, tab, into, spans, kept);
  }
  encodeJson(kindId, recs, tab, into);
}

/** Some records of the array stored as their bytes, the rest as JSON, in the array's order. */
function encodeMixed(kindId: number, recs: ReadonlyArray<{ ts: number } & Classifiable>, tab: number, into: StagedRecord[], spans: RecordSpans, kept: number): void {
  const n = recs.length;
  let json: StagedRecord[] | undefined;
  if (kept < n) {
    const rest: Array<{ ts: number } & Classifiable> = [];
    for (let j = 0; j < n; j++) if (verbatim[j]! < 0) rest.push(recs[j]!);
    json = [];
    encodeJson(kindId, rest, tab, json);
  }
  let r = 0;
  for (let j = 0; j < n; j++) {
    const row = verbatim[j]!;
    const rec = recs[j]!;
    if (row < 0) into.push(json![r++]!);
    else if (spans.json) into.push({ kind: kindId, clientTime: rec.ts, tab, payload: stageJsonBytes(spans, row, (rec as { _sig?: number })._sig), flags: recordFlags(rec) });
    else into.push({ kind: kindId, clientTime: rec.ts, tab, payload: stageBytes(spans, row, (rec as { _sig?: number })._sig), flags: recordFlags(rec) | REC_MSGPACK });
  }
}

function encodeJson(kindId: number, recs: ReadonlyArray<{ ts: number } & Classifiable>, tab: number, into: StagedRecord[]): void {
  const n = recs.length;
  if (n > 1) {
    const json = JSON.stringify(recs);
    const ends = cutPoints(json, n);
    if (ends) {
      // ASCII JSON (the usual case) is written once, and each record's bytes copied from it to an
      // 8-byte boundary (see stageAscii); a character offset is then a byte offset. Else each
      // record's slice is written on its own.
      const ascii = stageAscii(json, n);
      let start = 1;
      for (let i = 0; i < n; i++) {
        const end = i + 1 < n ? ends[i]! + 1 : json.length - 1;
        const payload = ascii ? placeAscii(start, end - start) : stage(json.slice(start, end));
        into.push({ kind: kindId, clientTime: recs[i]!.ts, tab, payload, flags: recordFlags(recs[i]!) });
        start = end + 1;
      }
      return;
    }
  }
  for (let i = 0; i < n; i++) into.push(encodeRecord(kindId, recs[i]!, tab));
}

let cuts = new Int32Array(1024);

/** the positions of the n − 1 boundaries' `}`, or null when there are not exactly n − 1 */
function cutPoints(json: string, n: number): Int32Array | null {
  if (cuts.length < n) cuts = new Int32Array(n * 2);
  let count = 0;
  for (let at = json.indexOf(BOUNDARY, 1); at >= 0; at = json.indexOf(BOUNDARY, at + BOUNDARY.length)) {
    if (count === n - 1) return null;
    cuts[count++] = at;
  }
  return count === n - 1 ? cuts : null;
}

/**
 * Payload staging: UTF-8 is written into one reusable buffer and records get views of it, instead
 * of a Buffer allocation per record (a third of the encode cost). The ring writer copies the bytes
 * before the next batch reuses the staging buffer, so a batch must be committed before the next one
 * is processed — which is how the worker runs.
 *
 * Every payload starts on an 8-byte boundary, as its place in a ring does (framed sizes are
 * multiples of 8): V8 copies into a SharedArrayBuffer word by word only when source and target are
 * both aligned, byte by byte otherwise, 3× slower for a 300-byte record (~70 ns of the commit).
 */
let staging = Buffer.allocUnsafeSlow(256 * 1024);
let stagingPos = 0;

const align8 = (n: number): number => (n + 7) & ~7;

export function resetStaging(): void {
  stagingPos = 0;
}

/**
 * Room for `len` bytes at `stagingPos`: true when there is (a fresh staging buffer if the current
 * one is full), false when `len` does not fit and is over a quarter of the buffer — the caller
 * gives it a buffer of its own, leaving the staging buffer to the rest of the batch.
 */
function room(len: number): boolean {
  if (stagingPos + len <= staging.length) return true;
  if (len > staging.length / 4) return false;
  // Earlier records of this batch still point into the old buffer; it stays alive through them.
  staging = Buffer.allocUnsafeSlow(staging.length);
  stagingPos = 0;
  return true;
}

function stage(json: string): Uint8Array {
  if (!room(json.length * 3 + 8)) return Buffer.from(json, 'utf8');
  const n = staging.write(json, stagingPos, 'utf8');
  const view = new Uint8Array(staging.buffer, staging.byteOffset + stagingPos, n);
  stagingPos = align8(stagingPos + n);
  return view;
}

/**
 * A record's bytes from its frame (record-spans.ts: its structures' definitions spliced in), copied
 * to the next 8-byte boundary of the staging buffer (plain memcpys: both are ordinary memory). With
 * `sig` (a 32-bit int), the bytes are preceded by it as a msgpack int: a map could take it as one
 * more pair only with room in its header, a msgpackr record not at all, and errors, the records
 * that have one, then went to JSON (~10 % of the bench's records, most of the encode stage).
 */
function stageBytes(spans: RecordSpans, row: number, sig?: number): Uint8Array {
  const bare = spans.size(row);
  const len = bare + (sig === undefined ? 0 : SIG_BYTES);
  const shared = room(len);
  const out = shared ? staging : new Uint8Array(len);
  const at = shared ? stagingPos : 0;
  const pre = sig === undefined ? 0 : writeSig(out, at, sig);
  const n = pre + spans.write(row, out, at + pre);
  if (!shared) return out.subarray(0, n);
  stagingPos = align8(at + n);
  return new Uint8Array(staging.buffer, staging.byteOffset + at, n);
}

/**
 * An HTTP body's element as stored: its JSON bytes, and detection's signature as the last key
 * where JSON.stringify of the record would have put it (the key added last).
 */
function stageJsonBytes(spans: RecordSpans, row: number, sig?: number): Uint8Array {
  const tail = sig === undefined ? '' : `,"_sig":${sig}}`;
  // the signature and a closing brace in place of the element's own
  const body = spans.end[row]! - spans.start[row]! - (tail ? 1 : 0);
  const len = body + tail.length;
  const shared = room(len);
  const out = shared ? staging : Buffer.allocUnsafe(len);
  const at = shared ? stagingPos : 0;
  // the whole element (at most len bytes: the tail is longer than the brace it replaces)
  spans.write(row, out, at);
  if (tail) out.write(tail, at + body, 'latin1');
  if (!shared) return out;
  stagingPos = align8(at + len);
  return new Uint8Array(staging.buffer, staging.byteOffset + at, len);
}


/** An ASCII array's JSON as stageAscii staged it: its buffer, where the JSON starts, where the next record's copy goes. */
let ascii: Buffer = staging;
let asciiJson = 0;
let asciiNext = 0;

/**
 * Stages an array's JSON whole when it is all ASCII (false, nothing staged, when it is not), with
 * room after it for its `n` records' copies, each on an 8-byte boundary (placeAscii). UTF-8 of a
 * string is exactly as many bytes as it has UTF-16 units only when every unit is ASCII (any other
 * takes 2 or 3 bytes, a surrogate pair 4); Buffer.byteLength counts them without encoding, and an
 * ASCII string is then written as Latin-1, a plain copy. One write and a copy per record cost less
 * than a write per record, and leave the records aligned.
 */
function stageAscii(json: string, n: number): boolean {
  const len = Buffer.byteLength(json, 'utf8');
  if (len !== json.length) return false;
  // the JSON, then its records' copies: at most its own length plus 7 bytes of padding each
  const need = align8(align8(len) + len + 8 * n);
  if (!room(need)) {
    // as stage() does for a long record: its own buffer, the staging buffer left for the rest
    ascii = Buffer.allocUnsafeSlow(need);
    asciiJson = 0;
  } else {
    ascii = staging;
    asciiJson = stagingPos;
    stagingPos += need;
  }
  ascii.write(json, asciiJson, 'latin1');
  asciiNext = asciiJson + align8(len);
  return true;
}

/** The record at `from` (a character offset in the staged JSON), `len` bytes long, copied to the next 8-byte boundary. */
function placeAscii(from: number, len: number): Uint8Array {
  const to = asciiNext;
  ascii.copyWithin(to, asciiJson + from, asciiJson + from + len);
  asciiNext = align8(to + len);
  return new Uint8Array(ascii.buffer, ascii.byteOffset + to, len);
}

function pushError(out: IngestOutput, ctx: IngestContext, e: RecordError): void {
  if (out.errors.length < ctx.limits.max_errors_per_ack) out.errors.push(e);
}
