/**
 * Where each record of a batch frame lies in the frame's bytes, noted by the pre-scan on its one
 * walk (prescan.ts), so a record that validation, redaction and normalisation leave exactly as the
 * producer sent it can be stored as those bytes instead of being serialised again (process.ts,
 * "verbatim"). Offsets are into the frame as the pre-scan saw it; `bytes` is set by the decoder to
 * the copy it decoded, whose offsets are the same.
 *
 * A span says only what the bytes alone can say; the rest of the proof is process.ts's:
 *   - `plain`: the element is a map and holds nothing but maps, arrays, strings, ints, nil,
 *     booleans and finite float64 other than -0 — no bin, no extension (a record-extension
 *     reference is not self-contained), no float32 — so decoding its bytes alone gives what
 *     decoding the frame gave;
 *   - `entries`: the key-value pairs of every map in the element. A decoded object holds fewer
 *     keys than its map declared pairs only when a key repeats (the last value wins), and then the
 *     bytes hold a value nothing downstream ever looked at: comparing this count with the decoded
 *     record's keys refuses it.
 * One span table per thread, reused frame after frame (no allocation per frame).
 */
import { KIND_COUNT } from '../kinds.js';

export class RecordSpans {
  /** the frame the offsets are into: the decoder's own copy (decode.ts), valid until the next frame */
  bytes: Uint8Array = new Uint8Array(0);
  /** per kind id: where its elements start in the tables below, -1 when the frame has no array of it */
  readonly first = new Int32Array(KIND_COUNT);
  /** per kind id: its element count, or -1 when no element may be used (its key twice, or the frame uses an extension) */
  readonly count = new Int32Array(KIND_COUNT);
  start = new Int32Array(256);
  end = new Int32Array(256);
  entries = new Int32Array(256);
  plain = new Uint8Array(256);
  /** elements noted so far in this frame */
  used = 0;

  reset(): void {
    this.first.fill(-1);
    this.count.fill(-1);
    this.used = 0;
  }

  /** room for one more element; returns its index */
  next(): number {
    const i = this.used++;
    if (i >= this.start.length) {
      const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.start = grow(this.start, (n) => new Int32Array(n));
      this.end = grow(this.end, (n) => new Int32Array(n));
      this.entries = grow(this.entries, (n) => new Int32Array(n));
      this.plain = grow(this.plain, (n) => new Uint8Array(n));
    }
    return i;
  }

  /** no element of any kind may be stored verbatim (the frame uses an extension) */
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
}
