/**
 * The alert ring: workers publish small alert records (JSON, ≤ one slot), the main thread reads
 * them by cursor, woken by Atomics.notify through Atomics.waitAsync (it never blocks).
 *
 * Slots are fixed-size; a writer claims an index with Atomics.add and publishes the slot by
 * storing index+1 in its sequence word last, so a reader sees a slot whole or not at all. A
 * reader that fell a lap behind is told how many it missed, like the telemetry rings.
 */

const HEAD = 0; // next index to claim
const WAKE = 1; // bumped after every publish; what the reader waits on
/** the reader looks again after this long without a notify (it never misses one: see listen) */
const BACKSTOP_MS = 30_000;
const HEADER_WORDS = 4;
/** per slot: [seq (index+1 when published, 0 while written), byte length] then the bytes */
const SLOT_HEADER = 8;

export interface AlertRingBuffers {
  sab: SharedArrayBuffer;
  slots: number;
  slotBytes: number;
}

export function allocateAlertRing(slots = 512, slotBytes = 8192): AlertRingBuffers {
  if (slots & (slots - 1)) throw new RangeError('alert ring slots must be a power of two');
  return { sab: new SharedArrayBuffer(HEADER_WORDS * 4 + slots * slotBytes), slots, slotBytes };
}

/** Node 20 has Atomics.waitAsync; TypeScript's ES2022 lib does not declare it yet */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<unknown> | string } }).waitAsync.bind(Atomics);

const enc = new TextEncoder();
const dec = new TextDecoder();

export class AlertRingWriter {
  private readonly words: Int32Array;
  private readonly bytes: Uint8Array;

  constructor(private readonly b: AlertRingBuffers) {
    this.words = new Int32Array(b.sab, 0, HEADER_WORDS);
    this.bytes = new Uint8Array(b.sab);
  }

  /** false when the record does not fit a slot (the caller counts it) */
  publish(record: unknown): boolean {
    const data = enc.encode(JSON.stringify(record));
    if (data.length > this.b.slotBytes - SLOT_HEADER) return false;
    const index = Atomics.add(this.words, HEAD, 1);
    const base = HEADER_WORDS * 4 + (index & (this.b.slots - 1)) * this.b.slotBytes;
    const head = new Int32Array(this.b.sab, base, 2);
    Atomics.store(head, 0, 0);
    this.bytes.set(data, base + SLOT_HEADER);
    head[1] = data.length;
    Atomics.store(head, 0, (index + 1) | 0);
    Atomics.add(this.words, WAKE, 1);
    Atomics.notify(this.words, WAKE);
    return true;
  }
}

export interface AlertRingBatch {
  records: unknown[];
  /** overwritten before they were read */
  missed: number;
}

export class AlertRingReader {
  private readonly words: Int32Array;
  private readonly bytes: Uint8Array;
  private cursor: number;
  private closed = false;

  constructor(private readonly b: AlertRingBuffers) {
    this.words = new Int32Array(b.sab, 0, HEADER_WORDS);
    this.bytes = new Uint8Array(b.sab);
    this.cursor = Atomics.load(this.words, HEAD);
  }

  /** Everything published since the last read. A slot still being written ends the read early. */
  read(limit = 1024): AlertRingBatch {
    const out: unknown[] = [];
    let missed = 0;
    const head = Atomics.load(this.words, HEAD);
    if (head - this.cursor > this.b.slots) {
      missed += head - this.cursor - this.b.slots;
      this.cursor = head - this.b.slots;
    }
    while (this.cursor !== head && out.length < limit) {
      const base = HEADER_WORDS * 4 + (this.cursor & (this.b.slots - 1)) * this.b.slotBytes;
      const seqWord = new Int32Array(this.b.sab, base, 2);
      const seq = Atomics.load(seqWord, 0);
      if (seq === 0 || seq - 1 < this.cursor) break; // claimed, not yet published
      if (seq - 1 > this.cursor) {
        missed++; // a later lap took the slot
        this.cursor++;
        continue;
      }
      const len = seqWord[1]!;
      const copy = this.bytes.slice(base + SLOT_HEADER, base + SLOT_HEADER + len);
      // seqlock: the slot must not have been reclaimed while we copied it
      if (Atomics.load(seqWord, 0) !== seq) {
        missed++;
        this.cursor++;
        continue;
      }
      try {
        out.push(JSON.parse(dec.decode(copy)));
      } catch {
        missed++;
      }
      this.cursor++;
    }
    return { records: out, missed };
  }

  /** Calls `onRecords` whenever something is published, until close(). Never blocks main. */
  listen(onBatch: (b: AlertRingBatch) => void): void {
    const loop = async (): Promise<void> => {
      while (!this.closed) {
        const seen = Atomics.load(this.words, WAKE);
        const batch = this.read();
        if (batch.records.length || batch.missed) onBatch(batch);
        // a slot caught mid-write: look again very soon rather than wait for the next publish
        if (this.cursor !== Atomics.load(this.words, HEAD)) {
          await new Promise((r) => setTimeout(r, 1).unref());
          continue;
        }
        // every publish and close() notifies: the timeout is only a backstop, long enough that an
        // idle daemon is not woken by it every second
        const w = waitAsync(this.words, WAKE, seen, BACKSTOP_MS);
        if (w.async) await w.value;
      }
    };
    void loop();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // wake the pending waitAsync so nothing outlives the close
    Atomics.add(this.words, WAKE, 1);
    Atomics.notify(this.words, WAKE);
  }
}
