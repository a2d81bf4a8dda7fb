/**
 * The worker side of the store. One commit = one batch, visible all or nothing.
 *
 * Under the commit lock:
 *   1. records whose framed size exceeds their ring are left out (dropped 'record_too_large');
 *   2. gen window A: each ring's tail is advanced past every published record the batch will
 *      overwrite (counted evicted) BEFORE a byte is written, so a reader that copied a record
 *      and then sees the tail past it knows the copy may be torn;
 *   3. headers and payloads are copied in, seqs (one contiguous range) and ordinals assigned,
 *      the sparse index updated. Nothing here is visible: heads are unchanged;
 *   4. gen window B: any tail the batch moved past its own records (or a PAD it skipped),
 *      then heads, counters, the caller's hook, then nextSeq and committedSeq last.
 *
 * A worker that dies between 2 and 4 publishes nothing of the batch: records it evicted in 2
 * are gone (and counted), the rest of the ring is intact, and main frees the lock with
 * forceReleaseIfHeldBy / releaseLockIfHolderDead. Dying inside window B itself (a handful of
 * stores and the caller's hook; only terminate() or a fatal error can land there) may leave
 * heads published without committedSeq; that gap is accepted.
 */
import {
  COUNTER,
  DROP_REASONS,
  GEN,
  COMMITTED_SEQ,
  HEADER_BYTES,
  HEAD_ORD,
  HEAD_POS,
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
  NEXT_SEQ,
  PAD_MARKER,
  TAIL_ORD,
  TAIL_POS,
  framedSize,
  ringWord,
  type DropReason,
} from './layout.js';
import { StoreViews, type RingView, type StoreBuffers } from './store.js';

export interface StagedRecord {
  kind: number;
  clientTime: number;
  tab: number;
  payload: Uint8Array;
  /** the header's flags (layout.ts REC_*): what the stage that encoded it knew; left out, 0 */
  flags?: number;
}

export interface StagedCommit {
  recvTime: number;
  records: readonly StagedRecord[];
  /** per kind id; missing entries count as 0 */
  received: readonly number[];
  rejected: readonly number[];
  dropped?: ReadonlyArray<readonly [kind: number, reason: DropReason, n: number]>;
}

export interface CommitOutcome {
  /** -1 when the commit stored no record */
  firstSeq: number;
  lastSeq: number;
  /** per kind id, records given a seq (including any the same batch overwrote at once) */
  stored: number[];
  tooLarge: number;
}

export interface StoreWriterOptions {
  /** a worker that cannot get the lock in this long fails its task instead of hanging */
  lockTimeoutMs?: number;
  /**
   * Test seam: runs after the bytes are copied and before anything is published, which is
   * where a crashing worker leaves the store. Throwing here abandons the commit.
   */
  afterCopy?: () => void;
}

/** The largest frame a u32 total can describe. */
const MAX_FRAME = 0xfffffff8;

interface RingPlan {
  head: number; // published headPos at lock time
  ord: number; // published headOrd at lock time
  end: number; // logical end after the batch
  count: number; // records of the batch in this ring
  tail: number; // tailPos once the batch is in
  tailOrd: number;
  selfEvicted: number; // records of this batch that later ones in the same batch overwrite
  moveTail: boolean; // the tail must move in window B, past what window A could evict
}

export class StoreWriter {
  private readonly v: StoreViews;
  private readonly kinds: number;
  private readonly lockTimeoutMs: number;
  private readonly afterCopy: (() => void) | undefined;
  private pos = new Float64Array(256); // planned logical pos per record, reused across commits

  constructor(
    buffers: StoreBuffers,
    private readonly holderId: number,
    opts: StoreWriterOptions = {},
  ) {
    if (!Number.isInteger(holderId) || holderId <= 0) throw new RangeError(`writer holder id must be a positive integer (a worker threadId), got ${holderId}`);
    this.v = new StoreViews(buffers);
    this.kinds = this.v.rings.length;
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 2000;
    this.afterCopy = opts.afterCopy;
  }

  /**
   * Appends a batch and its accounting atomically. A batch with no records (all rejected,
   * duplicate) still goes through here so every counter changes in one place.
   * `beforePublish` runs under the lock just before committedSeq is stored (item slots use it),
   * told how many records were left out as too large for their ring;
   * if it throws, the batch is still published and the error rethrown after the lock is freed.
   */
  commit(c: StagedCommit, beforePublish?: (tooLarge: number) => void): CommitOutcome {
    const recs = c.records;
    const n = recs.length;
    if (this.pos.length < n) this.pos = new Float64Array(Math.max(n, this.pos.length * 2));
    const pos = this.pos;
    const stored = new Array<number>(this.kinds).fill(0);
    const tooLargeBy = new Array<number>(this.kinds).fill(0);
    let tooLarge = 0;
    for (let i = 0; i < n; i++) {
      const r = recs[i]!;
      const ring = this.v.ring(r.kind);
      const size = framedSize(r.payload.byteLength);
      if (size > ring.capacity || size > MAX_FRAME) {
        pos[i] = -1;
        tooLarge++;
        tooLargeBy[r.kind]!++;
      } else {
        pos[i] = 0;
        stored[r.kind]!++;
      }
    }
    // Checked before the lock: a throw inside a gen window would leave it open.
    for (const [k, reason] of c.dropped ?? []) {
      this.v.ring(k);
      if (!DROP_REASONS.includes(reason)) throw new RangeError(`unknown drop reason ${String(reason)}`);
    }

    const v = this.v;
    v.lock.acquire(this.holderId, this.lockTimeoutMs);
    let hookError: unknown;
    let firstSeq = -1;
    let lastSeq = -1;
    try {
      const plans = this.plan(recs, stored);
      this.windowA(plans);
      firstSeq = v.load(NEXT_SEQ);
      const nextSeq = this.copyIn(recs, plans, c.recvTime, firstSeq);
      if (nextSeq > firstSeq) lastSeq = nextSeq - 1;
      else firstSeq = -1;
      this.afterCopy?.();
      hookError = this.windowB(c, plans, stored, tooLargeBy, nextSeq, beforePublish && (() => beforePublish(tooLarge)));
    } finally {
      v.lock.release(this.holderId);
    }
    if (hookError !== undefined) throw hookError;
    return { firstSeq, lastSeq, stored, tooLarge };
  }

  /** Logical positions for every record that fits; a record that would straddle the end is moved to the start behind a PAD. */
  private plan(recs: readonly StagedRecord[], stored: number[]): Array<RingPlan | undefined> {
    const v = this.v;
    const plans: Array<RingPlan | undefined> = new Array(this.kinds);
    for (let k = 0; k < this.kinds; k++) {
      if (stored[k] === 0) continue;
      const head = v.headPos(k);
      const ord = v.headOrd(k);
      plans[k] = { head, ord, end: head, count: 0, tail: v.tailPos(k), tailOrd: v.tailOrd(k), selfEvicted: 0, moveTail: false };
    }
    const pos = this.pos;
    for (let i = 0; i < recs.length; i++) {
      if (pos[i] === -1) continue;
      const r = recs[i]!;
      const p = plans[r.kind]!;
      const cap = v.ring(r.kind).capacity;
      const size = framedSize(r.payload.byteLength);
      let at = p.end;
      const phys = at % cap;
      if (phys + size > cap) at += cap - phys;
      pos[i] = at;
      p.end = at + size;
      p.count++;
    }
    return plans;
  }

  /** Moves each tail past the published records the batch will overwrite, before any byte is. */
  private windowA(plans: Array<RingPlan | undefined>): void {
    const v = this.v;
    let open = false;
    for (let k = 0; k < this.kinds; k++) {
      const p = plans[k];
      if (!p) continue;
      const ring = v.ring(k);
      const need = p.end - ring.capacity;
      if (p.tail >= need) continue;
      let tp = p.tail;
      let to = p.tailOrd;
      while (tp < need && tp < p.head) {
        const phys = tp % ring.capacity;
        if (ring.u32[(phys + H_PAYLOAD_LEN) / 4] !== PAD_MARKER) to++;
        tp += ring.u32[(phys + H_TOTAL) / 4]!;
      }
      if (!open) {
        Atomics.add(v.ctl32, GEN, 1);
        open = true;
      }
      v.store(ringWord(k, TAIL_POS), tp);
      v.store(ringWord(k, TAIL_ORD), to);
      v.counters.add(k, COUNTER.evicted, to - p.tailOrd);
      p.tail = tp;
      p.tailOrd = to;
    }
    if (open) Atomics.add(v.ctl32, GEN, 1);
  }

  /** Copies headers and payloads; returns the seq after the batch's last record. */
  private copyIn(recs: readonly StagedRecord[], plans: Array<RingPlan | undefined>, recvTime: number, seq: number): number {
    const pos = this.pos;
    // Where each ring's previous record ended: a gap up to the next record is a PAD.
    const written = plans.map((p) => (p ? p.head : 0));
    const ords = plans.map((p) => (p ? p.ord : 0));
    for (let i = 0; i < recs.length; i++) {
      const at = pos[i]!;
      if (at === -1) continue;
      const r = recs[i]!;
      const k = r.kind;
      const p = plans[k]!;
      const ring = this.v.ring(k);
      const ord = ords[k]!;
      ords[k] = ord + 1;
      const size = framedSize(r.payload.byteLength);
      const prevEnd = written[k]!;
      written[k] = at + size;
      const s = seq++;
      // Later records of this same batch overwrite it: it gets a seq and ordinal, is counted
      // stored and evicted, and is never written.
      if (at < p.end - ring.capacity) {
        p.selfEvicted++;
        p.tailOrd = ord + 1;
        continue;
      }
      if (at > prevEnd && prevEnd >= p.end - ring.capacity) writePad(ring, prevEnd, at - prevEnd);
      writeRecord(ring, at, size, r, s, ord, recvTime);
      if (ord % INDEX_STRIDE === 0) ring.index[Math.floor(ord / INDEX_STRIDE) % ring.index.length] = at;
    }
    for (let k = 0; k < plans.length; k++) {
      const p = plans[k];
      // Window A could only evict up to the old head. If the batch overwrites more than that
      // (itself, or a PAD it put there), the tail goes to its first surviving record.
      if (!p) continue;
      const need = p.end - this.v.ring(k).capacity;
      if (p.tail < need) {
        p.tail = firstSurvivor(recs, pos, k, need);
        p.moveTail = true;
      }
    }
    return seq;
  }

  private windowB(
    c: StagedCommit,
    plans: Array<RingPlan | undefined>,
    stored: number[],
    tooLargeBy: number[],
    nextSeq: number,
    beforePublish: (() => void) | undefined,
  ): unknown {
    const v = this.v;
    const counters = v.counters;
    Atomics.add(v.ctl32, GEN, 1);
    for (let k = 0; k < this.kinds; k++) {
      const p = plans[k];
      if (!p) continue;
      // Tail before head: a reader that sees the new head and walks into bytes the batch
      // overwrote (a PAD it skipped, its own evicted records) must then see the tail past them.
      if (p.moveTail) {
        v.store(ringWord(k, TAIL_POS), p.tail);
        v.store(ringWord(k, TAIL_ORD), p.tailOrd);
        counters.add(k, COUNTER.evicted, p.selfEvicted);
      }
      v.store(ringWord(k, HEAD_POS), p.end);
      v.store(ringWord(k, HEAD_ORD), p.ord + p.count);
    }
    for (let k = 0; k < this.kinds; k++) {
      counters.add(k, COUNTER.received, c.received[k] ?? 0);
      counters.add(k, COUNTER.rejected, c.rejected[k] ?? 0);
      counters.add(k, COUNTER.stored, stored[k]!);
      counters.addDropped(k, 'record_too_large', tooLargeBy[k]!);
    }
    for (const [k, reason, n] of c.dropped ?? []) counters.addDropped(k, reason, n);
    let hookError: unknown;
    try {
      beforePublish?.();
    } catch (err) {
      hookError = err ?? new Error('beforePublish threw a nullish value');
    }
    v.store(NEXT_SEQ, nextSeq);
    v.store(COMMITTED_SEQ, nextSeq);
    Atomics.add(v.ctl32, GEN, 1);
    return hookError;
  }
}

function firstSurvivor(recs: readonly StagedRecord[], pos: Float64Array, kind: number, need: number): number {
  for (let i = 0; i < recs.length; i++) {
    const at = pos[i]!;
    if (at >= need && recs[i]!.kind === kind) return at;
  }
  throw new Error(`no surviving record in ring ${kind}`);
}

function writePad(ring: RingView, at: number, len: number): void {
  const phys = at % ring.capacity;
  ring.u32[(phys + H_TOTAL) / 4] = len;
  ring.u32[(phys + H_PAYLOAD_LEN) / 4] = PAD_MARKER;
}

function writeRecord(ring: RingView, at: number, size: number, r: StagedRecord, seq: number, ord: number, recvTime: number): void {
  const phys = at % ring.capacity;
  ring.u8.set(r.payload, phys + HEADER_BYTES);
  ring.u32[(phys + H_TOTAL) / 4] = size;
  ring.u32[(phys + H_PAYLOAD_LEN) / 4] = r.payload.byteLength;
  ring.f64[(phys + H_SEQ) / 8] = seq;
  ring.f64[(phys + H_ORD) / 8] = ord;
  ring.f64[(phys + H_RECV_TIME) / 8] = recvTime;
  ring.f64[(phys + H_CLIENT_TIME) / 8] = r.clientTime;
  ring.i32[(phys + H_TAB) / 4] = r.tab;
  ring.u16[(phys + H_KIND) / 2] = r.kind;
  ring.u16[(phys + H_FLAGS) / 2] = r.flags ?? 0;
}
