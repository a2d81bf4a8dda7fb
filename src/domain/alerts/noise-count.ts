/**
 * How often each console message (by its noise key) came in this worker's current window: the
 * count the noise detector compares with its threshold, for every non-error console line.
 *
 * Open addressing over typed arrays instead of a Map of {start, count} objects: most lines are
 * new keys, and a Map paid an entry and an object for each (and the garbage when the table was
 * dropped). Same rules as that Map: a key's window starts at the line that found it absent or
 * expired; at `max` keys, a new key first empties the table.
 */
export class NoiseCounts {
  private readonly keys: Int32Array;
  private readonly start: Float64Array;
  private readonly count: Int32Array;
  private readonly mask: number;
  private readonly shift: number;
  private used = 0;

  /** `max` keys at most; the table keeps twice as many slots, so a probe ends at an empty one soon */
  constructor(
    private readonly max: number,
    private readonly windowS: number,
  ) {
    let slots = 2;
    let bits = 1;
    while (slots < max * 2) {
      slots <<= 1;
      bits++;
    }
    this.shift = 32 - bits;
    this.keys = new Int32Array(slots);
    this.start = new Float64Array(slots);
    this.count = new Int32Array(slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.used;
  }

  /** Counts one more line of `key` (never 0: 0 marks an empty slot) in second `sec`; returns the count in its window. */
  add(key: number, sec: number): number {
    let i = this.slot(key);
    if (this.keys[i] === key) {
      if (sec - this.start[i]! < this.windowS) return ++this.count[i]!;
    } else {
      if (this.used >= this.max) {
        this.keys.fill(0);
        this.used = 0;
        i = this.slot(key);
      }
      this.keys[i] = key;
      this.used++;
    }
    this.start[i] = sec;
    this.count[i] = 1;
    return 1;
  }

  /** where `key` is, else the empty slot where it would go */
  private slot(key: number): number {
    const keys = this.keys;
    const mask = this.mask;
    // the high bits of a multiplicative hash depend on every bit of the key
    let i = Math.imul(key, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const k = keys[i]!;
      if (k === key || k === 0) return i;
      i = (i + 1) & mask;
    }
  }
}
