/**
 * The main-thread side of the store. It never calls Atomics.wait: every read is a bounded walk
 * over published records, and the lock is only ever tried (tryClear, crash recovery).
 *
 * Cursors are per-ring ordinals, never positions, so any number of readers (one per MCP
 * client) can hold their own. Visibility: committedSeq is loaded first and records with a
 * seq at or past it are not returned, so a multi-kind commit appears all at once.
 *
 * Torn reads: a writer moves a ring's tail past a record before overwriting its bytes, so
 * after copying a record the reader re-loads the tail; if it passed the record the copy is
 * discarded, counted missed, and the walk restarts from the new tail.
 */
import type { KindCounters } from './counters.js';
import {
  COMMITTED_SEQ,
  GEN,
  HEADER_BYTES,
  H_CLIENT_TIME,
  H_FLAGS,
  H_KIND,
  H_ORD,
  H_PAYLOAD_LEN,
  H_RECV_TIME,
  H_SEQ,
  H_TAB,
  H_TOTAL,
  INDEX_STRIDE,
  MAIN_HOLDER,
  PAD_MARKER,
  COUNTER,
  TAIL_ORD,
  TAIL_POS,
  align8,
  ringWord,
} from './layout.js';
import { StoreViews, type RingView, type StoreBuffers } from './store.js';

export interface RecordHeader {
  seq: number;
  ord: number;
  kind: number;
  recvTime: number;
  clientTime: number;
  tab: number;
}

export interface StoredRecord extends RecordHeader {
  /** a copy owned by the caller (a view into a chunk shared only with the same call's records) */
  payload: Uint8Array;
  /** where the record starts in its ring: ReadOptions.at reads it again without walking to it */
  pos: number;
}

/** Valid only inside the filter callback: the record's bytes are shared memory a writer will reuse. */
export interface RecordView extends RecordHeader {
  /** what its writer knew of the record (layout.ts REC_*); 0 when it said nothing */
  flags: number;
  /** whether the record's bytes contain `needle` */
  has(needle: Uint8Array): boolean;
}

/** bytes one native search covers ahead of the record it starts at (a few hundred records) */
const SEARCH_WINDOW = 64 * 1024;

/**
 * The one view a reader hands its filter, re-aimed at each record. A filter runs on every record a
 * scan examines — tens of thousands per observe under load — and a Buffer view per record was the
 * largest single source of main-thread garbage in a heap profile. Instead, one native search runs
 * over a window of the ring ahead of the record, and its answer (where the needle next occurs, or
 * that it does not occur before the window's end) answers the records that follow without
 * searching again. A plain JS byte loop allocated nothing either but was 2.5× slower.
 *
 * Sound because the bytes of every record a read examines were committed before the read began and
 * do not change unless overwritten, which the reader detects (tail moved) and then starts over with
 * `forget()`. A match found in bytes outside the record only ever answers for a record that holds it.
 */
class SharedRecordView implements RecordView {
  seq = 0;
  ord = 0;
  kind = 0;
  recvTime = 0;
  clientTime = 0;
  tab = 0;
  flags = 0;
  private buf: Buffer = EMPTY;
  private start = 0;
  private end = 0;
  /** per needle: searched [from, to); `at` its first occurrence there, -1 if none */
  private readonly found = new Map<Uint8Array, { from: number; to: number; at: number }>();

  aim(buf: Buffer, start: number, end: number): void {
    if (buf !== this.buf) {
      this.found.clear();
      this.buf = buf;
    }
    this.start = start;
    this.end = end;
  }

  forget(): void {
    this.found.clear();
    this.buf = EMPTY;
  }

  has(needle: Uint8Array): boolean {
    const len = needle.length;
    if (len === 0) return true;
    if (this.end - this.start < len) return false;
    let f = this.found.get(needle);
    if (!f || this.start < f.from || (f.at < 0 ? this.end > f.to : f.at < this.start)) {
      const to = Math.min(this.buf.length, Math.max(this.end, this.start + SEARCH_WINDOW));
      const at = this.buf.subarray(this.start, to).indexOf(needle);
      f = { from: this.start, to, at: at < 0 ? -1 : this.start + at };
      this.found.set(needle, f);
    }
    return f.at >= 0 && f.at + len <= this.end;
  }
}

export interface ReadOptions {
  /** runs before the payload is copied, so most records are rejected without an allocation */
  filter?: (v: RecordView) => boolean;
  /** bounds the main thread's time in one call when a filter rejects most records */
  maxScan?: number;
  /**
   * Where `fromOrd` starts in its ring, as a StoredRecord's `pos` said when it was read: the read
   * starts there instead of at the sparse index's entry before it (up to 63 records walked, ~4 µs).
   * Checked like any hint: a position the ring has since reused is noticed and dropped.
   */
  at?: number;
}

export interface ReadResult {
  records: StoredRecord[];
  /** ordinal after the last record examined; pass it as the next fromOrd */
  next: number;
  /** records the caller asked for that were overwritten or cleared first (exact) */
  missed: number;
  scanned: number;
  atEnd: boolean;
}

export interface RingStats {
  capacity: number;
  usedBytes: number;
  records: number;
  headOrd: number;
  tailOrd: number;
}

export class StoreCorruptError extends Error {
  constructor(kind: number, pos: number, detail: string) {
    super(`ring ${kind} is corrupt at logical position ${pos}: ${detail}`);
    this.name = 'StoreCorruptError';
  }
}

const EMPTY = Buffer.alloc(0);
const DEFAULT_MAX_SCAN = 10_000;
const ARENA_BYTES = 64 * 1024;
const HINTS_PER_RING = 256;
/** A reader lapped this often in one call gives up and reports where it got to. */
const MAX_RESTARTS = 64;
const SEQLOCK_TRIES = 64;

interface Start {
  pos: number;
  ord: number;
  trusted: boolean;
}

export class StoreReader {
  private readonly v: StoreViews;
  /** Cumulative walk costs: headers hopped to reach a cursor, walks restarted (lapped by a writer or a stale start), index or hint entries found stale. */
  readonly walkStats = { hops: 0, restarts: 0, staleStarts: 0 };
  /** ord -> logical pos, where sequential readers left off; validated like index entries */
  private readonly hints: Array<Map<number, number>>;
  private readonly lastStats: Array<RingStats | undefined> = [];
  private readonly view = new SharedRecordView();

  constructor(buffers: StoreBuffers) {
    this.v = new StoreViews(buffers);
    this.hints = this.v.rings.map(() => new Map());
  }

  get kinds(): number {
    return this.v.rings.length;
  }

  read(kind: number, fromOrd: number, limit: number, opts: ReadOptions = {}): ReadResult {
    if (Number.isNaN(fromOrd)) throw new RangeError('fromOrd is NaN');
    const v = this.v;
    const ring = v.ring(kind);
    const cap = ring.capacity;
    const { u32, f64 } = ring;
    // committedSeq first: heads loaded after it cover every record it admits.
    const committed = v.load(COMMITTED_SEQ);
    const hp = v.headPos(kind);
    const ho = v.headOrd(kind);
    const filter = opts.filter;
    const maxScan = opts.maxScan ?? DEFAULT_MAX_SCAN;
    const tailWord = ringWord(kind, TAIL_POS);
    const tailMoved = (pos: number): boolean => Number(Atomics.load(v.ctl64, tailWord)) > pos;

    const records: StoredRecord[] = [];
    let want = Math.max(0, Math.floor(fromOrd));
    // `at` is where this ordinal starts; once `want` moves (evicted, or past the end) it says nothing
    const atOrd = want;
    let missed = 0;
    let scanned = 0;
    let atEnd = false;
    let distrust = false;
    // Payloads are copied into per-call chunks: one fresh ArrayBuffer per record costs ~1 µs,
    // more than the copy. A chunk belongs to this call's records only.
    let arena: Uint8Array = EMPTY;
    let arenaOff = 0;
    let hint: Start | undefined;

    outer: for (let restarts = 0; restarts <= MAX_RESTARTS; restarts++) {
      // what the filter's searches learnt holds for this pass over the ring only
      this.view.forget();
      if (restarts > 0) this.walkStats.restarts++;
      const t = this.tail(kind);
      // A commit that overwrites its own records moves the tail just before the head, so the
      // tail may briefly be ahead of the head loaded above; the end is whichever is further.
      const end = Math.max(ho, t.ord);
      if (want > end) want = end;
      if (want < t.ord) {
        missed += t.ord - want;
        want = t.ord;
      }
      if (want >= ho) {
        atEnd = true;
        break;
      }
      const start = distrust ? t : this.locate(kind, ring, want, t, hp, want === atOrd ? opts.at : undefined);
      const fromTail = start === t;
      let { pos, ord, trusted } = start;
      for (;;) {
        if (pos >= hp || ord >= ho) {
          atEnd = true;
          hint = { pos, ord, trusted };
          break outer;
        }
        if (records.length >= limit || scanned >= maxScan) {
          hint = { pos, ord, trusted };
          break outer;
        }
        const phys = pos % cap;
        const total = u32[(phys + H_TOTAL) / 4]!;
        const plen = u32[(phys + H_PAYLOAD_LEN) / 4]!;
        if (plen === PAD_MARKER) {
          if (tailMoved(pos)) continue outer;
          if (total !== cap - phys) {
            if (!trusted) {
              // an unsettled tail pair retries as is; a stale hint or index entry is dropped
              if (!fromTail) {
                distrust = true;
                this.walkStats.staleStarts++;
              }
              continue outer;
            }
            throw new StoreCorruptError(kind, pos, `PAD of ${total} bytes, expected ${cap - phys}`);
          }
          pos += total;
          continue;
        }
        const hOrd = f64[(phys + H_ORD) / 8]!;
        const seq = f64[(phys + H_SEQ) / 8]!;
        if (hOrd !== ord || total < HEADER_BYTES || total % 8 !== 0 || phys + total > cap || HEADER_BYTES + plen > total) {
          if (tailMoved(pos)) continue outer;
          if (!trusted) {
            // an unsettled tail pair retries as is; a stale hint or index entry is dropped
            if (!fromTail) {
              distrust = true;
              this.walkStats.staleStarts++;
            }
            continue outer;
          }
          throw new StoreCorruptError(kind, pos, `header ord ${hOrd} total ${total} payload ${plen}, expected ord ${ord}`);
        }
        if (seq >= committed) {
          if (tailMoved(pos)) continue outer;
          atEnd = true;
          hint = { pos, ord, trusted: true };
          break outer;
        }
        if (ord < want) {
          // hopping from an index entry or hint to the wanted ordinal
          if (tailMoved(pos)) continue outer;
          pos += total;
          ord++;
          trusted = true;
          this.walkStats.hops++;
          continue;
        }
        const body = phys + HEADER_BYTES;
        const recvTime = f64[(phys + H_RECV_TIME) / 8]!;
        const clientTime = f64[(phys + H_CLIENT_TIME) / 8]!;
        const tab = ring.i32[(phys + H_TAB) / 4]!;
        const k = ring.u16[(phys + H_KIND) / 2]!;
        let keep = true;
        if (filter) {
          const rv = this.view;
          rv.seq = seq;
          rv.ord = ord;
          rv.kind = k;
          rv.recvTime = recvTime;
          rv.clientTime = clientTime;
          rv.tab = tab;
          rv.flags = ring.u16[(phys + H_FLAGS) / 2]!;
          rv.aim(ring.buf, body, body + plen);
          keep = filter(rv);
        }
        let payload: Uint8Array | undefined;
        if (keep) {
          if (arenaOff + plen > arena.byteLength) {
            arena = new Uint8Array(Math.max(plen, Math.min(ARENA_BYTES, align8(plen) * (limit - records.length))));
            arenaOff = 0;
          }
          ring.buf.copy(arena, arenaOff, body, body + plen);
          payload = arena.subarray(arenaOff, arenaOff + plen);
          arenaOff = align8(arenaOff + plen);
        }
        if (tailMoved(pos)) continue outer;
        scanned++;
        if (payload) records.push({ seq, ord, kind: k, recvTime, clientTime, tab, payload, pos });
        pos += total;
        ord++;
        want = ord;
        trusted = true;
      }
    }
    if (hint?.trusted && hint.ord === want) this.remember(kind, want, hint.pos);
    return { records, next: want, missed, scanned, atEnd };
  }

  /** The head ordinal published with the last commit: the cursor a reader reaches at the end. */
  latestOrd(kind: number): number {
    return this.ringStats(kind).headOrd;
  }

  tailOrd(kind: number): number {
    return this.ringStats(kind).tailOrd;
  }

  ringStats(kind: number): RingStats {
    const v = this.v;
    const capacity = v.ring(kind).capacity;
    let s: RingStats = { capacity, usedBytes: 0, records: 0, headOrd: 0, tailOrd: 0 };
    for (let i = 0; i < SEQLOCK_TRIES; i++) {
      const g = Atomics.load(v.ctl32, GEN);
      const hp = v.headPos(kind);
      const ho = v.headOrd(kind);
      const tp = v.tailPos(kind);
      const to = v.tailOrd(kind);
      s = { capacity, usedBytes: Math.max(0, hp - tp), records: Math.max(0, ho - to), headOrd: ho, tailOrd: to };
      if ((g & 1) === 0 && Atomics.load(v.ctl32, GEN) === g) {
        this.lastStats[kind] = s;
        return s;
      }
    }
    // a writer preempted mid-window: the previous consistent view, as counters() does
    return this.lastStats[kind] ?? s;
  }

  /** Per kind id, a snapshot in which received = stored + rejected + dropped holds. */
  counters(): KindCounters[] {
    return this.v.counters.snapshot(this.v.ctl32);
  }

  /**
   * Drops every readable record of `kinds` (tail = head, counted cleared). Only tries the
   * lock: false means a writer holds it and the caller should retry on a later turn.
   */
  tryClear(kinds: readonly number[]): boolean {
    const v = this.v;
    for (const k of kinds) v.ring(k);
    if (!v.lock.tryAcquire(MAIN_HOLDER)) return false;
    try {
      Atomics.add(v.ctl32, GEN, 1);
      for (const k of kinds) {
        const ho = v.headOrd(k);
        const to = v.tailOrd(k);
        v.store(ringWord(k, TAIL_POS), v.headPos(k));
        v.store(ringWord(k, TAIL_ORD), ho);
        v.counters.add(k, COUNTER.cleared, ho - to);
      }
      Atomics.add(v.ctl32, GEN, 1);
    } finally {
      v.lock.release(MAIN_HOLDER);
    }
    for (const k of kinds) this.hints[k]!.clear();
    return true;
  }

  lockHolder(): number {
    return this.v.lock.holder();
  }

  /**
   * Crash recovery for a worker that died holding the commit lock. Its unpublished bytes are
   * ignored (heads never moved); index entries it may have written for unpublished ordinals
   * are wiped, since a later writer could publish other records at those positions.
   */
  forceReleaseIfHeldBy(id: number): boolean {
    return this.v.lock.forceReleaseIfHeldBy(id, () => this.wipeIndexes());
  }

  /** Same, for whichever holder is not in `live` (every thread that may hold the lock). */
  releaseLockIfHolderDead(live: ReadonlySet<number>): number | undefined {
    return this.v.lock.releaseIfHolderDead(live, () => this.wipeIndexes());
  }

  private wipeIndexes(): void {
    for (const r of this.v.rings) r.index.fill(-1);
  }

  /**
   * tailPos and tailOrd as one pair via the gen seqlock. On a 2-core machine a writer is often
   * preempted inside a window, so spinning cannot be relied on: after a bounded number of tries
   * the pair is returned untrusted, and a walk that finds it inconsistent simply retries.
   */
  private tail(kind: number): Start {
    const v = this.v;
    let pos = 0;
    let ord = 0;
    for (let i = 0; i < SEQLOCK_TRIES; i++) {
      const g = Atomics.load(v.ctl32, GEN);
      pos = v.tailPos(kind);
      ord = v.tailOrd(kind);
      if ((g & 1) === 0 && Atomics.load(v.ctl32, GEN) === g) return { pos, ord, trusted: true };
    }
    return { pos, ord, trusted: false };
  }

  /** A start at or before `want`: the tail, the caller's position, a hint, or the sparse index (then <= 63 hops). */
  private locate(kind: number, ring: RingView, want: number, t: Start, hp: number, at: number | undefined): Start {
    if (want === t.ord) return t;
    if (at !== undefined && at >= t.pos && at < hp && at % 8 === 0) return { pos: at, ord: want, trusted: false };
    const h = this.hints[kind]!.get(want);
    if (h !== undefined && h >= t.pos && h < hp) return { pos: h, ord: want, trusted: false };
    const base = want - (want % INDEX_STRIDE);
    if (base > t.ord) {
      const p = ring.index[Math.floor(base / INDEX_STRIDE) % ring.index.length]!;
      if (p >= t.pos && p < hp && p % 8 === 0) return { pos: p, ord: base, trusted: false };
    }
    return t;
  }

  private remember(kind: number, ord: number, pos: number): void {
    const m = this.hints[kind]!;
    m.delete(ord);
    m.set(ord, pos);
    if (m.size > HINTS_PER_RING) m.delete(m.keys().next().value!);
  }
}
