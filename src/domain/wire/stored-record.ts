/**
 * A stored record's payload back to its object, in either of the two forms a ring holds: the JSON
 * of a record the worker changed or re-encoded, or — with REC_MSGPACK — the msgpack map its
 * producer sent, kept as it came (process.ts, "verbatim"). The form is in the first byte too: a
 * JSON record starts with `{`, which no msgpack map does.
 *
 * Verbatim bytes read back here with the options the worker decoded the frame with, so a reader
 * gets exactly the object the worker validated, redacted and saw.
 */
import { Unpackr } from 'msgpackr';

/** how the ingest worker decodes frames (decode.ts) and every reader decodes a verbatim record */
export const UNPACK_OPTIONS = { useRecords: true, mapsAsObjects: true, int64AsType: 'number', copyBuffers: true } as const;

const unpackr = new Unpackr(UNPACK_OPTIONS);

const OPEN_BRACE = 0x7b;

export function readStoredRecord(payload: Uint8Array): unknown {
  if (payload[0] === OPEN_BRACE) return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  // msgpackr cannot read a view of shared memory
  return unpackr.unpack(payload.buffer instanceof SharedArrayBuffer ? Uint8Array.prototype.slice.call(payload) : payload);
}

/** whether a payload is a verbatim msgpack record rather than JSON */
export const isVerbatim = (payload: Uint8Array): boolean => payload[0] !== OPEN_BRACE;
