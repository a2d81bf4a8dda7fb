/** Issue 8: cursors are opaque, stateless on the server, and validated before use. */
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeAt, encodeRest } from '../../../src/query/cursor.js';

describe('cursors', () => {
  it('round-trip both shapes and refuse anything else', () => {
    expect(decodeCursor(encodeAt([0, 35, 1e9]), 3)).toEqual({ at: [0, 35, 1e9] });
    expect(decodeCursor(encodeRest([1, 2], [30, 40], 77), 2)).toEqual({ from: [1, 2], to: [30, 40], skip: 77 });
    for (const bad of ['', 'z!', '1.2', '-1', '1~2', '5~1~0', '1~2~', 'a~b~c~d', '1.2~3.4~5']) expect(decodeCursor(bad, 1)).toBeNull();
  });
});
