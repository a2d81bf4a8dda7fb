import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { uws } from '../../src/transport/uws.js';

describe('uWebSockets.js loader', () => {
  it('loads the native binary, never the package entry with its stdout-printing JS fallback', () => {
    expect(typeof uws.App).toBe('function');
    expect(typeof uws.us_listen_socket_close).toBe('function');
    const require = createRequire(import.meta.url);
    const loaded = Object.keys(require.cache);
    expect(loaded.some((f) => /uws-js-unofficial.*\.node$/.test(f))).toBe(true);
    expect(loaded.some((f) => /uws-js-unofficial[\\/](src[\\/]uws\.js|dist[\\/]index\.js)$/.test(f))).toBe(false);
  });
});
