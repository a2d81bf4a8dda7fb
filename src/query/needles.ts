/**
 * Byte needles for the pre-filters that run on a stored record's bytes before it is decoded. A
 * ring holds two forms (stored-record.ts): JSON, where `"level":"error"` is a needle, and a
 * producer's msgpack map kept verbatim, where the same field is `level` and `error` each behind a
 * string header. So a needle is its JSON bytes with a twin for the msgpack form: bytes that every
 * msgpack encoding of a record holding the JSON needle holds too — a string's raw UTF-8, which
 * sits unbroken behind its header whatever header the producer chose. A twin may match more
 * records than its JSON needle (`error` in a message); every pre-filter is followed by the exact
 * test on the decoded record, so that costs a decode, never an answer. A needle with no twin (a
 * number's digits have no msgpack bytes to look for) rules nothing out in the msgpack form.
 */
import { REC_MSGPACK, type RecordView } from '../shm/index.js';
import { isVerbatim } from '../domain/wire/stored-record.js';

const twins = new WeakMap<Uint8Array, Buffer | null>();

/** a needle: its JSON bytes, and the string whose raw bytes stand for it in the msgpack form (null: none) */
export function needle(json: string, raw: string | null): Buffer {
  const n = Buffer.from(json);
  twins.set(n, raw === null ? null : Buffer.from(raw));
  return n;
}

/** a needle for text inside a JSON string value (a URL's part): escaped as JSON escapes it, raw in msgpack */
export const textNeedle = (text: string): Buffer => needle(JSON.stringify(text).slice(1, -1), text);

/** a needle for a whole JSON string value, quotes included (a connection id) */
export const stringNeedle = (text: string): Buffer => needle(JSON.stringify(text), text);

/** the needle for the msgpack form; null when nothing in that form can stand for it */
export function twinOf(n: Uint8Array): Buffer | null {
  return twins.get(n) ?? null;
}

/** whether a record may hold the needle, judged by its bytes in whichever form it is stored */
export function viewHas(v: RecordView, n: Uint8Array): boolean {
  if ((v.flags & REC_MSGPACK) === 0) return v.has(n);
  const twin = twinOf(n);
  return twin === null || v.has(twin);
}

/** the same for a record's payload in hand */
export function payloadHas(payload: Uint8Array, n: Buffer): boolean {
  const look = isVerbatim(payload) ? twinOf(n) : n;
  return look === null || Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).includes(look);
}
