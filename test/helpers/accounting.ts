import { expect } from 'vitest';
import { KINDS, kindId, type Kind } from '../../src/domain/kinds.js';
import type { App } from '../../src/app.js';
import { readStoredRecord } from '../../src/domain/wire/stored-record.js';

/** received = stored + rejected + dropped(reason), for every kind, once the pool is idle. */
export async function expectBalanced(server: App): Promise<void> {
  await server.pool.dispatcher.whenIdle();
  const counters = server.reader.counters();
  KINDS.forEach((k, id) => {
    const c = counters[id]!;
    const dropped = Object.values(c.dropped as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(c.received, `${k}: received = stored + rejected + dropped`).toBe(c.stored + c.rejected + dropped);
    const stats = server.reader.ringStats(id);
    expect(stats.records, `${k}: readable = stored - evicted - cleared`).toBe(c.stored - c.evicted - c.cleared);
  });
}

export function readAll(server: App, kind: Kind): Array<Record<string, unknown> & { _seq: number; _tab: number }> {
  const out: Array<Record<string, unknown> & { _seq: number; _tab: number }> = [];
  let from = 0;
  for (;;) {
    const r = server.reader.read(kindId(kind), from, 1000);
    for (const rec of r.records) {
      out.push({ ...(readStoredRecord(rec.payload) as Record<string, unknown>), _seq: rec.seq, _tab: rec.tab });
    }
    if (r.records.length === 0 || r.next === from) break;
    from = r.next;
  }
  return out;
}
