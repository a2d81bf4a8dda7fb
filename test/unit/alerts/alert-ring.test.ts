/**
 * The alert ring between workers and main: whole records or nothing, a lapped reader told
 * exactly how many it missed, oversized records refused, and a real worker thread waking a
 * listening main thread through Atomics.notify / waitAsync.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { allocateAlertRing, AlertRingReader, AlertRingWriter } from '../../../src/shm/alert-ring.js';

describe('alert ring', () => {
  it('hands over what was published, in order, once', () => {
    const b = allocateAlertRing(8, 256);
    const w = new AlertRingWriter(b);
    const r = new AlertRingReader(b);
    expect(r.read()).toEqual({ records: [], missed: 0 });
    for (let i = 0; i < 5; i++) expect(w.publish({ i })).toBe(true);
    expect(r.read()).toEqual({ records: [0, 1, 2, 3, 4].map((i) => ({ i })), missed: 0 });
    expect(r.read().records).toEqual([]);
  });

  it('wraps around a tiny ring and counts exactly what a slow reader missed', () => {
    const b = allocateAlertRing(4, 128);
    const w = new AlertRingWriter(b);
    const r = new AlertRingReader(b);
    for (let i = 0; i < 11; i++) w.publish({ i });
    const got = r.read();
    expect(got.missed).toBe(7);
    expect(got.records).toEqual([7, 8, 9, 10].map((i) => ({ i })));
    w.publish({ i: 11 });
    expect(r.read()).toEqual({ records: [{ i: 11 }], missed: 0 });
  });

  it('refuses a record larger than a slot and keeps working', () => {
    const b = allocateAlertRing(4, 64);
    const w = new AlertRingWriter(b);
    const r = new AlertRingReader(b);
    expect(w.publish({ big: 'x'.repeat(100) })).toBe(false);
    expect(w.publish({ ok: 1 })).toBe(true);
    expect(r.read().records).toEqual([{ ok: 1 }]);
  });

  it('wakes a listening main thread when a worker thread publishes', async () => {
    const b = allocateAlertRing(64, 256);
    const r = new AlertRingReader(b);
    const got: unknown[] = [];
    const all = new Promise<void>((resolve) =>
      r.listen((batch) => {
        got.push(...batch.records);
        if (got.length >= 20) resolve();
      }),
    );
    const src = `
      const { workerData } = require('node:worker_threads');
      const words = new Int32Array(workerData.sab, 0, 4);
      const bytes = new Uint8Array(workerData.sab);
      const enc = new TextEncoder();
      for (let i = 0; i < 20; i++) {
        const data = enc.encode(JSON.stringify({ i }));
        const index = Atomics.add(words, 0, 1);
        const base = 16 + (index & (workerData.slots - 1)) * workerData.slotBytes;
        const head = new Int32Array(workerData.sab, base, 2);
        Atomics.store(head, 0, 0);
        bytes.set(data, base + 8);
        head[1] = data.length;
        Atomics.store(head, 0, index + 1);
        Atomics.add(words, 1, 1);
        Atomics.notify(words, 1);
      }`;
    // the worker speaks the ring's layout by hand: the layout is the contract, not the class
    const worker = new Worker(src, { eval: true, workerData: b, stdout: true, stderr: true });
    await all;
    await worker.terminate();
    r.close();
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => ({ i })));
  });
});
