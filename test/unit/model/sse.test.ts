/** The SSE parser on the edges a provider's stream really has: every split, every line end, bounds. */
import { describe, expect, it } from 'vitest';
import { SseParser, SseTooLarge } from '../../../src/model/index.js';

const STREAM = ': keep-alive comment\r\ndata: {"a":1}\r\n\r\nevent: message\ndata:{"b":2}\n\ndata: line one\ndata: line two\n\nid: 7\nretry: 10\n\ndata\n\ndata: [DONE]\r\r';
const WANT = ['{"a":1}', '{"b":2}', 'line one\nline two', '', '[DONE]'];

function feed(p: SseParser, parts: string[]): string[] {
  return parts.flatMap((s) => p.push(s));
}

describe('SseParser', () => {
  it('parses data lines, comments, other fields, multi-line data, bare "data" and [DONE]', () => {
    expect(feed(new SseParser(1000), [STREAM])).toEqual(WANT);
  });

  it('gives the same events however the bytes are split, CRLF split across chunks included', () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      expect(feed(new SseParser(1000), [STREAM.slice(0, cut), STREAM.slice(cut)])).toEqual(WANT);
    }
    // one character at a time: every CR meets its LF in the next chunk
    expect(feed(new SseParser(1000), [...STREAM])).toEqual(WANT);
  });

  it('treats CR, LF and CRLF alike as line ends, and an LF after a chunk-ending CR as part of it', () => {
    expect(feed(new SseParser(100), ['data: x\r', '\n', '\r', '\n'])).toEqual(['x']);
    expect(feed(new SseParser(100), ['data: x\r\rdata: y\n\n'])).toEqual(['x', 'y']);
  });

  it('keeps an event that never ended (no blank line) to itself', () => {
    expect(feed(new SseParser(100), ['data: half'])).toEqual([]);
  });

  it('refuses a line without an end past the bound, and an event of many lines past it', () => {
    expect(() => new SseParser(50).push('data: ' + 'x'.repeat(60))).toThrow(SseTooLarge);
    const p = new SseParser(50);
    expect(() => {
      for (let i = 0; i < 10; i++) p.push('data: 0123456789\n');
    }).toThrow(SseTooLarge);
    // a long stream of small events is fine: the bound is per event
    const q = new SseParser(50);
    let n = 0;
    for (let i = 0; i < 1000; i++) n += q.push('data: 0123456789\n\n').length;
    expect(n).toBe(1000);
  });
});
