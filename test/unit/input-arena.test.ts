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
