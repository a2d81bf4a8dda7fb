import { describe, expect, it } from 'vitest';
import { privateHost, refusal } from '../../../src/sourcemaps/host-guard.js';

describe('where a source map may be fetched from (SSRF guard)', () => {
  it('this machine and private networks, as IP literals or localhost', () => {
    for (const u of ['http://localhost:5173/a.js', 'http://127.0.0.1/a.js', 'http://127.8.9.10:3000/a.js', 'http://[::1]:8080/a.js', 'http://10.1.2.3/a.js', 'https://172.16.0.1/a.js', 'http://172.31.255.255/a.js', 'http://192.168.1.20:8000/a.js', 'http://0x7f.1/a.js', 'http://2130706433/a.js']) {
      expect(refusal(u, undefined), u).toBeUndefined();
    }
  });

  it('refuses the internet, look-alikes, other schemes and names that would need DNS', () => {
    const cases: Array<[string, string]> = [
      ['https://cdn.example.com/app.js', 'not_private'],
      ['http://8.8.8.8/a.js', 'not_private'],
      ['http://172.32.0.1/a.js', 'not_private'],
      ['http://172.15.0.1/a.js', 'not_private'],
      ['http://192.169.0.1/a.js', 'not_private'],
      ['http://169.254.169.254/latest/meta-data', 'not_private'],
      ['http://0.0.0.0/a.js', 'not_private'],
      ['http://localhost.evil.com/a.js', 'not_private'],
      ['http://127.0.0.1.nip.io/a.js', 'not_private'],
      ['http://dev.internal/a.js', 'not_private'],
      ['http://[::ffff:8.8.8.8]/a.js', 'not_private'],
      ['file:///etc/passwd', 'not_http'],
      ['chrome-extension://abc/inject.js', 'not_http'],
      ['data:text/javascript,1', 'not_http'],
      ['not a url', 'not_http'],
    ];
    for (const [u, why] of cases) expect(refusal(u, undefined), u).toBe(why);
    expect(privateHost('localhost')).toBe(true);
    expect(privateHost('example.com')).toBe(false);
  });

  it("only the page's own origin: a stack naming another local port or host is not asked", () => {
    expect(refusal('http://127.0.0.1:5173/a.js', 'http://127.0.0.1:5173/cart?x=1')).toBeUndefined();
    expect(refusal('http://127.0.0.1:9999/admin', 'http://127.0.0.1:5173/')).toBe('other_origin');
    expect(refusal('http://localhost:5173/a.js', 'http://127.0.0.1:5173/')).toBe('other_origin');
    expect(refusal('https://127.0.0.1:5173/a.js', 'http://127.0.0.1:5173/')).toBe('other_origin');
    // a public page never makes the daemon fetch, even a script on a private address
    expect(refusal('http://192.168.1.1/router.js', 'https://evil.example/')).toBe('other_origin');
    expect(refusal('http://127.0.0.1/a.js', 'not a url')).toBe('other_origin');
  });
});
