/**
 * The express board: a few shared-memory entries on which main posts the one small frame of a
 * producer that was idle, and which every ingest worker looks at between two items.
 *
 * Why: a quiet producer's frame is usually the one an agent is waiting on (an error after a
 * click), and under load it used to wait for a worker to finish the task it held, then for main's
 * turn to hand out the next one — 2–16 ms at p99 with two busy workers on two cores, most of the
 * push latency. Whichever worker reaches an item boundary first now takes it: the wait is one item
 * of someone else's work, and a worker that lost its core does not hold it up.
 *
 * The frame is submitted the normal way as well. The worker whose task names it (the owner) takes
 * it itself if it is still posted; if another worker took it, the owner waits for that worker and
 * answers with the result it left in the entry, so acks, per-session order and crash recovery stay
 * the dispatcher's. Takers only commit batches; any other frame is declined back to the owner.
 *
 *   header (Int32): [ posted ]                         entries in state POSTED (a cheap first look)
 *   entry  (Int32): [ state | taker thread | session bytes | result bytes | ... ]
 *          (Float64 at +META_F64): [ off | len | slot | applied | edgeAt | recvTime ]
 *          bytes: session (UTF-8, ≤ SESSION_MAX) then result (JSON, ≤ RESULT_MAX)
 */
import type { ItemOutcome, WsItem } from './messages.js';
import type { ExpressBoard } from '../domain/ingest/core.js';
import { sessionId } from '../domain/ingest/item.js';

export const EXPRESS_FREE = 0;
/** on the board: the first worker to compare-and-swap it to TAKEN owns the work */
export const EXPRESS_POSTED = 1;
export const EXPRESS_TAKEN = 2;
/** processed by a taker; its result is in the entry */
export const EXPRESS_DONE = 3;
/** a taker found something other than a batch (or an already committed item): the owner does it */
export const EXPRESS_DECLINED = 4;
/** the taker died mid-item (main marks it): the owner goes by the item slot, as after any crash */
export const EXPRESS_ORPHANED = 5;
/** the owner reached it first and did it in its own task */
export const EXPRESS_OWNED = 6;

const HEADER_BYTES = 16;
const H_POSTED = 0;
const E_STATE = 0;
const E_TAKER = 1;
const E_SESSION_LEN = 2;
const E_RESULT_LEN = 3;
const META_F64 = 16; // byte offset of the Float64 fields within an entry
const F_OFF = 0;
const F_LEN = 1;
const F_SLOT = 2;
const F_APPLIED = 3;
const F_EDGE = 4;
const F_RECV = 5;
const SESSION_AT = META_F64 + 6 * 8;
/** hello caps a session id at 128 characters: 512 bytes of UTF-8 at most */
const SESSION_MAX = 512;
const RESULT_AT = SESSION_AT + SESSION_MAX;
/** an ack with max_errors_per_ack errors fits; a longer one keeps its counts and sheds error details */
export const RESULT_MAX = 16 * 1024;
const ENTRY_BYTES = RESULT_AT + RESULT_MAX;

/** how long an owner waits for a taker between looks (it is woken by notify long before) */
const OWNER_WAIT_MS = 50;

export function allocateExpress(entries: number): SharedArrayBuffer {
  if (!Number.isInteger(entries) || entries < 1) throw new RangeError('express board needs at least one entry');
  return new SharedArrayBuffer(HEADER_BYTES + entries * ENTRY_BYTES);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What both sides read and write. */
class Board {
  readonly header: Int32Array;
  readonly entries: number;
  // views made once: a worker looks at the board between every two items while something is posted
  private readonly wordViews: Int32Array[] = [];
  private readonly fieldViews: Float64Array[] = [];
  constructor(readonly buffer: SharedArrayBuffer) {
    this.header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.entries = Math.floor((buffer.byteLength - HEADER_BYTES) / ENTRY_BYTES);
    for (let e = 0; e < this.entries; e++) {
      this.wordViews.push(new Int32Array(buffer, HEADER_BYTES + e * ENTRY_BYTES, 4));
      this.fieldViews.push(new Float64Array(buffer, HEADER_BYTES + e * ENTRY_BYTES + META_F64, 6));
    }
  }
  words(e: number): Int32Array {
    return this.wordViews[e]!;
  }
  fields(e: number): Float64Array {
    return this.fieldViews[e]!;
  }
  bytes(e: number, at: number, len: number): Uint8Array {
    return new Uint8Array(this.buffer, HEADER_BYTES + e * ENTRY_BYTES + at, len);
  }
  /** POSTED → `to`, keeping the header's posted count honest; false when someone else moved it first */
  claim(w: Int32Array, to: number): boolean {
    if (Atomics.compareExchange(w, E_STATE, EXPRESS_POSTED, to) !== EXPRESS_POSTED) return false;
    Atomics.sub(this.header, H_POSTED, 1);
    return true;
  }
  settle(w: Int32Array, state: number): void {
    Atomics.store(w, E_STATE, state);
    Atomics.notify(w, E_STATE);
  }
}

export interface ExpressStats {
  posted: number;
  /** taken by a worker between the items of another task: the ones the board sped up */
  taken_early: number;
  declined: number;
  orphaned: number;
  /** no free entry: the frame went the normal way only */
  board_full: number;
}

/** Main's side: posts, retracts and frees entries; marks the ones whose taker died. */
export class ExpressPoster {
  private readonly board: Board;
  private readonly free: number[] = [];
  /** entries main is done with but a taker still holds: freed once it lets go */
  private readonly retiring = new Set<number>();
  readonly stats: ExpressStats = { posted: 0, taken_early: 0, declined: 0, orphaned: 0, board_full: 0 };

  constructor(readonly buffer: SharedArrayBuffer) {
    this.board = new Board(buffer);
    for (let e = this.board.entries - 1; e >= 0; e--) this.free.push(e);
  }

  /** Posts a session-bound frame; undefined when the board is full or the session id does not fit. */
  post(item: WsItem, recvTime: number): number | undefined {
    if (item.session === null) return undefined;
    this.reclaim();
    const session = encoder.encode(item.session);
    if (session.byteLength > SESSION_MAX) return undefined;
    const e = this.free.pop();
    if (e === undefined) {
      this.stats.board_full++;
      return undefined;
    }
    const w = this.board.words(e);
    const f = this.board.fields(e);
    f[F_OFF] = item.off;
    f[F_LEN] = item.len;
    f[F_SLOT] = item.slot;
    f[F_APPLIED] = item.applied;
    f[F_EDGE] = item.edgeAt ?? 0;
    f[F_RECV] = recvTime;
    this.board.bytes(e, SESSION_AT, SESSION_MAX).set(session);
    Atomics.store(w, E_SESSION_LEN, session.byteLength);
    Atomics.store(w, E_RESULT_LEN, 0);
    Atomics.store(w, E_TAKER, 0);
    // the header count goes up before the entry can be seen, so it never reads negative
    Atomics.add(this.board.header, H_POSTED, 1);
    Atomics.store(w, E_STATE, EXPRESS_POSTED);
    this.stats.posted++;
    return e;
  }

  /** The owner's answer reached main: the entry's work is over. Counts how it went, frees it. */
  release(e: number): void {
    const w = this.board.words(e);
    // never taken (the item was answered without running, e.g. poisoned): take it off the board
    this.board.claim(w, EXPRESS_FREE);
    const state = Atomics.load(w, E_STATE);
    if (state === EXPRESS_DONE) this.stats.taken_early++;
    else if (state === EXPRESS_DECLINED) this.stats.declined++;
    if (state === EXPRESS_TAKEN) {
      this.retiring.add(e);
      return;
    }
    Atomics.store(w, E_STATE, EXPRESS_FREE);
    this.free.push(e);
  }

  /** After a worker died: entries it held are orphaned, so their owners stop waiting for it. */
  orphanDeadTakers(live: ReadonlySet<number>): number {
    let n = 0;
    for (let e = 0; e < this.board.entries; e++) {
      const w = this.board.words(e);
      if (Atomics.load(w, E_STATE) !== EXPRESS_TAKEN) continue;
      const taker = Atomics.load(w, E_TAKER);
      if (taker === 0 || live.has(taker)) continue;
      if (Atomics.compareExchange(w, E_STATE, EXPRESS_TAKEN, EXPRESS_ORPHANED) === EXPRESS_TAKEN) {
        Atomics.notify(w, E_STATE);
        this.stats.orphaned++;
        n++;
      }
    }
    return n;
  }

  /** the entry's state word (EXPRESS_*): health and tests */
  stateOf(e: number): number {
    return Atomics.load(this.board.words(e), E_STATE);
  }

  get posted(): number {
    return Atomics.load(this.board.header, H_POSTED);
  }

  get freeEntries(): number {
    return this.free.length;
  }

  private reclaim(): void {
    for (const e of this.retiring) {
      const w = this.board.words(e);
      if (Atomics.load(w, E_STATE) === EXPRESS_TAKEN) continue;
      this.retiring.delete(e);
      Atomics.store(w, E_STATE, EXPRESS_FREE);
      this.free.push(e);
    }
  }
}

/** What a taker does with a posted frame: a result, or undefined to decline it to its owner. */
export type TakeFn = (item: WsItem, recvTime: number) => ItemOutcome | undefined;

/** A worker's side: takes posted frames between items, and settles the ones its own tasks name. */
export class ExpressTaker implements ExpressBoard {
  private readonly board: Board;
  constructor(
    buffer: SharedArrayBuffer,
    private readonly threadId: number,
  ) {
    this.board = new Board(buffer);
  }

  /** Between two items: take whatever is posted. Costs one atomic load when the board is empty. */
  poll(take: TakeFn): number {
    if (Atomics.load(this.board.header, H_POSTED) <= 0) return 0;
    let n = 0;
    for (let e = 0; e < this.board.entries; e++) {
      const w = this.board.words(e);
      if (Atomics.load(w, E_STATE) !== EXPRESS_POSTED || !this.board.claim(w, EXPRESS_TAKEN)) continue;
      Atomics.store(w, E_TAKER, this.threadId);
      const f = this.board.fields(e);
      const item = this.itemOf(e, w, f);
      let r: ItemOutcome | undefined;
      try {
        r = take(item, f[F_RECV]!);
      } catch {
        // the owner runs it again in its own task, where a failure is retried and counted as usual
        r = undefined;
      }
      if (r === undefined) {
        this.board.settle(w, EXPRESS_DECLINED);
        continue;
      }
      Atomics.store(w, E_RESULT_LEN, writeResult(this.board.bytes(e, RESULT_AT, RESULT_MAX), r));
      this.board.settle(w, EXPRESS_DONE);
      n++;
    }
    return n;
  }

  /**
   * The owner reached item `e` in its own task. `run` processes it the normal way: when nobody took
   * it, when its taker declined it, or when its taker died (the item slot then says whether that
   * attempt committed, as after any crash). Otherwise the taker's result is the answer.
   */
  own(e: number, run: () => ItemOutcome): ItemOutcome {
    const w = this.board.words(e);
    if (this.board.claim(w, EXPRESS_TAKEN)) {
      Atomics.store(w, E_TAKER, this.threadId);
      try {
        return run();
      } finally {
        this.board.settle(w, EXPRESS_OWNED);
      }
    }
    for (;;) {
      const state = Atomics.load(w, E_STATE);
      if (state === EXPRESS_DONE) return readResult(this.board.bytes(e, RESULT_AT, Atomics.load(w, E_RESULT_LEN)));
      if (state === EXPRESS_DECLINED || state === EXPRESS_ORPHANED) return run();
      if (state === EXPRESS_TAKEN) Atomics.wait(w, E_STATE, EXPRESS_TAKEN, OWNER_WAIT_MS);
      // FREE or POSTED cannot be seen here: main frees an entry only after its owner answered, and
      // a posted entry's only way on is a claim. Answer the normal way rather than wait on a bug.
      else return run();
    }
  }

  private itemOf(e: number, w: Int32Array, f: Float64Array): WsItem {
    // main posted it from a SessionId; this is its copy read back
    const session = sessionId(decoder.decode(this.board.bytes(e, SESSION_AT, Atomics.load(w, E_SESSION_LEN)).slice()));
    return { src: 'ws', off: f[F_OFF]!, len: f[F_LEN]!, slot: f[F_SLOT]!, shed: false, session, applied: f[F_APPLIED]!, edgeAt: f[F_EDGE]! };
  }
}

/** JSON of the result; an ack too long for the entry keeps its counts and sheds error details. */
function writeResult(into: Uint8Array, r: ItemOutcome): number {
  let res = r;
  for (;;) {
    const bytes = encoder.encode(JSON.stringify(res));
    if (bytes.byteLength <= into.byteLength) {
      into.set(bytes);
      return bytes.byteLength;
    }
    if ((res.kind !== 'applied' && res.kind !== 'stored') || !res.errors?.length) throw new Error('express result does not fit its entry');
    const errors = res.errors.slice(0, Math.floor(res.errors.length / 2));
    res = { ...res, errors };
    if (errors.length === 0) delete res.errors;
  }
}

function readResult(bytes: Uint8Array): ItemOutcome {
  return JSON.parse(decoder.decode(bytes.slice())) as ItemOutcome;
}
