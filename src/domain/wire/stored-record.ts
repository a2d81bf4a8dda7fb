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

/** verbatim payloads up to this size are copied out of shared memory into one buffer the thread keeps */
const SCRATCH_MAX = 256 * 1024;
let scratch = Buffer.allocUnsafeSlow(16 * 1024);

/**
 * msgpackr cannot read a view of shared memory. A copy into a buffer the thread keeps, not a
 * `slice`: a slice allocates an ArrayBuffer per record, which made reading a verbatim record back
 * ~2× what JSON.parse of the same record cost (3.5–6 against 1.6–2.5 µs; with this copy, 2.6).
 * Nothing decoded refers to the bytes afterwards: strings are copied, bin values too (copyBuffers).
 * Not decode.ts's frame buffer: a frame's copy must stay as it is until its batch is committed
 * (record-spans.ts stores from it), and a read may come in between.
 */
function ownBytes(payload: Uint8Array): Uint8Array {
  if (!(payload.buffer instanceof SharedArrayBuffer)) return payload;
  const n = payload.byteLength;
  if (n > SCRATCH_MAX) return Uint8Array.prototype.slice.call(payload);
  if (n > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.min(SCRATCH_MAX, n * 2));
  scratch.set(payload);
  return scratch.subarray(0, n);
}

export function readStoredRecord(payload: Uint8Array): unknown {
  const first = payload[0];
  if (first === OPEN_BRACE) return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  const own = ownBytes(payload);
  if (first !== INT32 && first !== UINT32) return unpackr.unpack(own);
  const u = own[1]! * 0x1000000 + ((own[2]! << 16) | (own[3]! << 8) | own[4]!);
  const rec = unpackr.unpack(own.subarray(5)) as Record<string, unknown>;
  rec._sig = first === INT32 ? u | 0 : u;
  return rec;
}

/** whether a payload is a verbatim msgpack record rather than JSON */
export const isVerbatim = (payload: Uint8Array): boolean => payload[0] !== OPEN_BRACE;
