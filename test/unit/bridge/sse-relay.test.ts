/** The bridge's two parsers: server-sent events (the daemon's streams) and the JSON-RPC envelope (the agent's lines). */
import { describe, expect, it } from 'vitest';
import { envelope } from '../../../src/bridge/relay.js';
import { type SseEvent, SseParser } from '../../../src/bridge/sse.js';

describe('SseParser', () => {
  const parse = (chunks: string[], max?: number): { events: SseEvent[]; p: SseParser } => {
    const events: SseEvent[] = [];
    const p = new SseParser((e) => events.push(e), max);
    for (const c of chunks) p.feed(c);
    return { events, p };
  };

  it('joins data lines, keeps ids, ignores comments, whatever the chunking and line endings', () => {
    const text = ': keep-alive\nid: 7\nevent: message\ndata: {"a":\ndata: 1}\n\r\ndata: two\r\n\r\nid: 9\rdata: three\r\r';
    const whole = parse([text]).events;
    const bytewise = parse([...text]).events;
    expect(whole).toEqual([
      { id: '7', event: 'message', data: '{"a":\n1}' },
      { id: undefined, event: 'message', data: 'two' },
      { id: '9', event: 'message', data: 'three' },
    ]);
    expect(bytewise).toEqual(whole);
    expect(parse([text]).p.lastId).toBe('9');
  });

  it('an event without data is not dispatched; a field without a colon is a name with an empty value', () => {
    expect(parse(['id: 1\n\ndata\n\n']).events).toEqual([{ id: undefined, event: 'message', data: '' }]);
  });

  it('an event over the bound is an error, not a buffer that grows', () => {
    const p = new SseParser(() => undefined, 1000);
    expect(() => p.feed(`data: ${'x'.repeat(2000)}`)).toThrow(/over 1000 bytes/);
    const q = new SseParser(() => undefined, 1000);
    expect(() => {
      for (let i = 0; i < 50; i++) q.feed(`data: ${'y'.repeat(40)}\n`);
    }).toThrow(/over 1000 bytes/);
  });
});

describe('envelope', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: {} }, 'request'],
    [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'answer'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }, 'answer'],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: {} }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1 }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 'ping', params: [1] }, 'invalid'],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 3 }, 'invalid'],
    [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'invalid'],
    ['ping', 'invalid'],
    [null, 'invalid'],
  ])('%j is %s', (m, kind) => {
    expect(envelope(m)).toBe(kind);
  });
});
