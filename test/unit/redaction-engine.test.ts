import { describe, expect, it } from 'vitest';
import { compileRedaction, isCard, RedactionConfigError } from '../../src/domain/redaction/index.js';
import { ConfigError, loadConfig } from '../../src/config.js';

const e = compileRedaction();

// Crafted, not real: shapes of each class.
const SECRETS: Array<[string, string, string]> = [
  ['bearer', 'Authorization: Bearer tK9f2LmQ8xZ4vB7nR1wE', 'tK9f2LmQ8xZ4vB7nR1wE'],
  ['basic', 'Authorization: Basic dXNlcjpodW50ZXIyMjI=', 'dXNlcjpodW50ZXIyMjI='],
  ['jwt', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlaGVyZQ', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlaGVyZQ'],
  ['jwt alg=none', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0In0.', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0In0.'],
  ['aws key id', 'key AKIAQ7X2M4N6P8R0T2V4 used', 'AKIAQ7X2M4N6P8R0T2V4'],
  ['github', 'export GH=ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2', 'ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2'],
  ['gitlab', 'glpat-xY7zQ2wE9rT4uI8oP3aS', 'glpat-xY7zQ2wE9rT4uI8oP3aS'],
  ['slack', 'xoxb-123456789012-abcdefABCDEF', 'xoxb-123456789012-abcdefABCDEF'],
  ['stripe', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'],
  ['anthropic', 'sk-ant-api03-Qw3rTy7UiOp9AsDfGhJkL2ZxCvBnM', 'sk-ant-api03-Qw3rTy7UiOp9AsDfGhJkL2ZxCvBnM'],
  ['openai', 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv', 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv'],
  ['google', 'AIzaSyB7xK2mQ9vL4nR8tW1eY5uI3oP6aS0dF2g', 'AIzaSyB7xK2mQ9vL4nR8tW1eY5uI3oP6aS0dF2g'],
  ['json password', '{"user":"bo","password":"correct horse battery"}', 'correct horse battery'],
  ['form', 'user=bo&passwd=Tr0ub4dor%263&next=/', 'Tr0ub4dor'],
  ['query', 'https://api.test/v1?access_token=9f8e7d6c5b4a39281716&x=1', '9f8e7d6c5b4a39281716'],
  ['userinfo', 'postgres://admin:S3cr3tPassw0rd@db.internal:5432/app', 'S3cr3tPassw0rd'],
  ['card', 'paid with 4111 1111 1111 1111 today', '4111 1111 1111 1111'],
  ['pem json-escaped', '{"key":"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----"}', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'],
  ['percent-encoded', 'q=password%3Dhunter2secret', 'hunter2secret'],
];

const LOOKALIKES = [
  '123e4567-e89b-12d3-a456-426614174000',
  'commit 3f786850e387550fdab836ed7e6dc881de23001b',
  'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
  'pk_test_TYooMQauvdEDq54NiTphI7jx',
  '4111 1111 1111 1112',
  '{"token_type":"Bearer","max_tokens":1024,"author":"x","secretary":"y"}',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/156.0 Safari/537.36',
  '/assets/index-4f8a9c2e.js',
  '01ARZ3NDEKTSV4RRFFQ69G5FAV',
  'session expired, please log in again',
];

describe('redaction engine', () => {
  for (const [cls, text, secret] of SECRETS) {
    it(`redacts ${cls} and keeps the text around it`, () => {
      const out = e.redactText(text);
      expect(out).toContain('[REDACTED:');
      for (let i = 0; i + 12 <= secret.length; i++) expect(out, `window ${i} of the secret survived`).not.toContain(secret.slice(i, i + 12));
      if (secret.length < 12) expect(out).not.toContain(secret);
    });
  }

  it('leaves look-alikes alone', () => {
    for (const s of LOOKALIKES) expect(e.redactText(s)).toBe(s);
  });

  it('keeps the scheme in credential headers and cookie attributes, redacts the values', () => {
    const r = e.redactRecord('network_bodies', { url: 'https://x.test', request_headers: { Authorization: 'Bearer abc.def.ghi', 'X-Api-Key': 'k1', Cookie: 'sid=abc; theme=dark' }, response_headers: { 'Set-Cookie': 'sid=abc; Path=/; HttpOnly' } });
    expect(r.request_headers).toEqual({ Authorization: 'Bearer [REDACTED:bearer]', 'X-Api-Key': '[REDACTED:header]', Cookie: 'sid=[REDACTED:cookie]; theme=[REDACTED:cookie]' });
    expect(r.response_headers).toEqual({ 'Set-Cookie': 'sid=[REDACTED:cookie]; Path=/; HttpOnly' });
  });

  it('reaches console args at any depth and selector text', () => {
    const r = e.redactRecord('logs', { message: 'login', args: [{ deep: [{ password: 'x' }, 'api_key=0123456789abcdef'] }] });
    expect(JSON.stringify(r)).not.toContain('0123456789abcdef');
  });

  it('checks cards by issuer, length and Luhn', () => {
    expect(isCard('4111111111111111')).toBe(true);
    expect(isCard('4111111111111112')).toBe(false);
    expect(isCard('9111111111111111')).toBe(false);
  });

  it('stays linear on hostile input', () => {
    const time = (n: number): number => {
      const inputs = ['AKIA'.repeat(n), 'eyJ.'.repeat(n), `password=${'a'.repeat(n * 4)}`, '4'.repeat(n * 4), `${'a:'.repeat(n)}//`, '-----BEGIN PRIVATE KEY-----'.repeat(n / 8),
        // the fast trigger's look-backs: every anchor a near miss
        `${'tokenx'.repeat(n)}:`, `${'secret '.repeat(n)}=`, ':='.repeat(n * 2), `${`://${'b'.repeat(150)}@`.repeat(n / 40)}`, 'gh_npm_sk-'.repeat(n / 2)];
      const t0 = performance.now();
      for (const s of inputs) e.redactText(s);
      return performance.now() - t0;
    };
    time(2000);
    const small = Math.max(0.5, time(5000));
    const big = time(20000);
    expect(big / small).toBeLessThan(16); // 4× input: linear is ~4×, quadratic ~16×
  });

  it('refuses bad user rules with a reason and leaves the active set as it was', () => {
    expect(() => e.withRule({ name: 'bad', pattern: '(a+)\\1$' })).toThrow(RedactionConfigError);
    expect(() => e.withRule({ name: 'bad2', pattern: '([' })).toThrow(/not a valid RE2 pattern/);
    const more = e.withRule({ name: 'order_id', pattern: 'ORD-[0-9]{6}', replacement: '[REDACTED:order]' });
    expect(more.redactText('order ORD-123456 shipped')).toBe('order [REDACTED:order] shipped');
    expect(e.redactText('order ORD-123456 shipped')).toBe('order ORD-123456 shipped');
    expect(more.withoutRule('order_id').redactText('ORD-123456')).toBe('ORD-123456');
  });

  it('honours the allowlist', () => {
    const a = compileRedaction({ allowlist: ['sk_test_4eC39HqLyjWDarjtT1zdp7dc'] });
    expect(a.redactText('sk_test_4eC39HqLyjWDarjtT1zdp7dc')).toBe('sk_test_4eC39HqLyjWDarjtT1zdp7dc');
  });

  it('fails closed at startup: a rule that does not compile stops the configuration, naming it', () => {
    expect(() => loadConfig({ env: {}, flags: { redaction: { rules: [{ name: 'evil', pattern: '(x+)\\1y' }] } } })).toThrow(ConfigError);
    try {
      loadConfig({ env: {}, flags: { redaction: { rules: [{ name: 'evil', pattern: '(x+)\\1y' }] } } });
    } catch (err) {
      expect((err as Error).message).toContain('evil');
    }
  });
});
