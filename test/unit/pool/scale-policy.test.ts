/**
 * When the elastic ingest pool grows and shrinks: the rule alone, fed samples by hand (the pool
 * that carries it out is tested with real workers in test/integration/elastic-pool.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ScalePolicy, type ScaleSample } from '../../../src/pool/scale-policy.js';

const opts = { min: 1, max: 4, growAfterMs: 500, shrinkAfterMs: 2000 };
const queued = (ms = 100): ScaleSample => ({ ms, backlogMs: ms, busyMs: ms });
const idle = (ms = 100): ScaleSample => ({ ms, backlogMs: 0, busyMs: 0 });

function feed(p: ScalePolicy, samples: ScaleSample[], workers: number, starting = false): Array<string | undefined> {
  return samples.map((s) => p.decide(s, workers, starting));
}

describe('ScalePolicy', () => {
  it('grows once work has waited in every sample for grow_after_ms, not before', () => {
    const p = new ScalePolicy(opts);
    const out = feed(p, Array.from({ length: 5 }, () => queued()), 1);
    expect(out).toEqual([undefined, undefined, undefined, undefined, 'grow']);
  });

  it('one spike shorter than the window never grows, however deep', () => {
    const p = new ScalePolicy(opts);
    const spiky = [queued(), queued(), queued(), queued(), idle(), queued(), queued(), queued(), queued(), idle()];
    expect(feed(p, spiky, 1).filter(Boolean)).toEqual([]);
  });

  it('a sample counts as queued from half of it waiting', () => {
    const p = new ScalePolicy(opts);
    const half = (): ScaleSample => ({ ms: 100, backlogMs: 50, busyMs: 100 });
    const less = (): ScaleSample => ({ ms: 100, backlogMs: 49, busyMs: 100 });
    expect(feed(p, Array.from({ length: 5 }, half), 1).at(-1)).toBe('grow');
    const q = new ScalePolicy(opts);
    expect(feed(q, Array.from({ length: 10 }, less), 1).filter(Boolean)).toEqual([]);
  });

  it('after a grow the streak starts again, and nothing grows while a worker is starting or at max', () => {
    const p = new ScalePolicy(opts);
    expect(feed(p, Array.from({ length: 5 }, () => queued()), 1).at(-1)).toBe('grow');
    expect(feed(p, Array.from({ length: 8 }, () => queued()), 2, true).filter(Boolean)).toEqual([]);
    // the wait while it started does not count: a whole new window with it in is needed
    expect(feed(p, Array.from({ length: 4 }, () => queued()), 2).filter(Boolean)).toEqual([]);
    expect(p.decide(queued(), 2, false)).toBe('grow');
    expect(feed(new ScalePolicy(opts), Array.from({ length: 20 }, () => queued()), 4).filter(Boolean)).toEqual([]);
  });

  it('shrinks after shrink_after_ms of idle, one step per sample down to min, never below', () => {
    const p = new ScalePolicy(opts);
    expect(feed(p, Array.from({ length: 19 }, () => idle()), 4).filter(Boolean)).toEqual([]);
    expect(p.decide(idle(), 4, false)).toBe('shrink');
    expect(p.decide(idle(), 3, false)).toBe('shrink');
    expect(p.decide(idle(), 2, false)).toBe('shrink');
    expect(p.decide(idle(), 1, false)).toBeUndefined();
  });

  it('does not shrink while any work waited in the window, or while the busy time needs the workers', () => {
    const p = new ScalePolicy(opts);
    const w = [...Array.from({ length: 19 }, () => idle()), { ms: 100, backlogMs: 1, busyMs: 0 }];
    expect(feed(p, w, 2).filter(Boolean)).toEqual([]);
    // 3 workers, busy 1.2 worker-equivalents: fits in 2 at half load? 1.2 > 1.0 → keep 3
    const q = new ScalePolicy(opts);
    expect(feed(q, Array.from({ length: 40 }, () => ({ ms: 100, backlogMs: 0, busyMs: 120 })), 3).filter(Boolean)).toEqual([]);
    // 0.9 worker-equivalents fit in 2 at half load: one goes
    const r = new ScalePolicy(opts);
    expect(feed(r, Array.from({ length: 20 }, () => ({ ms: 100, backlogMs: 0, busyMs: 90 })), 3).at(-1)).toBe('shrink');
  });

  it('does not shrink within shrink_after_ms of a grow', () => {
    const p = new ScalePolicy(opts);
    expect(feed(p, Array.from({ length: 5 }, () => queued()), 1).at(-1)).toBe('grow');
    expect(feed(p, Array.from({ length: 19 }, () => idle()), 2).filter(Boolean)).toEqual([]);
    expect(p.decide(idle(), 2, false)).toBe('shrink');
  });

  it('a sample in which the edge refused work grows at once: one worker a sample, none while one starts, none at max', () => {
    const p = new ScalePolicy(opts);
    const refused = (n = 3): ScaleSample => ({ ms: 100, backlogMs: 10, busyMs: 100, shed: n });
    // a spike the streak alone would never count, with refusals in its first sample
    expect(p.decide(refused(), 1, false)).toBe('grow');
    expect(p.decide(refused(), 2, true)).toBeUndefined();
    expect(p.decide(refused(), 2, false)).toBe('grow');
    expect(p.decide(refused(), 4, false)).toBeUndefined();
    // no refusal, a short spike: the streak rule as before
    const q = new ScalePolicy(opts);
    expect(feed(q, [queued(), queued(), idle()], 1).filter(Boolean)).toEqual([]);
  });

  it('does not shrink while the window holds a refusal, even with no backlog measured', () => {
    // at max, so the refusal cannot grow the pool: what is left to see is whether it shrinks
    const p = new ScalePolicy(opts);
    const window = Array.from({ length: 20 }, (_, i): ScaleSample => (i === 12 ? { ...idle(), shed: 1 } : idle()));
    expect(feed(p, window, 4).filter(Boolean)).toEqual([]);
    // once the refusal has left the window, idle shrinks as before
    expect(feed(p, Array.from({ length: 13 }, () => idle()), 4)).toContain('shrink');
  });

  describe('promote: a SCHED_IDLE worker that does not keep up (pool.worker_policy)', () => {
    const lowered = { lowered: true, starved: false };
    const starved = { lowered: true, starved: true };
    const unknown = { lowered: true, starved: undefined };

    it('a worker starved in every sample for grow_after_ms is replaced, at max and with nothing waiting too', () => {
      const p = new ScalePolicy(opts);
      expect(Array.from({ length: 5 }, () => p.decide(idle(), 4, false, starved))).toEqual([undefined, undefined, undefined, undefined, 'promote']);
      const q = new ScalePolicy(opts);
      expect(Array.from({ length: 5 }, () => q.decide(queued(), 1, false, starved)).at(-1)).toBe('promote');
    });

    it('a few starved samples (a load\'s first) are not enough: one that was not breaks the streak', () => {
      const p = new ScalePolicy(opts);
      const out = [starved, starved, starved, starved, lowered, starved, starved, starved, starved, lowered].map((w) => p.decide(idle(), 1, false, w));
      expect(out.filter(Boolean)).toEqual([]);
    });

    it('work waiting behind a lowered worker that is not starved grows the pool as before, and never promotes', () => {
      const p = new ScalePolicy(opts);
      expect(Array.from({ length: 5 }, () => p.decide(queued(), 1, false, lowered))).toEqual([undefined, undefined, undefined, undefined, 'grow']);
      const atMax = new ScalePolicy({ ...opts, max: 1 });
      expect(Array.from({ length: 20 }, () => atMax.decide(queued(), 1, false, lowered)).filter(Boolean)).toEqual([]);
      expect(new ScalePolicy({ ...opts, max: 1 }).decide({ ...idle(), shed: 1 }, 1, false, lowered)).toBeUndefined();
    });

    it('where the kernel keeps no record of waits, sustained waiting or a refusal replaces it, before any grow', () => {
      const p = new ScalePolicy(opts);
      expect(Array.from({ length: 5 }, () => p.decide(queued(), 1, false, unknown))).toEqual([undefined, undefined, undefined, undefined, 'promote']);
      // the streak starts again: the replacement is measured before anything is added
      expect(Array.from({ length: 5 }, () => p.decide(queued(), 1, false))).toEqual([undefined, undefined, undefined, undefined, 'grow']);
      const atMax = new ScalePolicy({ ...opts, max: 1 });
      expect(Array.from({ length: 5 }, () => atMax.decide(queued(), 1, false, unknown)).at(-1)).toBe('promote');
      expect(new ScalePolicy(opts).decide({ ...idle(), shed: 1 }, 1, false, unknown)).toBe('promote');
    });

    it('none while a worker is starting (the streak starts again after), none without a lowered worker', () => {
      const p = new ScalePolicy(opts);
      expect(Array.from({ length: 5 }, () => p.decide(idle(), 1, true, starved)).filter(Boolean)).toEqual([]);
      expect(Array.from({ length: 4 }, () => p.decide(idle(), 1, false, starved)).filter(Boolean)).toEqual([]);
      expect(p.decide(idle(), 1, false, starved)).toBe('promote');
      expect(Array.from({ length: 10 }, () => new ScalePolicy(opts).decide(idle(), 1, false, { lowered: false, starved: true })).filter(Boolean)).toEqual([]);
    });
  });
});
