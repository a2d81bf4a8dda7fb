/**
 * Item status slots: one small record per in-flight item, written by the worker inside its
 * commit (under the store lock, before committedSeq is published) and read by main only after
 * the task settled. A task retried after a worker crash skips items whose slot says committed,
 * so a batch is never stored twice.
 *
 *   slot i (Float64Array, 4 words):  [ state | accepted | rejected | seq ]
 *   state: 0 = not committed, 1 = applied (a batch), 2 = duplicate (a batch), 3 = stored (an HTTP body)
 *
 * The counts are the ones the first answer reported (after records too large for their ring were
 * moved from accepted to rejected), so a replay from the slot answers the same.
 */
import type { ItemSlots } from '../domain/ingest/core.js';
import type { CommittedOutcome } from '../domain/ingest/outcome.js';

export const SLOT_WORDS = 4;
export const SLOT_STATE = 0;
export const SLOT_ACCEPTED = 1;
export const SLOT_REJECTED = 2;
export const SLOT_SEQ = 3;

export const SLOT_EMPTY = 0;
export const SLOT_APPLIED = 1;
export const SLOT_DUPLICATE = 2;
export const SLOT_STORED = 3;

export function allocateSlots(count: number): SharedArrayBuffer {
  return new SharedArrayBuffer(count * SLOT_WORDS * Float64Array.BYTES_PER_ELEMENT);
}

export class SlotView implements ItemSlots {
  readonly words: Float64Array;
  readonly count: number;
  constructor(buf: SharedArrayBuffer) {
    this.words = new Float64Array(buf);
    this.count = this.words.length / SLOT_WORDS;
  }
  state(i: number): number {
    return this.words[i * SLOT_WORDS + SLOT_STATE]!;
  }
  read(i: number): { state: number; accepted: number; rejected: number; seq: number } {
    const b = i * SLOT_WORDS;
    const w = this.words;
    return { state: w[b + SLOT_STATE]!, accepted: w[b + SLOT_ACCEPTED]!, rejected: w[b + SLOT_REJECTED]!, seq: w[b + SLOT_SEQ]! };
  }
  write(i: number, state: number, accepted: number, rejected: number, seq: number): void {
    const b = i * SLOT_WORDS;
    const w = this.words;
    w[b + SLOT_ACCEPTED] = accepted;
    w[b + SLOT_REJECTED] = rejected;
    w[b + SLOT_SEQ] = seq;
    w[b + SLOT_STATE] = state;
  }
  /** The outcome a committed attempt recorded; the one builder of a replayed answer. */
  committed(i: number): CommittedOutcome | undefined {
    const st = this.read(i);
    switch (st.state) {
      case SLOT_APPLIED:
        return { kind: 'applied', seq: st.seq, accepted: st.accepted, rejected: st.rejected };
      case SLOT_DUPLICATE:
        return { kind: 'duplicate', seq: st.seq };
      case SLOT_STORED:
        return { kind: 'stored', accepted: st.accepted, rejected: st.rejected };
      default:
        return undefined;
    }
  }
  record(i: number, o: CommittedOutcome): void {
    switch (o.kind) {
      case 'applied':
        return this.write(i, SLOT_APPLIED, o.accepted, o.rejected, o.seq);
      case 'duplicate':
        return this.write(i, SLOT_DUPLICATE, 0, 0, o.seq);
      case 'stored':
        return this.write(i, SLOT_STORED, o.accepted, o.rejected, -1);
    }
  }
  reset(i: number): void {
    const b = i * SLOT_WORDS;
    this.words[b + SLOT_STATE] = SLOT_EMPTY;
    this.words[b + SLOT_SEQ] = -1;
  }
  /** the worker notes the batch seq as soon as it is decoded, so a poisoned frame can still be acked */
  noteSeq(i: number, seq: number): void {
    this.words[i * SLOT_WORDS + SLOT_SEQ] = seq;
  }
}

/** Main-side allocator of slot indexes (free list). Bounded: no free slot = admission refuses. */
export class SlotAllocator {
  private readonly free: number[] = [];
  constructor(private readonly view: SlotView) {
    for (let i = view.count - 1; i >= 0; i--) this.free.push(i);
  }
  alloc(): number | undefined {
    const i = this.free.pop();
    if (i !== undefined) this.view.reset(i);
    return i;
  }
  release(i: number): void {
    this.free.push(i);
  }
  get available(): number {
    return this.free.length;
  }
}
