import { describe, expect, it } from 'vitest';
import { parseFrame, parseStack, recordFrames, shortFrame } from '../../../src/sourcemaps/stack.js';

describe('Chrome stack frames', () => {
  it('named, anonymous, async, constructor, aliased and Object.<anonymous> frames', () => {
    const stack = [
      'Error: empty cart',
      '    at total (http://127.0.0.1:5173/app.js:1:120)',
      '    at http://127.0.0.1:5173/app.js:1:300',
      '    at async checkout (http://127.0.0.1:5173/app.js:1:455)',
      '    at async http://127.0.0.1:5173/app.js?v=3:2:7',
      '    at new Cart (http://localhost:8080/assets/index-3f2a9c.js:1:23456)',
      '    at Object.run [as go] (http://localhost:8080/a.js:4:5)',
      '    at Object.<anonymous> (http://localhost:8080/b.js:6:7)',
      '    at Array.map (<anonymous>)',
    ].join('\n');
    expect(parseStack(stack)).toEqual([
      { url: 'http://127.0.0.1:5173/app.js', line: 1, column: 120 },
      { url: 'http://127.0.0.1:5173/app.js', line: 1, column: 300 },
      { url: 'http://127.0.0.1:5173/app.js', line: 1, column: 455, async: true },
      { url: 'http://127.0.0.1:5173/app.js?v=3', line: 2, column: 7, async: true },
      { url: 'http://localhost:8080/assets/index-3f2a9c.js', line: 1, column: 23456 },
      { url: 'http://localhost:8080/a.js', line: 4, column: 5 },
      { url: 'http://localhost:8080/b.js', line: 6, column: 7 },
    ]);
  });

  it('an eval frame resolves at the eval call site: the eval\'d string has no map', () => {
    expect(parseFrame('    at eval (eval at run (http://127.0.0.1:5173/app.js:1:50), <anonymous>:1:5)')).toEqual({ url: 'http://127.0.0.1:5173/app.js', line: 1, column: 50, eval: true });
    expect(parseFrame('    at Object.eval (eval at <anonymous> (http://127.0.0.1:5173/app.js:3:9), <anonymous>:2:1)')).toEqual({ url: 'http://127.0.0.1:5173/app.js', line: 3, column: 9, eval: true });
  });

  it('lines without a position, message lines and nonsense are skipped', () => {
    expect(parseFrame('    at Array.map (<anonymous>)')).toBeUndefined();
    expect(parseFrame('    at native')).toBeUndefined();
    expect(parseFrame('http://x/a.js:0:5')).toBeUndefined();
    expect(parseStack('TypeError: x is not a function at http://x/a.js:1:2\nno frames here')).toEqual([]);
    // a page can write a huge stack: bounded in lines looked at
    const huge = `E\n${'    at f (http://127.0.0.1/a.js:1:1)\n'.repeat(10_000)}`;
    expect(parseStack(huge).length).toBe(40);
  });

  it('a record: its stack, else the console call site, else the error event position; never our extension', () => {
    expect(recordFrames({ stack: 'E\n    at chrome-extension://abc/inject.js:1:2\n    at f (http://127.0.0.1/a.js:3:4)' })).toEqual([{ url: 'http://127.0.0.1/a.js', line: 3, column: 4 }]);
    expect(recordFrames({ source: 'audit (http://127.0.0.1/a.js:1:99)' })).toEqual([{ url: 'http://127.0.0.1/a.js', line: 1, column: 99 }]);
    expect(recordFrames({ source: 'http://127.0.0.1/a.js:1', filename: 'http://127.0.0.1/a.js', lineno: 1, colno: 77 })).toEqual([{ url: 'http://127.0.0.1/a.js', line: 1, column: 77 }]);
    expect(recordFrames({ message: 'no frames' } as never)).toEqual([]);
  });

  it('a text parsed once is kept: the same frozen frames next time, the same answer as a fresh parse, a stack apart from a call site', () => {
    const stack = 'TypeError: x\n    at f (http://127.0.0.1/a.js:3:4)\n    at g (http://127.0.0.1/b.js:5:6)';
    const first = recordFrames({ stack });
    expect(first).toEqual(parseStack(stack));
    expect(recordFrames({ stack: `${stack} `.slice(0, -1) })).toBe(first);
    expect(Object.isFrozen(first) && first.every((f) => Object.isFrozen(f))).toBe(true);
    // a stack of the extension's frames only decides (no frame), as before: the call site is not used
    const own = 'E\n    at chrome-extension://abc/inject.js:1:2';
    expect(recordFrames({ stack: own, source: 'http://127.0.0.1/a.js:1:2' })).toEqual([]);
    // one text, two meanings: no stack line in it, one call site
    const site = 'http://127.0.0.1/c.js:7:8';
    expect(recordFrames({ stack: site, source: site })).toEqual([{ url: 'http://127.0.0.1/c.js', line: 7, column: 8 }]);
    expect(recordFrames({ stack: site })).toEqual([]);
    // past the kept length a text is parsed every time: equal frames, another array
    const long = `${stack}\n${'    at h (http://127.0.0.1/pad.js:1:1)\n'.repeat(300)}`;
    expect(recordFrames({ stack: long })).toEqual(recordFrames({ stack: long }));
    expect(recordFrames({ stack: long })).not.toBe(recordFrames({ stack: long }));
    // many texts: the kept set is emptied and refilled, answers stay right
    for (let i = 0; i < 3000; i++) expect(recordFrames({ stack: `E\n    at f (http://127.0.0.1/${i}.js:1:${i + 1})` })[0]!.column).toBe(i + 1);
  });

  it('the generated position, compactly', () => {
    expect(shortFrame({ url: 'http://localhost:8080/assets/index-3f2a9c.js?v=1#x', line: 1, column: 23456 })).toBe('index-3f2a9c.js:1:23456');
  });
});
