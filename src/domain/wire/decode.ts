/**
 * bytes → validated client frame, or a specific error code. Never throws.
 * Order: pre-scan (refuses hostile shapes before any allocation) → msgpackr decode (native addon;
 * it cannot read SharedArrayBuffer views, so the frame is copied out of the arena first) →
 * top level must be a map → known `t` → frame schema (record arrays are validated later, one by
 * one).
 */
import { Unpackr } from 'msgpackr';
import type { ErrorCode } from '../../errors.js';
import { prescanMsgpack, type PrescanLimits } from './prescan.js';
import { BatchFrameSchema, CLIENT_FRAME_TYPES, ClientFrameSchema, type ClientFrame } from './schemas.js';
import { compileCheck, NOT_SURE } from './fast-check.js';
import type { RecordSpans } from './record-spans.js';
import { UNPACK_OPTIONS } from './stored-record.js';

export type DecodeResult = { ok: true; frame: ClientFrame } | { ok: false; code: ErrorCode; message: string };

/** batches are nearly every frame: their schema compiled (fast-check.ts); zod for the rest and for what it is not sure of */
const batchCheck = compileCheck(BatchFrameSchema);

// copyBuffers: a bin value is a copy, never a view of the frame's bytes, which copyOut reuses.
// The same options read verbatim records back (stored-record.ts).
const unpackr = new Unpackr(UNPACK_OPTIONS);

/**
 * `spans`: where the pre-scan should note each record's bytes (record-spans.ts); they are then
 * offsets into `spans.bytes`, the bytes decoded, which stay as they are until the next frame.
 */
export function decodeFrame(bytes: Uint8Array, limits: PrescanLimits, spans?: RecordSpans): DecodeResult {
  const scan = prescanMsgpack(bytes, limits, spans);
  if (!scan.ok) return { ok: false, code: scan.code, message: scan.message };
  let value: unknown;
  try {
    const own = bytes.buffer instanceof SharedArrayBuffer ? copyOut(bytes) : bytes;
    if (spans) spans.bytes = own;
    value = unpackr.unpack(own);
  } catch (e) {
    return { ok: false, code: 'msgpack_invalid', message: `msgpack decode failed: ${(e as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) {
    return { ok: false, code: 'not_a_map', message: `top level is ${Array.isArray(value) ? 'an array' : value === null ? 'nil' : typeof value}, expected a map` };
  }
  const t = (value as { t?: unknown }).t;
  if (typeof t !== 'string' || !CLIENT_FRAME_TYPES.has(t)) {
    return { ok: false, code: 'unknown_frame_type', message: `unknown frame type t=${JSON.stringify(t)?.slice(0, 40) ?? 'undefined'}` };
  }
  if (t === 'batch' && batchCheck) {
    const fast = batchCheck(value);
    if (fast !== NOT_SURE) return { ok: true, frame: fast as ClientFrame };
  }
  const parsed = (t === 'batch' ? BatchFrameSchema : ClientFrameSchema).safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    return { ok: false, code: 'invalid_frame', message: `${t}.${first.path.join('.') || '(frame)'}: ${first.message}` };
  }
  return { ok: true, frame: parsed.data as ClientFrame };
}

/** frames up to this size are copied into one buffer the thread keeps; larger ones get their own */
const SCRATCH_MAX = 256 * 1024;
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * The frame out of the arena, into a buffer reused frame after frame (an allocation per frame cost
 * ~3 µs of a 25 KB frame): nothing decoded refers to it afterwards (strings are copied, bin values
 * too, see copyBuffers). The copy starts at the same offset modulo 8 as the frame in the arena: V8
 * copies out of a SharedArrayBuffer word by word only when both ends are aligned alike, byte by
 * byte otherwise (3× slower: ~4.5 µs of a 25 KB frame), and arena offsets are whatever the frames
 * before left.
 */
function copyOut(view: Uint8Array): Uint8Array {
  const n = view.byteLength;
  let room = scratch;
  if (n + 8 > room.length) {
    room = Buffer.allocUnsafeSlow(n + 8);
    if (n + 8 <= SCRATCH_MAX) scratch = room;
  }
  const shift = (view.byteOffset - room.byteOffset) & 7;
  const out = room.subarray(shift, shift + n);
  out.set(view);
  return out;
}
