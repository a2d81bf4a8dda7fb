/**
 * Allocation of the telemetry store and the typed views both sides build over it.
 * StoreBuffers is a plain object of SharedArrayBuffers so it crosses workerData/postMessage
 * as is; every view is rebuilt on the receiving side from layout.ts.
 */
import { CounterView } from './counters.js';
import { CommitLock } from './lock.js';
import { HEAD_ORD, HEAD_POS, TAIL_ORD, TAIL_POS, ringWord, storeSizes } from './layout.js';

export interface StoreBuffers {
  readonly control: SharedArrayBuffer;
  readonly counters: SharedArrayBuffer;
  /** one per kind id; byteLength is the ring capacity (a multiple of 8) */
  readonly rings: readonly SharedArrayBuffer[];
  /** one sparse position index per ring */
  readonly index: readonly SharedArrayBuffer[];
}

export function allocateStore(ringBytes: readonly number[]): StoreBuffers {
  const s = storeSizes(ringBytes);
  const index = s.indexSlots.map((n) => {
    const buf = new SharedArrayBuffer(n * 8);
    new Float64Array(buf).fill(-1);
    return buf;
  });
  return {
    control: new SharedArrayBuffer(s.controlBytes),
    counters: new SharedArrayBuffer(s.countersBytes),
    rings: s.ringCapacities.map((c) => new SharedArrayBuffer(c)),
    index,
  };
}

/** Views of one ring's bytes; records are 8-aligned so every header field is an aligned element. */
export class RingView {
  readonly capacity: number;
  readonly u8: Uint8Array;
  /** the whole ring as a Buffer: Buffer#copy is the cheapest way out of shared memory */
  readonly buf: Buffer;
  readonly u16: Uint16Array;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly index: Float64Array;

  constructor(
    readonly buffer: SharedArrayBuffer,
    indexBuf: SharedArrayBuffer,
  ) {
    this.capacity = buffer.byteLength;
    this.u8 = new Uint8Array(buffer);
    this.buf = Buffer.from(buffer);
    this.u16 = new Uint16Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.index = new Float64Array(indexBuf);
  }
}

export class StoreViews {
  readonly ctl32: Int32Array;
  readonly ctl64: BigInt64Array;
  readonly lock: CommitLock;
  readonly counters: CounterView;
  readonly rings: RingView[];

  constructor(readonly buffers: StoreBuffers) {
    this.ctl32 = new Int32Array(buffers.control);
    this.ctl64 = new BigInt64Array(buffers.control);
    this.lock = new CommitLock(this.ctl32);
    this.counters = new CounterView(buffers.counters);
    this.rings = buffers.rings.map((r, k) => {
      const idx = buffers.index[k];
      if (!idx) throw new RangeError(`store has no index for ring ${k}`);
      return new RingView(r, idx);
    });
  }

  load(word: number): number {
    return Number(Atomics.load(this.ctl64, word));
  }

  store(word: number, v: number): void {
    Atomics.store(this.ctl64, word, BigInt(v));
  }

  ring(kind: number): RingView {
    const r = this.rings[kind];
    if (!r) throw new RangeError(`unknown ring ${kind}`);
    return r;
  }

  headPos(k: number): number {
    return this.load(ringWord(k, HEAD_POS));
  }
  headOrd(k: number): number {
    return this.load(ringWord(k, HEAD_ORD));
  }
  tailPos(k: number): number {
    return this.load(ringWord(k, TAIL_POS));
  }
  tailOrd(k: number): number {
    return this.load(ringWord(k, TAIL_ORD));
  }
}
