/**
 * A stored record's payload back to its object, in either of the two forms a ring holds: the JSON
 * of a record the worker changed or re-encoded, or — with REC_MSGPACK — the msgpack map its
 * producer sent, kept as it came (process.ts, "verbatim"). The form is in the first byte too: a
 * JSON record starts with `{`, which no msgpack map does.
 *
 * Verbatim bytes read back here with the options the worker decoded the frame with, so a reader
 * gets exactly the object the worker validated, redacted and saw. An error's signature (`_sig`,
 * added by detection) precedes such bytes as a msgpack int32 or uint32 (0xd2 / 0xce, which no
 * stored map or record starts with) and becomes the object's last key, where JSON has it.
 */
import { Unpackr } from 'msgpackr';

/** how the ingest worker decodes frames (decode.ts) and every reader decodes a verbatim record */
export const UNPACK_OPTIONS = { useRecords: true, mapsAsObjects: true, int64AsType: 'number', copyBuffers: true } as const;

const unpackr = new Unpackr(UNPACK_OPTIONS);

const OPEN_BRACE = 0x7b;

const INT32 = 0xd2;
const UINT32 = 0xce;

export function readStoredRecord(payload: Uint8Array): unknown {
  const first = payload[0];
  if (first === OPEN_BRACE) return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  // msgpackr cannot read a view of shared memory
  const own = payload.buffer instanceof SharedArrayBuffer ? Uint8Array.prototype.slice.call(payload) : payload;
  if (first !== INT32 && first !== UINT32) return unpackr.unpack(own);
  const u = own[1]! * 0x1000000 + ((own[2]! << 16) | (own[3]! << 8) | own[4]!);
  const rec = unpackr.unpack(own.subarray(5)) as Record<string, unknown>;
  rec._sig = first === INT32 ? u | 0 : u;
  return rec;
}

/** whether a payload is a verbatim msgpack record rather than JSON */
export const isVerbatim = (payload: Uint8Array): boolean => payload[0] !== OPEN_BRACE;
