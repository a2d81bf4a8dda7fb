/**
 * A batch frame's seq, read from its first top-level entries without decoding the frame.
 *
 * An overloaded edge refuses a batch with a nack that names its seq. Decoding the whole frame to
 * learn it cost a shed batch about a quarter of a stored one, on the very worker that was behind:
 * under sustained overload refusals crowded out the work, and what was accepted fell to under half
 * of the maximum. The edge reads the seq here instead and the worker never sees the batch.
 *
 * Only the plain case is read: a top-level map (or msgpackr's record definition, which producers
 * using `useRecords` send) whose first entries hold `t: "batch"` and a non-negative integer `seq`,
 * with nothing but scalars before them. Anything else is `undefined` and goes the usual way
 * (decode, then the worker refuses it), so this never has to be as thorough as the pre-scan: it
 * reads a few bytes, never throws, and allocates nothing. Like msgpackr, the unpacker here is
 * asked for the seq a well-formed frame holds; a frame that names `seq` twice gets the first one
 * here (msgpackr keeps the last), and its producer is only confusing itself: the nack asks it to
 * resend, and the resent frame is decoded in full.
 */

/** entries looked at before giving up: `t` and `seq` lead every frame our producers build */
const MAX_ENTRIES = 8;

const T = 0x74; // 't'
const S = 0x73; // 's'
const E = 0x65; // 'e'
const Q = 0x71; // 'q'
const BATCH = [0x62, 0x61, 0x74, 0x63, 0x68]; // 'batch'

export function peekBatchSeq(b: Uint8Array): number | undefined {
  const n = b.length;
  if (n < 8) return undefined;
  let pos = 0;
  let entries: number;
  /** where the record definition's keys are, or -1 for a plain map (keys inline) */
  let keyPos = -1;
  const h = b[pos++]!;
  if (h >= 0x80 && h <= 0x8f) entries = h & 0x0f;
  else if (h === 0xde) {
    entries = (b[pos]! << 8) | b[pos + 1]!;
    pos += 2;
  } else if (h === 0xdf) {
    entries = b[pos]! * 0x1000000 + ((b[pos + 1]! << 16) | (b[pos + 2]! << 8) | b[pos + 3]!);
    pos += 4;
  } else if ((h === 0xd4 || h === 0xd5) && b[pos] === 0x72) {
    // msgpackr's record: d4 72 <id> (d5 72 <id> <high>), an array of key strings, then the values
    pos += h === 0xd4 ? 2 : 3;
    const a = b[pos++];
    if (a === undefined || a < 0x90 || a > 0x9f) return undefined;
    entries = a & 0x0f;
    keyPos = pos;
    // the values start after the keys
    for (let i = 0; i < entries; i++) {
      const len = strLen(b, pos);
      if (len < 0) return undefined;
      pos = strStart(b, pos) + len;
      if (pos > n) return undefined;
    }
  } else return undefined;

  let isBatch = false;
  let seq = -1;
  const look = Math.min(entries, MAX_ENTRIES);
  for (let i = 0; i < look && pos < n; i++) {
    let k: number;
    if (keyPos >= 0) {
      k = keyPos;
      keyPos = strStart(b, keyPos) + strLen(b, keyPos);
    } else {
      k = pos;
      const len = strLen(b, pos);
      if (len < 0) return undefined;
      pos = strStart(b, pos) + len;
    }
    const klen = strLen(b, k);
    const ks = strStart(b, k);
    if (klen === 1 && b[ks] === T) {
      if (strLen(b, pos) !== 5) return undefined;
      const vs = strStart(b, pos);
      for (let j = 0; j < 5; j++) if (b[vs + j] !== BATCH[j]) return undefined;
      isBatch = true;
      pos = vs + 5;
    } else if (klen === 3 && b[ks] === S && b[ks + 1] === E && b[ks + 2] === Q) {
      const v = readUint(b, pos, keyPos >= 0 || h === 0xd4 || h === 0xd5);
      if (v === undefined) return undefined;
      seq = v.value;
      pos = v.end;
    } else {
      const end = skipScalar(b, pos);
      if (end < 0) return undefined;
      pos = end;
    }
    if (isBatch && seq >= 0) return pos <= n ? seq : undefined;
  }
  return undefined;
}

/** a string's length at `p` (fixstr, str8, str16), or -1 when something else is there */
function strLen(b: Uint8Array, p: number): number {
  const t = b[p];
  if (t === undefined) return -1;
  if (t >= 0xa0 && t <= 0xbf) return t & 0x1f;
  if (t === 0xd9) return b[p + 1] ?? -1;
  if (t === 0xda) return p + 2 < b.length ? (b[p + 1]! << 8) | b[p + 2]! : -1;
  return -1;
}

function strStart(b: Uint8Array, p: number): number {
  const t = b[p]!;
  return t === 0xd9 ? p + 2 : t === 0xda ? p + 3 : p + 1;
}

/**
 * A non-negative safe integer at `p` and where it ends; undefined for anything else. In a record
 * frame a byte 0x40–0x7f may name a structure rather than be a number (msgpackr reads it so once
 * one with that id is defined), so there only 0x00–0x3f is taken as a fixint.
 */
function readUint(b: Uint8Array, p: number, records: boolean): { value: number; end: number } | undefined {
  const t = b[p];
  if (t === undefined) return undefined;
  if (t <= 0x7f) return records && t >= 0x40 ? undefined : { value: t, end: p + 1 };
  const need = (bytes: number): boolean => p + 1 + bytes <= b.length;
  switch (t) {
    case 0xcc:
    case 0xd0:
      if (!need(1)) return undefined;
      return t === 0xd0 && b[p + 1]! >= 0x80 ? undefined : { value: b[p + 1]!, end: p + 2 };
    case 0xcd:
    case 0xd1:
      if (!need(2) || (t === 0xd1 && b[p + 1]! >= 0x80)) return undefined;
      return { value: (b[p + 1]! << 8) | b[p + 2]!, end: p + 3 };
    case 0xce:
    case 0xd2:
      if (!need(4) || (t === 0xd2 && b[p + 1]! >= 0x80)) return undefined;
      return { value: u32(b, p + 1), end: p + 5 };
    case 0xcf:
    case 0xd3: {
      if (!need(8) || (t === 0xd3 && b[p + 1]! >= 0x80)) return undefined;
      const value = u32(b, p + 1) * 0x100000000 + u32(b, p + 5);
      return Number.isSafeInteger(value) ? { value, end: p + 9 } : undefined;
    }
    case 0xcb: {
      // msgpackr writes integers past 32 bits as float64
      if (!need(8)) return undefined;
      const value = new DataView(b.buffer, b.byteOffset + p + 1, 8).getFloat64(0);
      return Number.isSafeInteger(value) && value >= 0 ? { value: value === 0 ? 0 : value, end: p + 9 } : undefined;
    }
    default:
      return undefined;
  }
}

function u32(b: Uint8Array, p: number): number {
  return b[p]! * 0x1000000 + ((b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!);
}

/** past the scalar at `p` (nil, bool, number, string); -1 for a container, bin, ext or the frame's end */
function skipScalar(b: Uint8Array, p: number): number {
  const t = b[p];
  if (t === undefined) return -1;
  // 0x40–0x7f could name a record structure: give up rather than guess
  if (t <= 0x3f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return p + 1;
  const len = strLen(b, p);
  if (len >= 0) return strStart(b, p) + len;
  switch (t) {
    case 0xcc:
    case 0xd0:
      return p + 2;
    case 0xcd:
    case 0xd1:
      return p + 3;
    case 0xca:
    case 0xce:
    case 0xd2:
      return p + 5;
    case 0xcb:
    case 0xcf:
    case 0xd3:
      return p + 9;
    default:
      return -1;
  }
}
