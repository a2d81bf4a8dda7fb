import { describe, expect, it } from 'vitest';
import { BoundedEventStore } from '../../../src/mcp/http/event-store.js';

const msg = (i: number, pad = 0) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { i, pad: 'x'.repeat(pad) } });

async function replay(s: BoundedEventStore, last: string): Promise<{ stream: string; ids: string[] }> {
  const ids: string[] = [];
  const stream = await s.replayEventsAfter(last, { send: async (id) => void ids.push(id) });
  return { stream, ids };
}

describe('BoundedEventStore', () => {
  it('replays one stream after an id, never another stream nor a priming event', async () => {
    const s = new BoundedEventStore({ maxEvents: 10, maxBytes: 1 << 20 });
    await s.storeEvent('a', msg(1));
    await s.storeEvent('b', msg(2));
    await s.storeEvent('a', {} as never);
    await s.storeEvent('a', msg(3));
    expect(await s.getStreamIdForEventId('a:1')).toBe('a');
    expect(await s.getStreamIdForEventId('zz:1')).toBeUndefined();
    expect(await s.getStreamIdForEventId('garbage')).toBeUndefined();
    expect(await replay(s, 'a:1')).toEqual({ stream: 'a', ids: ['a:3'] });
    expect(s.missed).toBe(0);
  });

  it('stays within its count and byte bounds, and counts what a late resume can no longer get', async () => {
    const s = new BoundedEventStore({ maxEvents: 4, maxBytes: 1 << 20 });
    for (let i = 1; i <= 10; i++) await s.storeEvent('g', msg(i));
    expect(s.size).toBe(4);
    expect(s.evicted).toBe(6);
    expect((await replay(s, 'g:2')).ids).toEqual(['g:7', 'g:8', 'g:9', 'g:10']);
    expect(s.missed).toBe(4);
    const bytes = new BoundedEventStore({ maxEvents: 100, maxBytes: 3000 });
    for (let i = 1; i <= 10; i++) await bytes.storeEvent('g', msg(i, 1000));
    expect(bytes.size).toBeLessThanOrEqual(3);
    await expect(bytes.replayEventsAfter('nope:1', { send: async () => undefined })).rejects.toThrow();
  });
});
