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
/** an error's signature in front of its verbatim bytes: a msgpack int32 or uint32 */
export const SIG_BYTES = 5;

/** Writes `sig` at `at` as the msgpack int32 (negative) or uint32 a verbatim record starts with; returns SIG_BYTES. */
export function writeSig(out: Uint8Array, at: number, sig: number): number {
  out[at] = sig < 0 ? INT32 : UINT32;
  const u = sig >>> 0;
  out[at + 1] = u >>> 24;
  out[at + 2] = (u >>> 16) & 0xff;
  out[at + 3] = (u >>> 8) & 0xff;
  out[at + 4] = u & 0xff;
  return SIG_BYTES;
}

/** The signature in front of a verbatim payload, or undefined when there is none (or too few bytes for one). */
export function sigInFront(payload: Uint8Array): number | undefined {
  const first = payload[0];
  if ((first !== INT32 && first !== UINT32) || payload.length < SIG_BYTES) return undefined;
  const u = payload[1]! * 0x1000000 + ((payload[2]! << 16) | (payload[3]! << 8) | payload[4]!);
  return first === INT32 ? u | 0 : u;
}

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
  const sig = sigInFront(own);
  if (sig === undefined) return unpackr.unpack(own);
  const rec = unpackr.unpack(own.subarray(SIG_BYTES)) as Record<string, unknown>;
  rec._sig = sig;
  return rec;
}

/** whether a payload is a verbatim msgpack record rather than JSON */
export const isVerbatim = (payload: Uint8Array): boolean => payload[0] !== OPEN_BRACE;
