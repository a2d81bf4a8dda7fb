/** Issue 20 item 8: what the service worker makes of a response's headers, before anything is sent. */
import { describe, expect, it } from 'vitest';
import { cookieAttrs, securityRecord, type SeenResponse } from '../../../extension/src/sw/security-headers.js';
import { NetworkBodyRecordSchema } from '../../../src/domain/wire/schemas.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const VALUE = 'v4lue-that-must-never-leave';

const response = (over: Partial<SeenResponse>): SeenResponse => ({ url: 'https://app.test/', method: 'GET', statusCode: 200, timeStamp: NOW, type: 'main_frame', responseHeaders: [], ...over });

describe('cookie attributes from Set-Cookie', () => {
  it('keeps the name and every attribute, and drops the value', () => {
    const c = cookieAttrs(`sid=${VALUE}; Path=/; Domain=.app.test; Secure; HttpOnly; SameSite=Strict; Partitioned`, NOW)!;
    expect(c).toEqual({ name: 'sid', secure: true, http_only: true, same_site: 'strict', domain: '.app.test', path: '/', partitioned: true, expiry: 'session' });
    expect(JSON.stringify(c)).not.toContain(VALUE);
  });

  it('classes the expiry: Max-Age wins over Expires, past or zero is a deletion, over a year is long-lived', () => {
    expect(cookieAttrs('a=1; Max-Age=3600', NOW)!.expiry).toBe('persistent');
    expect(cookieAttrs('a=1; Max-Age=0', NOW)!.expiry).toBe('deletion');
    expect(cookieAttrs('a=1; Max-Age=-1; Expires=Wed, 21 Oct 2037 07:28:00 GMT', NOW)!.expiry).toBe('deletion');
    expect(cookieAttrs('a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT', NOW)!.expiry).toBe('deletion');
    expect(cookieAttrs('a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT', NOW)!.expiry).toBe('long_lived');
    expect(cookieAttrs('a=1; Max-Age=40000000', NOW)!.expiry).toBe('long_lived');
    expect(cookieAttrs('a=1; Expires=not a date', NOW)!.expiry).toBe('session');
    // a value with "=" and ";"-free junk in it still yields only the name
    expect(cookieAttrs(`tok=${VALUE}==; secure`, NOW)).toEqual({ name: 'tok', secure: true, http_only: false, expiry: 'session' });
    // no "=": browsers ignore the line, so do we
    expect(cookieAttrs('garbage; HttpOnly', NOW)).toBeNull();
  });
});

describe('the record for one response', () => {
  it('a document: its security headers only, its cookies without values, valid against the wire schema', () => {
    const rec = securityRecord(
      response({
        responseHeaders: [
          { name: 'Content-Type', value: 'text/html; charset=utf-8' },
          { name: 'Content-Security-Policy', value: "default-src 'self'" },
          { name: 'Strict-Transport-Security', value: 'max-age=63072000' },
          { name: 'Set-Cookie', value: `sid=${VALUE}; Secure; HttpOnly; SameSite=Lax` },
          { name: 'set-cookie', value: `a=${VALUE}\nb=${VALUE}; Max-Age=60` },
          { name: 'X-Internal-Trace', value: 'not a security header' },
          { name: 'Authorization', value: `Bearer ${VALUE}` },
        ],
      }),
    )!;
    expect(rec).toMatchObject({ method: 'GET', url: 'https://app.test/', status: 200, document: true, content_type: 'text/html; charset=utf-8' });
    expect(rec.response_headers).toEqual({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'self'", 'strict-transport-security': 'max-age=63072000' });
    expect((rec.cookies as Array<{ name: string }>).map((c) => c.name)).toEqual(['sid', 'a', 'b']);
    expect(JSON.stringify(rec)).not.toContain(VALUE);
    expect(NetworkBodyRecordSchema.safeParse(rec).success).toBe(true);
  });

  it('a document with no header of interest still reports, so its gaps are seen', () => {
    expect(securityRecord(response({ responseHeaders: [] }))).toMatchObject({ document: true, response_headers: {} });
  });

  it('a redirect and a sub-resource report only the cookies they set, and nothing without one', () => {
    const redirect = securityRecord(response({ statusCode: 302, responseHeaders: [{ name: 'Set-Cookie', value: 'r=1; HttpOnly' }, { name: 'Content-Security-Policy', value: 'x' }] }))!;
    expect(redirect.document).toBeUndefined();
    expect(redirect.response_headers).toBeUndefined();
    expect(redirect.cookies).toHaveLength(1);
    expect(securityRecord(response({ type: 'xmlhttprequest', responseHeaders: [{ name: 'Content-Security-Policy', value: 'x' }] }))).toBeNull();
    const xhr = securityRecord(response({ type: 'xmlhttprequest', method: 'POST', url: 'https://app.test/login', responseHeaders: [{ name: 'Set-Cookie', value: `t=${VALUE}; Secure` }] }))!;
    expect(xhr).toEqual({ ts: NOW, method: 'POST', url: 'https://app.test/login', status: 200, cookies: [{ name: 't', secure: true, http_only: false, expiry: 'session' }] });
  });

  it('bounds what it sends: 50 cookies (the rest counted), header values cut, a repeated header joined', () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ name: 'Set-Cookie', value: `c${i}=${VALUE}` }));
    const rec = securityRecord(response({ responseHeaders: [...many, { name: 'Referrer-Policy', value: 'no-referrer' }, { name: 'referrer-policy', value: 'origin' }, { name: 'Permissions-Policy', value: 'x'.repeat(5000) }] }))!;
    expect(rec.cookies).toHaveLength(50);
    expect(rec.cookies_dropped).toBe(10);
    const h = rec.response_headers as Record<string, string>;
    expect(h['referrer-policy']).toBe('no-referrer, origin');
    expect(h['permissions-policy']).toHaveLength(2048);
    expect(NetworkBodyRecordSchema.safeParse(rec).success).toBe(true);
  });
});
