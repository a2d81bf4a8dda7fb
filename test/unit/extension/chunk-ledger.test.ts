/**
 * A content script resends a chunk whose reply it lost; the chunk is taken once whichever worker
 * the resend reaches (the capture e2e's service-worker kill stored one chunk twice: the dead
 * worker had sent it, the next one took the resend). An in-memory storage.session, shared by the
 * "workers" (ledgers) made on it in turn, with a `get` that can answer late.
 */
import { describe, expect, it } from 'vitest';
import { CHUNK_KEEP_MS, ChunkLedger, type SessionArea } from '../../../extension/src/sw/chunk-ledger.js';

function area(getDelayMs = 0): SessionArea & { items: Map<string, unknown>; fail: boolean } {
  const items = new Map<string, unknown>();
  const a = {
    items,
    fail: false,
    get: (keys: string | null) =>
      new Promise<Record<string, unknown>>((resolve, reject) =>
        setTimeout(() => {
          if (a.fail) return reject(new Error('quota'));
          resolve(Object.fromEntries([...items].filter(([k]) => keys === null || k === keys)));
        }, getDelayMs),
      ),
    set: async (o: Record<string, unknown>) => {
      if (a.fail) throw new Error('quota');
      for (const [k, v] of Object.entries(o)) items.set(k, v);
    },
    remove: async (keys: string[]) => {
      for (const k of keys) items.delete(k);
    },
  };
  return a;
}

describe('chunk ledger', () => {
  it('takes a chunk once in one worker, a resend crossing the first take included', async () => {
    const a = area(10);
    const w = new ChunkLedger(a);
    const [first, crossing] = await Promise.all([w.take('f:1'), w.take('f:1')]);
    expect([first, crossing]).toEqual([true, false]);
    expect(await w.take('f:1')).toBe(false);
    expect(await w.take('f:2')).toBe(true);
  });

  it('a resend that reaches the next worker is refused: the dead worker may have sent it already', async () => {
    const a = area();
    expect(await new ChunkLedger(a).take('f:7')).toBe(true);
    const next = new ChunkLedger(a);
    expect(await next.take('f:7')).toBe(false);
    expect(await next.take('f:8')).toBe(true);
  });

  it('forgets chunks no one resends any more: as it takes new ones, and at the next worker start', async () => {
    let now = 1_000_000;
    const a = area();
    const w = new ChunkLedger(a, () => now);
    await w.take('f:1');
    await w.take('f:2');
    now += CHUNK_KEEP_MS + 1;
    await w.take('f:3');
    await new Promise((r) => setTimeout(r, 0));
    expect([...a.items.keys()]).toEqual(['chunk:f:3']);
    // a worker that died with f:3 recorded: the next one clears it once it is old
    now += CHUNK_KEEP_MS + 1;
    new ChunkLedger(a, () => now);
    await new Promise((r) => setTimeout(r, 5));
    expect([...a.items.keys()]).toEqual([]);
  });

  it('delivers when storage refuses (a duplicate rather than a loss)', async () => {
    const a = area();
    a.fail = true;
    const w = new ChunkLedger(a);
    expect(await w.take('f:1')).toBe(true);
    expect(await w.take('f:1')).toBe(false);
  });
});
