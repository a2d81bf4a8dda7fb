/** Issue 8: one call may read 20 000 records, but never in one synchronous stretch; the fold map bound stops it cleanly. */
import { describe, expect, it } from 'vitest';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';
import { Folder } from '../../../src/query/fold.js';
import { ScanBudget, scanSliced, SLICE_MS } from '../../../src/query/sliced-scan.js';

const N = 20_000;

function store(n: number, message: (i: number) => string) {
  const buffers = allocateStore([16 * 1024 * 1024, 4096, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  for (let i = 0; i < n; i += 1000) {
    const records = Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ kind: 0, clientTime: i + j, tab: 1, payload: Buffer.from(JSON.stringify({ level: 'error', type: 'console', message: message(i + j) })) }));
    writer.commit({ recvTime: 1, records, received: [records.length], rejected: [] });
  }
  return new StoreReader(buffers);
}

describe('scanSliced', () => {
  it('reads everything up to its bound while the event loop keeps turning between slices', async () => {
    const reader = store(N, (i) => `order ${i} failed`);
    const folder = new Folder(true);
    let ticks = 0;
    let longest = 0;
    let last = performance.now();
    const beat = (): void => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      ticks++;
      if (!done) setImmediate(beat);
    };
    let done = false;
    setImmediate(beat);
    // no wall-clock cut here: on a loaded machine 250 ms may pass, and that path is tested below
    const r = await scanSliced(reader, { kind: 0, from: 0, limit: 0, maxScan: N, sink: (h) => folder.add(h) }, new ScanBudget(60_000));
    done = true;
    expect(r.atEnd).toBe(true);
    expect(r.next).toBe(N);
    expect(folder.records).toBe(N);
    expect(folder.groups()[0]!.count).toBe(N);
    // decoding 20 000 records takes well over one slice: other work ran in between
    expect(ticks).toBeGreaterThan(2);
    process.stderr.write(`sliced scan of ${N}: ${ticks} event-loop turns, longest stretch ${longest.toFixed(1)} ms (slice ${SLICE_MS} ms)\n`);
  });

  it('past its wall-clock deadline it stops between slices and says where to continue', async () => {
    const reader = store(N, (i) => `order ${i} failed`);
    for (const budget of [new ScanBudget(0)]) {
      const folder = new Folder(true);
      const r = await scanSliced(reader, { kind: 0, from: 0, limit: 0, maxScan: N, sink: (h) => folder.add(h) }, budget);
      expect(r.atEnd).toBe(false);
      expect(r.next).toBe(folder.records);
      expect(r.next).toBeGreaterThan(0);
      expect(r.next).toBeLessThan(N);
    }
  });

  it('stops at the first record the fold map refuses; the cursor resumes there', async () => {
    const reader = store(50, (i) => `module ${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))} failed`);
    const folder = new Folder(true, 10);
    const r = await scanSliced(reader, { kind: 0, from: 0, limit: 0, maxScan: N, sink: (h) => folder.add(h) });
    expect(r.stopped).toBe(true);
    expect(r.next).toBe(10);
    expect(r.atEnd).toBe(false);
    const rest = new Folder(true);
    const r2 = await scanSliced(reader, { kind: 0, from: r.next, to: 30, limit: 0, maxScan: N, sink: (h) => rest.add(h) });
    expect(rest.records).toBe(20);
    expect(r2.next).toBe(30);
    expect(r2.atEnd).toBe(true);
  });
});
