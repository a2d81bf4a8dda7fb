import { describe, expect, it } from 'vitest';
import { InputArena } from '../../src/pool/input-arena.js';

function bytes(n: number, fill: number): Uint8Array {
  return new Uint8Array(n).fill(fill);
}

describe('InputArena', () => {
  it('copies in, wraps so a slice is contiguous, and reclaims in FIFO order when released out of order', () => {
    const a = new InputArena(100);
    const s1 = a.copyIn(bytes(40, 1))!;
    const s2 = a.copyIn(bytes(40, 2))!;
    expect(a.copyIn(bytes(30, 3))).toBeUndefined(); // only 20 left
    a.release(s2); // out of order: tail cannot move past s1 yet
    expect(a.copyIn(bytes(30, 3))).toBeUndefined();
    a.release(s1);
    const s3 = a.copyIn(bytes(70, 3))!;
    expect(s3.off).toBe(0); // wrapped
    expect([...a.bytes.subarray(s3.off, s3.off + s3.len)].every((b) => b === 3)).toBe(true);
    a.release(s3);
    expect(a.used).toBe(0);
  });

  it('starts again at offset 0 once empty, so light traffic keeps touching the same first pages', () => {
    const a = new InputArena(4096);
    const offs = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const s = a.copyIn(bytes(50, i & 0xff))!;
      offs.add(s.off);
      a.release(s);
    }
    expect([...offs]).toEqual([0]);
    // with a slice still live it bumps on as before
    const held = a.copyIn(bytes(50, 1))!;
    const next = a.copyIn(bytes(50, 2))!;
    expect(next.off).toBe(held.off + 50);
  });

  it('never hands out overlapping live slices over thousands of seeded allocations', () => {
    const a = new InputArena(4096);
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const live: Array<{ off: number; len: number; fill: number }> = [];
    for (let i = 0; i < 20_000; i++) {
      if (live.length && rnd() < 0.45) {
        const idx = Math.floor(rnd() * live.length);
        const s = live.splice(idx, 1)[0]!;
        expect([...a.bytes.subarray(s.off, s.off + s.len)].every((b) => b === s.fill)).toBe(true);
        a.release(s);
      } else {
        const len = 1 + Math.floor(rnd() * 600);
        const fill = i % 251;
        const s = a.copyIn(bytes(len, fill));
        if (s) live.push({ ...s, fill });
      }
    }
    for (const s of live) expect([...a.bytes.subarray(s.off, s.off + s.len)].every((b) => b === s.fill)).toBe(true);
  });

  it('refuses a slice larger than the arena', () => {
    expect(new InputArena(10).copyIn(bytes(11, 0))).toBeUndefined();
  });
});

describe('InputArena under a stream that never empties it', () => {
  it('goes back to 0 once the head and the oldest live slice are past half: the pages touched stay near half plus the backlog', () => {
    const a = new InputArena(64 * 1024);
    const live: Array<{ off: number; len: number; fill: number }> = [];
    let highest = 0;
    // a backlog of ~8 slices of 500 bytes, never empty, for 100× the arena's size
    for (let i = 0; i < 13_000; i++) {
      const fill = i % 251;
      const s = a.copyIn(bytes(500, fill))!;
      expect(s).toBeDefined();
      highest = Math.max(highest, s.off + s.len);
      live.push({ ...s, fill });
      if (live.length > 8) {
        const old = live.shift()!;
        expect([...a.bytes.subarray(old.off, old.off + old.len)].every((b) => b === old.fill)).toBe(true);
        a.release(old);
      }
      // used is what is held, never the skipped end
      expect(a.used).toBeLessThanOrEqual(live.length * 500 + 500);
    }
    expect(highest).toBeLessThan(64 * 1024 / 2 + 10 * 500);
    expect(a.unavailable).toBeGreaterThanOrEqual(a.used);
  });

  it('after an early wrap, at least half the arena takes new slices while the older ones drain, and admission sees the skipped end', () => {
    const a = new InputArena(4000);
    const live: ArenaSliceLike[] = [];
    // move the live region past the half mark, then let the backlog grow without releasing
    for (let i = 0; i < 21; i++) live.push(a.copyIn(bytes(100, 1))!);
    for (const s of live.splice(0, 20)) a.release(s);
    const wrapped = a.copyIn(bytes(100, 2))!;
    expect(wrapped.off).toBe(0);
    expect(a.used).toBe(200);
    // the end past 2100 is skipped until the slice at 2000 is released: not held, but not available
    expect(a.unavailable).toBe(2100);
    let taken = 1;
    while (a.copyIn(bytes(100, 2))) taken++;
    expect(taken).toBeGreaterThanOrEqual(20);
    expect(taken).toBe(20);
    // the old slice drains, then the first at the front: the skipped end is behind the tail
    a.release(live[0]!);
    expect(a.used).toBe(taken * 100);
    a.release(wrapped);
    expect(a.used).toBe((taken - 1) * 100);
    expect(a.unavailable).toBe((taken - 1) * 100);
  });

  it('renews its buffer only when nothing is allocated or reserved, and keeps working on the new one', () => {
    const a = new InputArena(4096);
    const first = a.buffer;
    const s1 = a.copyIn(bytes(100, 7))!;
    const r = a.reserve(50)!; // an HTTP body being read into the arena
    expect(a.empty).toBe(false);
    expect(a.renew()).toBe(false);
    a.release(s1);
    expect(a.renew()).toBe(false); // the reservation still names the old buffer
    expect(a.buffer).toBe(first);
    a.release(r);
    expect(a.empty).toBe(true);
    expect(a.renew()).toBe(true);
    expect(a.buffer).not.toBe(first);
    expect(a.generation).toBe(1);
    expect(a.bytes.buffer).toBe(a.buffer);
    // untouched: every byte zero, and a copy lands in the new buffer
    expect(a.bytes.every((b) => b === 0)).toBe(true);
    const s2 = a.copyIn(bytes(10, 9))!;
    expect(s2.off).toBe(0);
    expect(new Uint8Array(a.buffer, s2.off, 10).every((b) => b === 9)).toBe(true);
    expect(new Uint8Array(first, 0, 10).every((b) => b === 7)).toBe(true);
    a.release(s2);
    expect(a.used).toBe(0);
  });
});

type ArenaSliceLike = { off: number; len: number };
