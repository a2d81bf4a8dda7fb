/**
 * Where each record of a batch frame lies in the frame's bytes, noted by the pre-scan on its one
 * walk (prescan.ts), so a record that validation, redaction and normalisation leave exactly as the
 * producer sent it can be stored as those bytes instead of being serialised again (process.ts,
 * "verbatim"). Offsets are into the frame as the pre-scan saw it; `bytes` is set by the decoder to
 * the copy it decoded, whose offsets are the same.
 *
 * A span says only what the bytes alone can say; the rest of the proof is process.ts's:
 *   - `plain`: the element is a map or a msgpackr record and holds nothing but maps, records,
 *     arrays, strings, ints, nil, booleans and finite float64 other than -0 — no bin, no other
 *     extension, no float32 — so decoding its stored bytes alone gives what decoding the frame gave;
 *   - `entries`: the key-value pairs of every map and record in the element. A decoded object holds
 *     fewer keys than were declared only when a key repeats (the last value wins), and then the
 *     bytes hold a value nothing downstream ever looked at: comparing this count with the decoded
 *     record's keys refuses it.
 *
 * msgpackr's record extension writes an object's keys once, at the structure's first use
 * (`d4 72 <id> [keys] values…`), and later objects of that shape as a byte naming it (`0x40|id`
 * values…). An element that names a structure defined before it is stored with its first such
 * byte replaced by the definition (a splice), so the stored bytes decode on their own. Frames whose
 * structures are not this plain are refused whole: two-byte structure ids, an id defined twice.
 * One span table per thread, reused frame after frame (no allocation per frame).
 */
import { KIND_COUNT } from '../kinds.js';

/** msgpackr's one-byte structure ids: 0x40–0x7f */
const IDS = 64;

export class RecordSpans {
  /** the frame the offsets are into: the decoder's own copy (decode.ts), valid until the next frame */
  bytes: Uint8Array = new Uint8Array(0);
  /** per kind id: where its elements start in the tables below, -1 when the frame has no array of it */
  readonly first = new Int32Array(KIND_COUNT);
  /** per kind id: its element count, or -1 when no element may be used (its key twice, or the frame's extensions) */
  readonly count = new Int32Array(KIND_COUNT);
  /** per structure id: where its definition (`d4 72 id [keys]`, without the values) starts and ends, -1 none */
  readonly defStart = new Int32Array(IDS);
  readonly defEnd = new Int32Array(IDS);
  start = new Int32Array(256);
  end = new Int32Array(256);
  entries = new Int32Array(256);
  plain = new Uint8Array(256);
  /** per element: its splices, [spliceFirst, spliceFirst + spliceN) in the two tables after */
  spliceFirst = new Int32Array(256);
  spliceN = new Int32Array(256);
  /** a splice: the position of a byte naming a structure, and the structure's id */
  spliceAt = new Int32Array(64);
  spliceId = new Uint8Array(64);
  /** elements noted so far in this frame */
  used = 0;
  splices = 0;
  /** the elements are JSON text (an HTTP body, json-spans.ts), not msgpack */
  json = false;

  reset(): void {
    this.json = false;
    this.first.fill(-1);
    this.count.fill(-1);
    this.defStart.fill(-1);
    this.used = 0;
    this.splices = 0;
  }

  /** room for one more element; returns its index */
  next(): number {
    const i = this.used++;
    if (i >= this.start.length) {
      this.start = grow(this.start);
      this.end = grow(this.end);
      this.entries = grow(this.entries);
      this.plain = grow(this.plain);
      this.spliceFirst = grow(this.spliceFirst);
      this.spliceN = grow(this.spliceN);
    }
    this.spliceFirst[i] = this.splices;
    this.spliceN[i] = 0;
    return i;
  }

  /** element `row`'s byte at `at` names structure `id`, defined before the element: its definition goes there */
  splice(row: number, at: number, id: number): void {
    const k = this.splices++;
    if (k >= this.spliceAt.length) {
      this.spliceAt = grow(this.spliceAt);
      this.spliceId = grow(this.spliceId);
    }
    this.spliceAt[k] = at;
    this.spliceId[k] = id;
    this.spliceN[row]!++;
  }

  /** no element of any kind may be stored verbatim */
  refuseAll(): void {
    this.count.fill(-1);
  }

  /** the element's row in the tables (start, end, entries), or -1 when its bytes may not be stored verbatim */
  row(kind: number, i: number): number {
    const n = this.count[kind]!;
    if (n < 0 || i >= n) return -1;
    const at = this.first[kind]! + i;
    return this.plain[at] === 1 ? at : -1;
  }

  /** how many bytes the element is stored as */
  size(row: number): number {
    let n = this.end[row]! - this.start[row]!;
    const from = this.spliceFirst[row]!;
    for (let s = from; s < from + this.spliceN[row]!; s++) {
      const id = this.spliceId[s]!;
      n += this.defEnd[id]! - this.defStart[id]! - 1;
    }
    return n;
  }

  /** writes the element as stored into `out` at `at`; returns how many bytes */
  write(row: number, out: Uint8Array, at: number): number {
    const b = this.bytes;
    const end = this.end[row]!;
    let cur = this.start[row]!;
    let to = at;
    const from = this.spliceFirst[row]!;
    for (let s = from; s < from + this.spliceN[row]!; s++) {
      const pos = this.spliceAt[s]!;
      const id = this.spliceId[s]!;
      copyBytes(b, cur, pos, out, to);
      to += pos - cur;
      copyBytes(b, this.defStart[id]!, this.defEnd[id]!, out, to);
      to += this.defEnd[id]! - this.defStart[id]!;
      // the definition stands for the byte that named the structure; the values follow it
      cur = pos + 1;
    }
    copyBytes(b, cur, end, out, to);
    return to + (end - cur) - at;
  }
}

/**
 * src[from, to) to out at `at`. A short run byte by byte; a longer one through a plain Uint8Array
 * view: `subarray` of a Buffer builds a Buffer, which cost more than the copy (a profile of the
 * worker: ~4 % of its samples in FastBuffer and subarray).
 */
function copyBytes(src: Uint8Array, from: number, to: number, out: Uint8Array, at: number): void {
  const n = to - from;
  if (n <= 32) {
    for (let i = 0; i < n; i++) out[at + i] = src[from + i]!;
    return;
  }
  out.set(new Uint8Array(src.buffer, src.byteOffset + from, n), at);
}

function grow<T extends Int32Array | Uint8Array>(a: T): T {
  const b = new (a.constructor as new (n: number) => T)(a.length * 2);
  b.set(a);
  return b;
}
