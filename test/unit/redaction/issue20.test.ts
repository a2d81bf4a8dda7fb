/**
 * Issue 20 item 1, rule by rule: connection strings, password-like keys, GraphQL variables and
 * secret-shaped values, each beside the look-alikes it must leave alone. The corpus
 * (corpus.test.ts) covers every carrier; these push on the edges of each rule.
 */
import { describe, expect, it } from 'vitest';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { secretShaped } from '../../../src/domain/redaction/shape.js';
import { sensitiveVariables } from '../../../src/domain/redaction/graphql.js';
import { isKeyedSecret } from '../../../src/domain/redaction/keyed.js';

const e = compileRedaction();
const KEY = 'Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG';
const B64 = 'Xk3bQ9zP7wL2mN5vR8tY1uI4oA6sD0fG3hJ5kL7zX9cV2bN4mQ8wE1rT6yU3iO5pA7sD9fG2hJ4kL6zX8cV0bN3mQ==';

describe('connection strings', () => {
  it('AccountKey, SharedAccessKey and a SAS signature go; the names and endpoints stay', () => {
    expect(e.redactText(`DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${B64};EndpointSuffix=core.windows.net`)).toBe('DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:high_entropy];EndpointSuffix=core.windows.net');
    const sas = e.redactText(`BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&sp=rl&se=2026-12-01T00:00:00Z&sig=${encodeURIComponent(B64.slice(0, 44))}`);
    expect(sas).toContain('sig=[REDACTED:high_entropy]');
    expect(sas).toContain('sv=2022-11-02&sp=rl&se=2026-12-01T00:00:00Z');
    expect(e.redactText('Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc')).toContain('SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=[REDACTED:keyed_secret]');
  });

  it('Password= runs to the ";" in a connection string, spaces and all; ODBC braces quote a value, "}}" inside', () => {
    expect(e.redactText('Server=tcp:db,1433;User ID=sa;Password=my pass word!;Encrypt=True')).toBe('Server=tcp:db,1433;User ID=sa;Password=[REDACTED:keyed_secret];Encrypt=True');
    expect(e.redactText('Driver={ODBC Driver 18};UID=sa;PWD={p;ss}}w0rd};Database=app')).toBe('Driver={ODBC Driver 18};UID=sa;PWD={[REDACTED:keyed_secret]};Database=app');
    // outside a connection string a space still ends the value: prose after it stays
    expect(e.redactText('password=hunter2xx and then more')).toBe('password=[REDACTED:keyed_secret] and then more');
  });

  it('user:password@ with an empty user (redis) and Oracle thin user/password@', () => {
    expect(e.redactText('rediss://:s3cretValue9@cache:6380/0')).toBe('rediss://:[REDACTED:url_userinfo]@cache:6380/0');
    expect(e.redactText('jdbc:oracle:thin:scott/T1gerPass@//db:1521/ORCL')).toBe('jdbc:oracle:thin:scott/[REDACTED:oracle_userinfo]@//db:1521/ORCL');
    // user without password, mail addresses, paths with @ are not credentials
    for (const s of ['https://user@example.test/x', 'mail ann@example.test', 'https://cdn.test/@scope/pkg@1.2.3/index.js', 'http://localhost:5173/@vite/client']) expect(e.redactText(s)).toBe(s);
  });
});

describe('password-like keys', () => {
  it('pass, pin, pw, passphrase and names ending in them, in JSON, query, form and objects', () => {
    expect(e.redactText('{"type":"auth","pass":"hunter2"}')).toBe('{"type":"auth","pass":"[REDACTED:keyed_secret]"}');
    expect(e.redactText('user=bo&pass=hunter2&pin=4821&remember=1')).toBe('user=bo&pass=[REDACTED:keyed_secret]&pin=[REDACTED:keyed_secret]&remember=1');
    expect(e.redactText('{"dbPass":"x9","userPin":"0000","pw":"abc"}')).toBe('{"dbPass":"[REDACTED:keyed_secret]","userPin":"[REDACTED:keyed_secret]","pw":"[REDACTED:keyed_secret]"}');
    expect(JSON.stringify(e.redactValue({ pass: 'hunter2', pin: 4821, passphrase: 'correct horse' }))).toBe('{"pass":"[REDACTED:keyed_secret]","pin":"[REDACTED:keyed_secret]","passphrase":"[REDACTED:keyed_secret]"}');
  });

  it('leaves names that only contain the word, flags, and test counts alone', () => {
    for (const s of ['{"pass_through":"all","pinned":"top","bypass":"cache","compass":"north","passage":"It was"}', '{"pass":1200,"fail":3}', '{"pass":true,"pin":null}', 'spinning=on&mapping=x'])
      expect(e.redactText(s), s).toBe(s);
    expect(JSON.stringify(e.redactValue({ pass: 1200, fail: 3, pinned: true }))).toBe('{"pass":1200,"fail":3,"pinned":true}');
    expect(e.redactText('mongodb://h/?authSource=admin&authMechanism=SCRAM-SHA-256')).toBe('mongodb://h/?authSource=admin&authMechanism=SCRAM-SHA-256');
  });
});

describe('GraphQL', () => {
  const query = 'mutation Login($e: String!, $p: String!) { login(email: $e, password: $p) { token } }';

  it('finds the variables passed to sensitive arguments, not the others', () => {
    expect([...sensitiveVariables(query)]).toEqual(['p']);
    expect([...sensitiveVariables('mutation ($a: ID!, $k: String!, $pin: String) { rotate(id: $a, apiKey: $k) verify(pin: $pin) }')].sort()).toEqual(['k', 'pin']);
    expect([...sensitiveVariables('query ($id: ID!) { user(id: $id) { name } }')]).toEqual([]);
  });

  it('redacts the variable in a JSON body, in JSON inside JSON, %-encoded in a URL and as an object', () => {
    const body = JSON.stringify({ query, variables: { e: 'ann@example.test', p: 'Hunter2-xyz' } });
    expect(e.redactText(body)).toBe(body.replace('Hunter2-xyz', '[REDACTED:graphql_variable]'));
    const nested = JSON.stringify({ type: 'subscribe', payload: body });
    expect(e.redactText(nested)).not.toContain('Hunter2-xyz');
    expect(e.redactText(`https://app.test/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent('{"p":"Hunter2-xyz"}')}`)).not.toContain('Hunter2');
    const obj = e.redactValue({ id: '1', payload: { query, variables: { e: 'ann@example.test', p: 'Hunter2-xyz' } } });
    expect(JSON.stringify(obj)).toBe('{"id":"1","payload":{"query":"mutation Login($e: String!, $p: String!) { login(email: $e, password: $p) { token } }","variables":{"e":"ann@example.test","p":"[REDACTED:graphql_variable]"}}}');
  });

  it('redacts inline literals, and leaves a query without sensitive arguments whole', () => {
    expect(e.redactText('{"query":"mutation { login(email: \\"a@b.c\\", password: \\"Hunter2-xyz\\") { token } }"}')).not.toContain('Hunter2');
    const plain = JSON.stringify({ query: 'query ($p: Int) { page(n: $p) { id } }', variables: { p: 2 } });
    expect(e.redactText(plain)).toBe(plain);
  });
});

describe('secret-shaped values', () => {
  it('takes long random values of mixed classes; not ids, hashes under their names, cursors, images, words', () => {
    for (const v of [KEY, '400564757f72b57248e2452f70e07247', B64, 'ABCDEFGHJKMNPQRSTVWXYZ0123456789AB12']) expect(secretShaped(v), v).toBe(true);
    for (const v of [
      '3f2a9c1b-4e5d-4a6b-9c8d-7e6f5a4b3c2d', // UUID
      '507f1f77bcf86cd799439011', // ObjectId (24 hex)
      'V1StGXR8_Z5jdHi6B-myT', // nanoid (21)
      '01HZX3K4M5N6P7Q8R9S0T1V2W3', // ULID (26, one case)
      Buffer.from('{"id":1234,"createdAt":"2026-11-24"}').toString('base64'), // a cursor
      `iVBORw0KGgo${KEY}`, // a PNG
      'pk_live_Zq8mN3xV7bL2kP9wR4tY6uI1',
      'correct-horse-battery-staple-2026-42',
      'production-eu-west-1-build-2026-11',
      'aaaaaaaaaaaaaaaa1111111111111111',
      'https://example.test/a?b=c',
    ])
      expect(secretShaped(v), v).toBe(false);
  });

  it('goes in a name=value pair whatever the name, unless the name says hash, id, version, cursor', () => {
    expect(e.redactText(`https://api.test/w?q=London&appid=${KEY}&units=metric`)).toBe('https://api.test/w?q=London&appid=[REDACTED:high_entropy]&units=metric');
    const sha = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
    for (const s of [`https://git.test/c?commit=${sha.slice(0, 40)}&sha=${sha}`, `https://cdn.test/app.js?v=${sha}`, `https://api.test/x?trace_id=${sha.slice(0, 32)}&userId=${KEY}`, `https://cdn.test/dist/bundle.${sha}.js`, `/api/orders/${KEY}/items`])
      expect(e.redactText(s), s).toBe(s);
  });

  it('goes under a secret-ish key (appKey, signature, hmac) only when shaped like a secret', () => {
    expect(isKeyedSecret('appKey', KEY)).toBe(true);
    expect(isKeyedSecret('appKey', 'user-prefs')).toBe(false);
    expect(isKeyedSecret('signature', 'f(a: string, b: number): void')).toBe(false);
    expect(isKeyedSecret('publicKey', B64)).toBe(false);
    expect(e.redactText(`{"appKey":"${KEY}","key":"theme","signature":"${B64}"}`)).toBe('{"appKey":"[REDACTED:high_entropy]","key":"theme","signature":"[REDACTED:high_entropy]"}');
    expect(JSON.stringify(e.redactRecord('network_bodies', { url: 'https://a.test', request_headers: { 'X-App-Key': KEY, 'X-Request-Id': KEY.slice(0, 12) } }))).toBe('{"url":"https://a.test","request_headers":{"X-App-Key":"[REDACTED:header]","X-Request-Id":"Zq8mN3xV7bL2"}}');
  });
});
