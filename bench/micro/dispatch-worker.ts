/**
 * Piscina worker for dispatch.bench.ts. The per-frame work is deliberately trivial (a checksum
 * of the frame's 32-bit words) so that what is measured is the cost of getting frames to a
 * worker, not of processing them.
 *
 * Input ring layout (mode c), one per worker:
 *
 *   Int32 header [HEAD, TAIL, STOP, SUM, ...pad to 64 B] | Int32 len[SLOTS] | slots: SLOTS × SLOT_BYTES
 *   main writes slot TAIL % SLOTS, then Atomics.store(TAIL) + notify; the worker reads up to TAIL,
 *   then Atomics.store(HEAD) + notify. Main never blocks (Atomics.waitAsync); the worker does.
 */
import { workerData } from 'piscina';

export const HEAD = 0;
export const TAIL = 1;
export const STOP = 2;
export const SUM = 3;
export const HEADER_BYTES = 64;

export function ringBytes(slots: number, slotBytes: number): number {
  return HEADER_BYTES + slots * 4 + slots * slotBytes;
}

export function checksum(words: Int32Array): number {
  let h = 0;
  for (let i = 0; i < words.length; i++) h = (h + words[i]!) | 0;
  return h;
}

export type DispatchTask =
  | { kind: 'frame'; buf: ArrayBuffer }
  | { kind: 'items'; offs: Int32Array }
  | { kind: 'drain'; ring: SharedArrayBuffer; slots: number; slotBytes: number };

const arena = (workerData as { arena?: SharedArrayBuffer } | undefined)?.arena;

export default function run(task: DispatchTask): number {
  switch (task.kind) {
    case 'frame':
      return checksum(new Int32Array(task.buf));
    case 'items': {
      if (!arena) throw new Error('items task without an arena in workerData');
      let h = 0;
      for (let i = 0; i < task.offs.length; i += 2) h = (h + checksum(new Int32Array(arena, task.offs[i]!, task.offs[i + 1]! >> 2))) | 0;
      return h;
    }
    case 'drain':
      return drain(task.ring, task.slots, task.slotBytes);
    default:
      throw new Error(`unknown dispatch task ${(task as { kind: unknown }).kind}`);
  }
}

/** The long-lived loop: drain the ring until STOP; returns frames processed. */
function drain(ring: SharedArrayBuffer, slots: number, slotBytes: number): number {
  const hdr = new Int32Array(ring, 0, HEADER_BYTES / 4);
  const lens = new Int32Array(ring, HEADER_BYTES, slots);
  const base = HEADER_BYTES + slots * 4;
  let head = Atomics.load(hdr, HEAD);
  let n = 0;
  for (;;) {
    const tail = Atomics.load(hdr, TAIL);
    if (tail === head) {
      if (Atomics.load(hdr, STOP) === 1) return n;
      Atomics.wait(hdr, TAIL, tail, 50);
      continue;
    }
    let h = 0;
    for (; head !== tail; head++) {
      const s = head % slots;
      h = (h + checksum(new Int32Array(ring, base + s * slotBytes, lens[s]! >> 2))) | 0;
      n++;
    }
    Atomics.add(hdr, SUM, h);
    Atomics.store(hdr, HEAD, head);
    Atomics.notify(hdr, HEAD);
  }
}
