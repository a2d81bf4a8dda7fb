/**
 * A few top-level fields of a stored verbatim record (stored-record.ts), read from its bytes
 * without building the record. The read index (query/match-index.ts) needs, per error or failing
 * request, its fold key, severity and noise bits: a handful of scalars. Decoding the whole record
 * for them was ~70 % of the scan worker's allocation at 20 000 events/s (11 MB/s: every record
 * carries its own msgpackr structure definitions, so each decode builds key lists and a reader, then
 * its args, stack and source), and a scavenge of that worker every ~0.65 s (issue 17 item 3).
 *
 * The answer is exact or absent: `read` fills `rec` with what decoding the record gives for the
 * wanted keys (a string, number, boolean or null; undefined when the key is not there) and returns
 * true, or returns false — JSON payloads, a wanted key whose value is a map, array, bin, extension,
 * float32 or 64-bit integer, bytes it does not understand — and the caller decodes the record.
 *
 * The walk understands what a verbatim record may hold (record-spans.ts, `plain`): maps, msgpackr
 * records (`d4 72 <id> [keys] values…`, then `0x40|id values…` for the same shape; such a byte with
 * no structure defined is a fixint, as msgpackr reads it), arrays, strings, ints, nil, booleans,
 * float64. Anything else it skips by its declared size, and it stays inside the payload whatever
 * the bytes say.
 */

import { SIG_BYTES, sigInFront } from './stored-record.js';

/** the keys the read index uses: fold keys, severity and built-in noise rules of logs and requests */
export const SKIM_KEYS = ['level', 'type', 'message', 'url', 'request_url', 'method', 'status', 'error', '_sig'] as const;
export type SkimKey = (typeof SKIM_KEYS)[number];

export type SkimmedRecord = Record<SkimKey, string | number | boolean | null | undefined>;

const SIG_SLOT = SKIM_KEYS.indexOf('_sig');
const KEY_BYTES = SKIM_KEYS.map((k) => Buffer.from(k, 'latin1'));
const OPEN_BRACE = 0x7b;
const EXT_RECORD = 0x72;
/** deeper than any frame the ingest pre-scan admits; a walk past it gives up rather than recursing on */
const MAX_DEPTH = 512;
/** a value that is not a scalar the index can use */
const NOT_SCALAR = Symbol('not scalar');

const utf8 = (b: Uint8Array, start: number, end: number): string => (Buffer.prototype.utf8Slice as (this: Uint8Array, s: number, e: number) => string).call(b, start, end);

const F64 = new Float64Array(1);
const F64_BYTES = new Uint8Array(F64.buffer);
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('skim-record assumes a little-endian host');

/** Out of bounds, or a form the walk does not read: the caller decodes the record instead. */
class GiveUp {}
const GIVE_UP = new GiveUp();

export class RecordSkim {
  /** the last record read's wanted fields; reused, valid until the next `read` */
  readonly rec: SkimmedRecord = { level: undefined, type: undefined, message: undefined, url: undefined, request_url: undefined, method: undefined, status: undefined, error: undefined, _sig: undefined };
  private b: Uint8Array = new Uint8Array(0);
  private p = 0;
  private end = 0;
  /** structures defined so far in this record: key count by id, valid where `defGen` is `gen` */
  private readonly defKeys = new Uint32Array(64);
  private readonly defGen = new Uint32Array(64);
  private gen = 0;
  /** the payload starts with the signature, so a `_sig` key's own value is never the answer */
  private sigFirst = false;
  /** the top-level record's keys as indexes into SKIM_KEYS (-1: not wanted) */
  private slots = new Int8Array(32);

  /** true: `rec` holds the payload's wanted fields exactly as decoding it would give them */
  read(payload: Uint8Array): boolean {
    const r = this.rec;
    // named stores, not a loop over SKIM_KEYS: a keyed store per field was a fifth of a read
    r.level = r.type = r.message = r.url = r.request_url = r.method = r.status = r.error = r._sig = undefined;
    const first = payload[0];
    if (first === undefined || first === OPEN_BRACE) return false;
    this.b = payload;
    this.end = payload.length;
    this.p = 0;
    if (++this.gen === 0xffffffff) {
      this.defGen.fill(0);
      this.gen = 1;
    }
    try {
      const sig = sigInFront(payload);
      this.sigFirst = sig !== undefined;
      if (this.sigFirst) this.p = SIG_BYTES;
      if (!this.top()) return false;
      // the signature in front wins over a key of the same name, as readStoredRecord sets it last
      if (sig !== undefined) r._sig = sig;
      return true;
    } catch (e) {
      if (e === GIVE_UP) return false;
      throw e;
    }
  }

  private top(): boolean {
    const b = this.b;
    const t = this.byte();
    let n: number;
    if (t >= 0x80 && t <= 0x8f) n = t & 0x0f;
    else if (t === 0xde) n = this.u16();
    else if (t === 0xdf) n = this.u32();
    else if (t === 0xd4 && b[this.p] === EXT_RECORD) {
      this.p++;
      return this.topRecord(this.byte() & 0x3f);
    } else return false;
    for (let i = 0; i < n; i++) {
      const slot = this.key();
      if (slot < 0) this.skip(0);
      else if (!this.value(slot)) return false;
    }
    return this.p <= this.end;
  }

  /** `d4 72 id` read: the keys' array, then one value per key */
  private topRecord(id: number): boolean {
    const n = this.arrayHeader();
    if (n > this.end - this.p) throw GIVE_UP;
    if (this.slots.length < n) this.slots = new Int8Array(n * 2);
    for (let i = 0; i < n; i++) this.slots[i] = this.key();
    this.define(id, n);
    for (let i = 0; i < n; i++) {
      const slot = this.slots[i]!;
      if (slot < 0) this.skip(0);
      else if (!this.value(slot)) return false;
    }
    return this.p <= this.end;
  }

  /** a key: its index in SKIM_KEYS, -1 when not wanted (a string key) */
  private key(): number {
    const b = this.b;
    const t = this.byte();
    let len: number;
    if (t >= 0xa0 && t <= 0xbf) len = t & 0x1f;
    else if (t === 0xd9) len = this.byte();
    else if (t === 0xda) len = this.u16();
    else if (t === 0xdb) len = this.u32();
    // a key that is not a string becomes one by rules of the decoder's own: let it decide
    else throw GIVE_UP;
    const at = this.p;
    this.p += len;
    if (this.p > this.end) throw GIVE_UP;
    for (let k = 0; k < KEY_BYTES.length; k++) {
      const name = KEY_BYTES[k]!;
      if (name.length !== len) continue;
      let i = 0;
      while (i < len && b[at + i] === name[i]) i++;
      if (i === len) return k === SIG_SLOT && this.sigFirst ? -1 : k;
    }
    return -1;
  }

  private value(slot: number): boolean {
    const v = this.scalar();
    if (v === NOT_SCALAR) return false;
    const r = this.rec;
    switch (slot) {
      case 0:
        r.level = v;
        break;
      case 1:
        r.type = v;
        break;
      case 2:
        r.message = v;
        break;
      case 3:
        r.url = v;
        break;
      case 4:
        r.request_url = v;
        break;
      case 5:
        r.method = v;
        break;
      case 6:
        r.status = v;
        break;
      case 7:
        r.error = v;
        break;
      default:
        r._sig = v;
    }
    return true;
  }

  private scalar(): string | number | boolean | null | typeof NOT_SCALAR {
    const t = this.byte();
    if (t < 0x40) return t;
    if (t < 0x80) return this.defGen[t & 0x3f] === this.gen ? NOT_SCALAR : t;
    if (t >= 0xe0) return t - 0x100;
    if (t >= 0xa0 && t <= 0xbf) return this.str(t & 0x1f);
    switch (t) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xcc:
        return this.byte();
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xd0:
        return (this.byte() << 24) >> 24;
      case 0xd1:
        return (this.u16() << 16) >> 16;
      case 0xd2:
        return this.u32() | 0;
      case 0xcb: {
        if (this.p + 8 > this.end) throw GIVE_UP;
        // big-endian on the wire; copied byte by byte into a little-endian float
        for (let i = 0; i < 8; i++) F64_BYTES[7 - i] = this.b[this.p + i]!;
        this.p += 8;
        return F64[0]!;
      }
      case 0xd9:
        return this.str(this.byte());
      case 0xda:
        return this.str(this.u16());
      case 0xdb:
        return this.str(this.u32());
      default:
        return NOT_SCALAR;
    }
  }

  private str(len: number): string {
    const at = this.p;
    this.p += len;
    if (this.p > this.end) throw GIVE_UP;
    return utf8(this.b, at, this.p);
  }

  /** past one value of any kind, within the payload */
  private skip(depth: number): void {
    if (depth > MAX_DEPTH) throw GIVE_UP;
    const b = this.b;
    const t = this.byte();
    if (t < 0x40 || t >= 0xe0) return;
    if (t < 0x80) {
      const id = t & 0x3f;
      if (this.defGen[id] === this.gen) this.skipN(this.defKeys[id]!, depth);
      return;
    }
    if (t < 0x90) return this.skipN((t & 0x0f) * 2, depth);
    if (t < 0xa0) return this.skipN(t & 0x0f, depth);
    if (t < 0xc0) return this.over(t & 0x1f);
    switch (t) {
      case 0xc0:
      case 0xc2:
      case 0xc3:
        return;
      case 0xc4:
        return this.over(this.byte());
      case 0xc5:
        return this.over(this.u16());
      case 0xc6:
        return this.over(this.u32());
      case 0xc7:
        return this.over(this.byte() + 1);
      case 0xc8:
        return this.over(this.u16() + 1);
      case 0xc9:
        return this.over(this.u32() + 1);
      case 0xca:
        return this.over(4);
      case 0xcb:
        return this.over(8);
      case 0xcc:
      case 0xd0:
        return this.over(1);
      case 0xcd:
      case 0xd1:
        return this.over(2);
      case 0xce:
      case 0xd2:
        return this.over(4);
      case 0xcf:
      case 0xd3:
        return this.over(8);
      case 0xd4: {
        if (b[this.p] !== EXT_RECORD) return this.over(2);
        this.p++;
        const id = this.byte() & 0x3f;
        const n = this.arrayHeader();
        if (n > this.end - this.p) throw GIVE_UP;
        // the keys are strings; only their count matters here
        this.skipN(n, depth);
        this.define(id, n);
        return this.skipN(n, depth);
      }
      case 0xd5:
        // two-byte structure ids are refused at ingest; never guess at one
        if (b[this.p] === EXT_RECORD) throw GIVE_UP;
        return this.over(3);
      case 0xd6:
        return this.over(5);
      case 0xd7:
        return this.over(9);
      case 0xd8:
        return this.over(17);
      case 0xd9:
        return this.over(this.byte());
      case 0xda:
        return this.over(this.u16());
      case 0xdb:
        return this.over(this.u32());
      case 0xdc:
        return this.skipN(this.u16(), depth);
      case 0xdd:
        return this.skipN(this.u32(), depth);
      case 0xde:
        return this.skipN(this.u16() * 2, depth);
      case 0xdf:
        return this.skipN(this.u32() * 2, depth);
      default:
        throw GIVE_UP;
    }
  }

  private skipN(n: number, depth: number): void {
    // every value takes at least a byte: a count beyond what is left is corrupt, not a long loop
    if (n > this.end - this.p) throw GIVE_UP;
    for (let i = 0; i < n; i++) this.skip(depth + 1);
  }

  private define(id: number, keys: number): void {
    this.defKeys[id] = keys;
    this.defGen[id] = this.gen;
  }

  private arrayHeader(): number {
    const t = this.byte();
    if (t >= 0x90 && t <= 0x9f) return t & 0x0f;
    if (t === 0xdc) return this.u16();
    if (t === 0xdd) return this.u32();
    throw GIVE_UP;
  }

  private over(n: number): void {
    this.p += n;
    if (this.p > this.end) throw GIVE_UP;
  }

  private byte(): number {
    if (this.p >= this.end) throw GIVE_UP;
    return this.b[this.p++]!;
  }

  private u16(): number {
    if (this.p + 2 > this.end) throw GIVE_UP;
    const b = this.b;
    const v = (b[this.p]! << 8) | b[this.p + 1]!;
    this.p += 2;
    return v;
  }

  private u32(): number {
    if (this.p + 4 > this.end) throw GIVE_UP;
    const b = this.b;
    const v = b[this.p]! * 0x1000000 + ((b[this.p + 1]! << 16) | (b[this.p + 2]! << 8) | b[this.p + 3]!);
    this.p += 4;
    return v;
  }
}
