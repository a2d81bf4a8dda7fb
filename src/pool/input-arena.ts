/**
 * The shared input arena: the uWS edge copies each frame (or HTTP body) into it exactly once;
 * tasks name slices by (offset, length); workers read them in place. Nothing is transferred or
 * structured-cloned, and a task retried after a worker crash still finds its bytes.
 *
 * Allocation is a ring with FIFO reclamation: `alloc` bumps the head (wrapping to 0 when a slice
 * would straddle the end); `release` marks a slice done and the tail advances over the done
 * prefix. Tasks finish out of order, so a slow slice holds the tail back; the arena is sized so
 * that only sustained overload fills it, and a full arena is admission control's last word.
 * Pages of the SharedArrayBuffer are zero-filled by the OS on first touch and stay resident once
 * written (there is no way to give a SharedArrayBuffer's pages back), so where slices go decides
 * the arena's RSS. Empty, it starts again at 0. Under a sustained stream it is never empty, and a
 * ring that kept bumping would walk (and keep) the whole arena; so once the head is past half of
 * it and the oldest live slice is too, the next slice goes back to 0: the pages touched are half
 * plus the deepest backlog, not the stream's total (issue 17, idle RSS after a burst). Half, not
 * less: until the slices past the mark drain, the skipped end is not usable, and admission control
 * (`unavailable`, refused from 75 %) must not see a skip alone as pressure.
 */
export interface ArenaSlice {
  readonly off: number;
  readonly len: number;
}

interface Alloc {
  start: number; // logical position (monotonic)
  end: number; // logical end, including any skipped bytes before a wrap
  off: number; // physical offset of the data
  done: boolean;
}

export class InputArena {
  /** replaced by renew(): read it at each use, never keep it */
  buffer: SharedArrayBuffer;
  bytes: Uint8Array;
  /** buffers handed out since construction (renew() counts them) */
  generation = 0;
  readonly capacity: number;
  private head = 0; // logical
  private tail = 0; // logical
  private readonly live: Alloc[] = [];
  private liveStart = 0; // index of the first live entry (avoids Array.shift)
  private readonly byOff = new Map<number, Alloc>();
  /** a head past this goes back to 0 when the front is free (see above) */
  private readonly soft: number;
  /** bytes skipped by an early wrap, not yet passed by the tail: free, so not `used` */
  private skipped = 0;
  private skipEnd = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.buffer = new SharedArrayBuffer(capacity);
    this.bytes = new Uint8Array(this.buffer);
    this.soft = Math.floor(capacity / 2);
  }

  /** bytes held: live slices, and done ones behind a live one (an end skipped early is free, not held) */
  get used(): number {
    return this.unavailable - (this.tail < this.skipEnd ? this.skipped : 0);
  }

  /** bytes new slices cannot have right now, a skipped end included: what admission control weighs */
  get unavailable(): number {
    return this.head - this.tail;
  }

  /** nothing allocated, nothing reserved: no one names a slice of the buffer */
  get empty(): boolean {
    return this.head === 0 && this.tail === 0 && this.live.length === 0;
  }

  /**
   * Swaps in a fresh, untouched buffer when nothing is allocated: the pages the old one had
   * touched are returned once every thread drops it (the pool recycles its workers with it).
   * Returns false, changing nothing, while any slice is live.
   */
  renew(): boolean {
    if (!this.empty) return false;
    this.buffer = new SharedArrayBuffer(this.capacity);
    this.bytes = new Uint8Array(this.buffer);
    this.generation++;
    return true;
  }

  /** Copies `src` into the arena. Returns undefined when it does not fit right now. */
  copyIn(src: Uint8Array): ArenaSlice | undefined {
    const slice = this.reserve(src.byteLength);
    if (slice) this.bytes.set(src, slice.off);
    return slice;
  }

  /** Reserves `len` contiguous bytes (an HTTP body of known length is read straight into them). */
  reserve(len: number): ArenaSlice | undefined {
    if (len > this.capacity) return undefined;
    let phys = this.head % this.capacity;
    let start = this.head;
    const tailPhys = this.tail % this.capacity;
    // early wrap: the live slices all lie past the soft mark (not wrapped themselves) and the
    // front holds this one, so the pages before them are reused instead of fresh ones touched
    const early = phys + len <= this.capacity && phys + len > this.soft && this.tail < this.head && tailPhys <= phys && tailPhys >= Math.max(this.soft, len);
    if (early) {
      start = this.head + (this.capacity - phys);
      phys = 0;
    } else if (phys + len > this.capacity) {
      // skip the unusable end so a slice is always contiguous
      start = this.head + (this.capacity - phys);
      phys = 0;
    }
    const end = start + Math.max(len, 1);
    if (end - this.tail > this.capacity) return undefined;
    if (early) {
      this.skipped = start - this.head;
      this.skipEnd = start;
    }
    const a: Alloc = { start: this.head, end, off: phys, done: false };
    this.live.push(a);
    this.byOff.set(phys, a);
    this.head = end;
    return { off: phys, len };
  }

  release(slice: ArenaSlice): void {
    const a = this.byOff.get(slice.off);
    if (!a || a.done) return;
    a.done = true;
    this.byOff.delete(slice.off);
    while (this.liveStart < this.live.length && this.live[this.liveStart]!.done) {
      this.tail = this.live[this.liveStart]!.end;
      this.liveStart++;
    }
    if (this.liveStart === this.live.length) {
      this.live.length = 0;
      this.liveStart = 0;
      // Empty: start again at offset 0. A ring that kept bumping would walk the whole arena
      // under light traffic and leave every page of it resident; this way the pages touched are
      // the deepest backlog's, not the traffic's total.
      this.head = 0;
      this.tail = 0;
      this.skipped = 0;
      this.skipEnd = 0;
    } else if (this.liveStart > 1024 && this.liveStart * 2 > this.live.length) {
      this.live.splice(0, this.liveStart);
      this.liveStart = 0;
    }
  }
}
