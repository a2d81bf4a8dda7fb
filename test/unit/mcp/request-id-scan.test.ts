/** The top-level id of a line too long to parse, found as its bytes stream past (#18 item 7). */
import { describe, expect, it } from 'vitest';
import { RequestIdScanner } from '../../../src/mcp/request-id-scan.js';

function scan(line: string, chunk = Infinity): RequestIdScanner {
  const s = new RequestIdScanner();
  const bytes = Buffer.from(line, 'utf8');
  const step = Math.min(chunk, bytes.length) || 1;
  for (let i = 0; i < bytes.length; i += step) s.feed(bytes.subarray(i, i + step));
  return s;
}

const big = 'x'.repeat(10_000);

describe('RequestIdScanner', () => {
  const cases: Array<[string, string, string | number | null]> = [
    ['id first', `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"value":"${big}"}}}`, 7],
    ['id last, as the SDK writes it', `{"method":"tools/call","params":{"arguments":{"value":"${big}"}},"jsonrpc":"2.0","id":12}`, 12],
    ['string id', `{"id":"req-1","params":{"v":"${big}"}}`, 'req-1'],
    ['an "id" inside the arguments is not the request id', `{"params":{"arguments":{"id":"n1","v":"${big}"}},"id":3}`, 3],
    ['an "id" inside an array is not the request id', `{"params":[{"id":9}],"x":"${big}","id":4}`, 4],
    ['escaped quotes in a string do not end it', `{"params":{"v":"a\\"," ,\\"id\\":5,\\"${big}"},"id":6}`, 6],
    ['a backslash before the closing quote', `{"params":{"v":"${big}\\\\"},"id":8}`, 8],
    ['a key that only starts with id', `{"idx":1,"params":{"v":"${big}"},"id":2}`, 2],
    ['a value that says "id"', `{"method":"id","params":{"v":"${big}"},"id":10}`, 10],
    ['whitespace around', `{ "id" : 11 , "params":{"v":"${big}"}}`, 11],
    ['escaped id string', `{"id":"a\\"b","v":"${big}"}`, 'a"b'],
    ['no id', `{"method":"notifications/x","params":{"v":"${big}"}}`, null],
    ['null id', `{"id":null,"params":{"v":"${big}"}}`, null],
    ['an object is no id', `{"id":{"a":1},"params":{"v":"${big}"}}`, null],
    ['an id too long to be one', `{"id":"${big}"}`, null],
    ['not JSON at all', big, null],
  ];

  it.each(cases)('%s (whole)', (_name, line, id) => {
    expect(scan(line).id).toEqual(id);
  });

  it.each(cases)('%s (one byte at a time)', (_name, line, id) => {
    expect(scan(line, 1).id).toEqual(id);
  });

  it.each(cases)('%s (7-byte chunks)', (_name, line, id) => {
    expect(scan(line, 7).id).toEqual(id);
  });

  it('counts every byte fed and stays fast on 100 MB', () => {
    const s = new RequestIdScanner();
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const head = Buffer.from('{"method":"tools/call","params":{"arguments":{"value":"');
    const tail = Buffer.from('"}},"id":99}');
    s.feed(head);
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) s.feed(chunk);
    const ms = performance.now() - t0;
    s.feed(tail);
    expect(s.id).toBe(99);
    expect(s.bytes).toBe(100 * 1024 * 1024 + head.length + tail.length);
    expect(ms).toBeLessThan(5000);
  });
});
