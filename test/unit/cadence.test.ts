/**
 * The Cadence: a periodic job that stops while it has nothing to watch and is woken by whoever
 * makes work. Fake timers: the contract is about which runs happen, not how long they take.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Cadence } from '../../src/cadence.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('Cadence', () => {
  it('runs nothing until woken, then at the delay each run returns, and stops on null', () => {
    const delays: Array<number | null> = [10, 40, null];
    const ran: number[] = [];
    const c = new Cadence(() => {
      ran.push(Date.now());
      return delays.shift() ?? null;
    }, 10);
    vi.advanceTimersByTime(1000);
    expect(ran).toHaveLength(0);
    expect(c.running).toBe(false);
    const t0 = Date.now();
    c.wake();
    expect(c.delayMs).toBe(10);
    vi.advanceTimersByTime(1000);
    expect(ran.map((t) => t - t0)).toEqual([10, 20, 60]);
    expect(c.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a wake while at the fast pace changes nothing; a wake while slowed comes back to the fast pace at once', () => {
    let runs = 0;
    const c = new Cadence(() => {
      runs++;
      return 1000;
    }, 10);
    c.wake();
    for (let i = 0; i < 3; i++) {
      vi.advanceTimersByTime(3);
      c.wake(); // per task: must not push the run further out
    }
    expect(runs).toBe(0);
    vi.advanceTimersByTime(1);
    expect(runs).toBe(1);
    expect(c.delayMs).toBe(1000);
    c.wake();
    expect(c.delayMs).toBe(10);
    vi.advanceTimersByTime(10);
    expect(runs).toBe(2);
  });

  it('a wake during the run stands over the delay the run returns', () => {
    let c: Cadence | undefined;
    let runs = 0;
    c = new Cadence(() => {
      runs++;
      if (runs === 1) c!.wake();
      return null;
    }, 10);
    c.wake();
    vi.advanceTimersByTime(10);
    expect(c.delayMs).toBe(10);
    vi.advanceTimersByTime(10);
    expect(runs).toBe(2);
    expect(c.running).toBe(false);
  });

  it('a job that throws keeps the fast pace (the daemon logs the error and runs on)', () => {
    let runs = 0;
    const c = new Cadence(() => {
      runs++;
      if (runs === 1) throw new Error('boom');
      return null;
    }, 10);
    c.wake();
    expect(() => vi.advanceTimersByTime(10)).toThrow('boom');
    expect(c.delayMs).toBe(10);
    vi.advanceTimersByTime(10);
    expect(runs).toBe(2);
    expect(c.running).toBe(false);
  });

  it('close stops it for good, twice as well as once', () => {
    let runs = 0;
    const c = new Cadence(() => {
      runs++;
      return 10;
    }, 10);
    c.wake();
    vi.advanceTimersByTime(25);
    c.close();
    c.close();
    c.wake();
    vi.advanceTimersByTime(100);
    expect(runs).toBe(2);
    expect(c.running).toBe(false);
  });
});
