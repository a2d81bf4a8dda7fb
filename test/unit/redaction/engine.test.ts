import { describe, expect, it } from 'vitest';
import { compileRedaction, RedactionConfigError, RedactionConfigSchema } from '../../../src/domain/redaction/index.js';
import { userPatternProblem } from '../../../src/domain/patterns/user-pattern.js';
import { isSensitiveKey, scanKeyed } from '../../../src/domain/redaction/keyed.js';

describe('key names', () => {
  it('knows secret-holding names from names that only mention one', () => {
    for (const k of ['password', 'passwd', 'pwd', 'secret', 'client_secret', 'token', 'access_token', 'refresh_token', 'id_token', 'api_key', 'apikey', 'auth', 'credential', 'session', 'private_key', 'accessToken', 'clientSecret', 'db_password', 'newPassword', 'X-Auth-Token', 'x-api-key', 'JSESSIONID', 'PHPSESSID', 'connect.sid', 'csrftoken', 'AWS_SECRET_ACCESS_KEY', 'sessionId'])
      expect(isSensitiveKey(k), k).toBe(true);
    for (const k of ['token_type', 'tokenType', 'max_tokens', 'author', 'secretary', 'authority', 'authenticated', 'session_timeout', 'password_strength', 'token_expires_in', 'key', 'keyCode', 'monkey', 'passenger', 'compass'])
      expect(isSensitiveKey(k), k).toBe(false);
  });

  it('reads the value after : or = in every quoting style', () => {
    const spans = (s: string) => scanKeyed(s).map((x) => s.slice(x.start, x.end));
    expect(spans('{"password":"a\\"b c","user":"x"}')).toEqual(['a\\"b c']);
    expect(spans("password='hunter two'")).toEqual(['hunter two']);
    expect(spans('a=1&access_token=abc123def&b=2')).toEqual(['abc123def']);
    expect(spans('{\\"secret\\":\\"s3cr3tvalue\\"}')).toEqual(['s3cr3tvalue']);
    expect(spans('Authorization: Bearer abc.def')).toEqual(['abc.def']);
    expect(spans('{"token_type":"Bearer","max_tokens":100,"password":null}')).toEqual([]);
    expect(spans('if (token == null) return; x => token')).toEqual([]);
  });
});

describe('redaction engine', () => {
  const e = compileRedaction();

  it('keeps the text around a secret', () => {
    expect(e.redactText('POST /login → 401 with Authorization: Bearer abcDEF123456ghi')).toBe('POST /login → 401 with Authorization: Bearer [REDACTED:bearer]');
    expect(e.redactText('{"user":"bo","password":"hunter2!","remember":true}')).toBe('{"user":"bo","password":"[REDACTED:keyed_secret]","remember":true}');
  });

  it('redacts header values by name, keeping the scheme', () => {
    const r = e.redactRecord('network_bodies', { url: 'https://x.test', request_headers: { Authorization: 'Basic dXNlcjpwdw==', 'X-Auth-Token': 'abc', 'X-CSRF-Token': 'zzz', Accept: 'text/html' } });
    expect(r.request_headers).toEqual({ Authorization: 'Basic [REDACTED:basic]', 'X-Auth-Token': '[REDACTED:header]', 'X-CSRF-Token': '[REDACTED:header]', Accept: 'text/html' });
  });

  it('reaches object keys at any depth in console args, and selector text', () => {
    const r = e.redactRecord('logs', { message: 'm', args: [{ a: [{ b: { accessToken: 'q1w2e3r4t5y6', pin: 1234 } }] }] });
    expect(JSON.stringify(r)).not.toContain('q1w2e3r4t5y6');
    const a = e.redactRecord('actions', { url: 'https://x.test/login', value: 'ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2', selectors: { text: 'api_key=0123456789abcdef0123' } });
    expect(JSON.stringify(a)).not.toMatch(/Zq8mN3xV7bL2|0123456789abcdef/);
  });

  it('decodes before matching: percent, +, JSON escapes, nested escapes', () => {
    for (const s of ['next=%2F&password%3Dhunter2secret', 'u=1&passwd=correct+horse+battery', '{"m":"\\u0070assword=abcdef123456xyz"}', 'https:\\/\\/admin:Sup3rS3cretPw@db.test\\/x']) {
      const out = e.redactText(s);
      expect(out, s).toContain('[REDACTED:');
      expect(out).not.toMatch(/hunter2secret|horse|abcdef123456|Sup3rS3cretPw/);
    }
  });

  it('redacts only session-ish values in a Cookie line of text, all values in a Cookie header', () => {
    expect(e.redactText('Cookie: theme=dark; PHPSESSID=a1b2c3d4e5f6; lang=en')).toBe('Cookie: theme=dark; PHPSESSID=[REDACTED:keyed_secret]; lang=en');
  });

  it('redactValue is deep and covers card numbers sent as numbers', () => {
    const v = e.redactValue({ result: [{ text: 'key AKIAQ7X2M4N6P8R0T2V4' }, { card: 4111111111111111, count: 12 }] });
    expect(JSON.stringify(v)).toBe('{"result":[{"text":"key [REDACTED:aws_access_key]"},{"card":"[REDACTED:card]","count":12}]}');
  });

  it('test() shows output and findings; counts() holds classes and numbers, never values', () => {
    const f = compileRedaction();
    const t = f.test('sk_live_4eC39HqLyjWDarjtT1zdp7dc and password=hunter2xx');
    expect(t.output).toBe('[REDACTED:stripe_key] and password=[REDACTED:keyed_secret]');
    expect(t.findings.map((x) => x.class).sort()).toEqual(['keyed_secret', 'stripe_key']);
    expect(f.counts()).toEqual({}); // test() does not count
    f.redactText('ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2');
    f.redactRecord('network_bodies', { url: 'x', request_headers: { Authorization: 'Bearer abcdefghij123' } });
    expect(f.counts()).toEqual({ github_token: 1, bearer: 1 });
    expect(JSON.stringify(f.counts())).not.toContain('Zq8m');
  });

  it('withRule/withoutRule return new engines; bad patterns are refused with a reason and change nothing', () => {
    const more = e.withRule({ name: 'order_id', pattern: 'ORD-[0-9]{6}', replacement: '[REDACTED:order]' });
    expect(more.listRules().some((r) => r.name === 'order_id' && !r.builtin)).toBe(true);
    expect(e.listRules().some((r) => r.name === 'order_id')).toBe(false);
    expect(more.redactText('order ORD-123456 shipped')).toBe('order [REDACTED:order] shipped');
    expect(more.withoutRule('order_id').redactText('ORD-123456')).toBe('ORD-123456');
    // #18: nested quantifiers run in linear time on RE2 now; what RE2 cannot run, or what matches nothing, is refused
    for (const bad of ['(a)\\1', '(?=a)b', 'a{1000}', 'x*', '[unclosed', '(?<n>a)\\k<n>'])
      expect(() => more.withRule({ name: 'bad', pattern: bad }), bad).toThrow(RedactionConfigError);
    expect(() => e.withoutRule('jwt')).toThrow(/built-in/);
    expect(more.listRules().length).toBe(e.listRules().length + 1);
    expect(userPatternProblem('ORD-[0-9]{6}', 'redaction')).toBeNull();
  });

  it('fails closed at compile time, naming the bad rule', () => {
    expect(() => compileRedaction({ rules: [{ name: 'evil_rule', pattern: '(x+)\\1y' }] })).toThrow(/evil_rule/);
    expect(() => compileRedaction({ rules: [{ name: 'Bad Name', pattern: 'x' }] })).toThrow(RedactionConfigError);
    expect(RedactionConfigSchema.parse({})).toEqual({ rules: [], allowlist: [] });
  });

  it('honours the allowlist', () => {
    const a = compileRedaction({ allowlist: ['sk_test_4eC39HqLyjWDarjtT1zdp7dc'] });
    expect(a.redactText('key sk_test_4eC39HqLyjWDarjtT1zdp7dc')).toBe('key sk_test_4eC39HqLyjWDarjtT1zdp7dc');
  });

  it('stays linear on hostile input (4× the input costs < 8× the time)', () => {
    const hostile = (n: number): string[] => [
      'AKIA'.repeat(n),
      'eyJ.'.repeat(n),
      `password=${'a'.repeat(n * 4)}`,
      'password'.repeat(n / 2),
      'token:'.repeat(n),
      `"secret":"${'\\'.repeat(n * 4)}`,
      '\\\\\\\\\\\\\\"'.repeat(n / 2),
      `secret:\\"${'token:\\"a'.repeat(n / 2)}`,
      '4'.repeat(n * 4),
      '4111 '.repeat(n),
      `${'a:'.repeat(n)}//`,
      '-----BEGIN PRIVATE KEY-----'.repeat(n / 8),
      `-----BEGIN PRIVATE KEY-----${'-'.repeat(n * 2)}`,
      '%25'.repeat(n),
      'Bearer '.repeat(n),
      'sk-'.repeat(n),
      `key=${'A1b2'.repeat(n)}`,
      // issue 20: name=value pairs, GraphQL variables, connection strings, Oracle userinfo
      '&a='.repeat(n),
      `x=${'Zq8mN3xV7bL2kP9wR4tY6uI1'.repeat(n / 8)}`,
      `${'password: $p '.repeat(n / 8)}${'"p":"'.repeat(n / 4)}`,
      ';Password='.repeat(n / 2),
      'PWD={'.repeat(n / 2),
      'a/b@'.repeat(n),
      'jdbc:oracle:thin:a/'.repeat(n / 4),
    ];
    const time = (n: number): number => {
      const inputs = hostile(n);
      const t0 = performance.now();
      for (let r = 0; r < 3; r++) for (const s of inputs) e.redactText(s);
      return performance.now() - t0;
    };
    time(4000);
    const small = Math.max(1, Math.min(time(5000), time(5000)));
    const big = Math.min(time(20000), time(20000));
    expect(big / small).toBeLessThan(8);
  });
});
