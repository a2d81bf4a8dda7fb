import { describe, expect, it } from 'vitest';
import { EXTENSION_ORIGIN } from '../../../src/domain/extension-id.js';
import { createGuard } from '../../../src/transport/guard.js';

describe('the Host/Origin guard', () => {
  const guard = createGuard(() => 7890, [EXTENSION_ORIGIN]);

  it('accepts loopback Hosts on our port only (DNS rebinding)', () => {
    for (const host of ['127.0.0.1:7890', 'localhost:7890', '[::1]:7890', 'LOCALHOST:7890']) expect(guard.check(host, ''), host).toBeNull();
    for (const host of ['rebind.test:7890', '127.0.0.1:7891', '127.0.0.1', 'evil.example.com', '']) expect(guard.check(host, ''), host).toBe('host_refused');
  });

  it('accepts no Origin (a local tool), our extension, and our own loopback origin; refuses every other', () => {
    for (const origin of ['', EXTENSION_ORIGIN, 'http://127.0.0.1:7890', 'http://localhost:7890', 'http://[::1]:7890']) expect(guard.check('127.0.0.1:7890', origin), origin).toBeNull();
    for (const origin of ['http://127.0.0.1:7891', 'https://127.0.0.1:7890', 'http://rebind.test:7890', 'http://evil.example.com', 'chrome-extension://someoneelse', 'null', 'http://127.0.0.1:7890.evil.example.com']) {
      expect(guard.check('127.0.0.1:7890', origin), origin).toBe('origin_refused');
    }
  });

  it('trusts only an allowlisted extension origin as the extension: our own loopback origin is not', () => {
    expect(guard.trust(EXTENSION_ORIGIN)).toBe('extension_origin');
    expect(guard.trust('http://127.0.0.1:7890')).toBe('none');
    expect(guard.trust('')).toBe('none');
  });
});
