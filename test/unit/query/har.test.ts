/**
 * Issue 21 item 5: the HAR 1.2 builder (src/query/har.ts) and its read (har-read.ts). Every file
 * built here is checked against the HAR 1.2 JSON schema by @har-sdk/validator (maintained; its
 * schema is ajv-compiled), plus the fields the spec requires that the schema leaves optional
 * (timings send/wait/receive, content size/mimeType).
 */
import { HarValidator } from '@har-sdk/validator';
import { describe, expect, it } from 'vitest';
import { kindId } from '../../../src/domain/kinds.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { buildHar, readHarRecords, type Hit } from '../../../src/query/index.js';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';

const NET = kindId('network');
const BODIES = kindId('network_bodies');
const T0 = Date.UTC(2026, 10, 24, 20, 0, 0);
const egress = compileRedaction();
const validator = new HarValidator();

let seq = 0;
function hit(kind: number, rec: Record<string, unknown>, tab = 7): Hit {
  seq++;
  return { seq, ord: seq, kind, recvTime: Number(rec.ts) + 5, clientTime: Number(rec.ts), tab, rec: rec as Hit['rec'] };
}

const opts = { egress, creator: { name: 'gasoline', version: 'test' }, maxEntries: 1000, maxBytes: 32 * 1024 * 1024 };

type Har = { log: { version: string; creator: { name: string }; comment?: string; entries: Array<Record<string, any>> } };

/**
 * The file validates against the HAR 1.2 schema and keeps the spec's conventions; returns it parsed.
 * The validator's schema wants at least one entry, which the spec does not: an export that matched
 * nothing is an empty `entries` array (devtools opens it), and that one finding is all it may raise.
 */
async function valid(text: string): Promise<Har> {
  const har = JSON.parse(text) as Har;
  const errors = await validator.verify(har as never);
  const allowed = har.log.entries.length === 0 ? errors.filter((e) => !(e.instancePath === '/log/entries' && e.keyword === 'minItems')) : errors;
  expect(allowed, JSON.stringify(errors)).toEqual([]);
  expect(har.log.version).toBe('1.2');
  for (const e of har.log.entries) {
    const t = e.timings;
    for (const k of ['send', 'wait', 'receive']) expect(t[k]).toBeGreaterThanOrEqual(0);
    for (const k of ['blocked', 'dns', 'connect', 'ssl']) expect(t[k] === -1 || t[k] >= 0).toBe(true);
    // time is the sum of the known phases
    expect(e.time).toBe(['blocked', 'dns', 'connect', 'ssl', 'send', 'wait', 'receive'].reduce((n, k) => n + Math.max(t[k], 0), 0));
    expect(Number.isInteger(e.response.content.size)).toBe(true);
    expect(typeof e.response.content.mimeType).toBe('string');
    expect(Number.isNaN(Date.parse(e.startedDateTime))).toBe(false);
  }
  return har;
}

describe('buildHar', () => {
  it('joins a request with its bodies record: headers, cookies and queryString as arrays, sizes, timings by the -1 convention', async () => {
    const net = hit(NET, { ts: T0, method: 'POST', url: 'http://api.test/orders?page=2&sort=new%20first', status: 201, duration: 87.5, initiator_type: 'fetch', transfer_size: 900, encoded_body_size: 300, decoded_body_size: 1200, page_url: 'http://app.test/' });
    const body = hit(BODIES, {
      ts: T0,
      method: 'POST',
      url: 'http://api.test/orders?page=2&sort=new%20first',
      status: 201,
      content_type: 'application/json',
      duration: 87,
      request_headers: { 'content-type': 'application/json', cookie: 'theme=dark; lang=en' },
      response_headers: { 'content-type': 'application/json', location: '/orders/9' },
      request_body: '{"sku":"A1","qty":2}',
      response_body: '{"id":9}',
      cookies: [{ name: 'sid', secure: true, http_only: true, same_site: 'Lax', path: '/', expiry: 'session' }],
    });
    const r = await buildHar([net], [body], opts);
    expect(r).toMatchObject({ entries: 1, dropped: { over_limit: 0, over_bytes: 0 } });
    expect(r.bytes).toBe(Buffer.byteLength(r.text));
    const har = await valid(r.text);
    const e = har.log.entries[0]!;
    expect(e.startedDateTime).toBe(new Date(T0).toISOString());
    expect(e.time).toBe(87.5);
    expect(e.timings).toEqual({ blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 87.5, receive: 0 });
    expect(e.request).toMatchObject({ method: 'POST', headersSize: -1, bodySize: 20, postData: { mimeType: 'application/json', text: '{"sku":"A1","qty":2}' } });
    expect(e.request.headers).toContainEqual({ name: 'content-type', value: 'application/json' });
    expect(e.request.queryString).toEqual([
      { name: 'page', value: '2' },
      { name: 'sort', value: 'new first' },
    ]);
    // cookie values are secrets at ingest already: the names stay
    expect(e.request.cookies.map((c: { name: string }) => c.name)).toEqual(['theme', 'lang']);
    expect(e.response).toMatchObject({ status: 201, redirectURL: '/orders/9', bodySize: 300, content: { size: 1200, compression: 900, mimeType: 'application/json', text: '{"id":9}' } });
    expect(e.response.cookies).toEqual([{ name: 'sid', value: '', path: '/', httpOnly: true, secure: true, comment: 'value never captured' }]);
    expect(e._resourceType).toBe('fetch');
    expect(e._tabId).toBe(7);
  });

  it('a request without bodies, bodies without a request, a failure and a document: each an entry, in time order', async () => {
    const lone = hit(NET, { ts: T0 + 30, method: 'get', url: 'http://api.test/ping', status: 204, duration: 3 });
    const failed = hit(NET, { ts: T0 + 10, method: 'GET', url: 'http://api.test/down', status: 0, duration: 12, error: 'net::ERR_CONNECTION_REFUSED' }, -1);
    const doc = hit(BODIES, { ts: T0, method: 'GET', url: 'http://app.test/', status: 200, document: true, response_headers: { 'content-type': 'text/html', 'x-frame-options': 'DENY' } });
    const orphan = hit(BODIES, { ts: T0 + 20, method: 'PUT', url: 'http://api.test/x', status: 500, response_body: 'boom' });
    const har = await valid((await buildHar([lone, failed], [doc, orphan], opts)).text);
    const es = har.log.entries;
    expect(es.map((e) => e.request.url)).toEqual(['http://app.test/', 'http://api.test/down', 'http://api.test/x', 'http://api.test/ping']);
    expect(es[0]).toMatchObject({ _resourceType: 'document', comment: expect.stringContaining('security headers'), response: { content: { mimeType: 'text/html' } } });
    expect(es[1]).toMatchObject({ response: { status: 0 }, comment: 'failed: net::ERR_CONNECTION_REFUSED' });
    expect(es[1]!._tabId).toBeUndefined();
    // no body captured: no postData, no content text, size 0, mime unknown
    expect(es[3]!.request).toMatchObject({ method: 'GET', bodySize: 0, headers: [], cookies: [], queryString: [] });
    expect(es[3]!.request.postData).toBeUndefined();
    expect(es[3]!.response.content).toEqual({ size: 0, mimeType: 'x-unknown' });
    expect(es[3]!.response.bodySize).toBe(-1);
    expect(es[2]!.time).toBe(0);
  });

  it('binary bodies never captured: no text and no base64 that a reader would take for the body; the size the placeholder names', async () => {
    const img = hit(BODIES, { ts: T0, method: 'POST', url: 'http://api.test/upload', status: 200, content_type: 'image/png', request_body: '[Binary: 2048 bytes, image/png]', response_body: '[Binary: 512 bytes, image/png]' });
    const stream = hit(BODIES, { ts: T0 + 1, method: 'POST', url: 'http://api.test/s', status: 200, request_body: '[Stream]', response_body: '[Body skipped: not read within 100 ms]' });
    const har = await valid((await buildHar([], [img, stream], opts)).text);
    const [a, b] = har.log.entries;
    expect(a!.response.content).toEqual({ size: 512, mimeType: 'image/png', comment: 'body not captured: [Binary: 512 bytes, image/png]' });
    expect(a!.request.postData).toEqual({ mimeType: '', comment: 'body not captured: [Binary: 2048 bytes, image/png]' });
    expect(a!.request.bodySize).toBe(2048);
    expect(JSON.stringify(har)).not.toContain('"encoding"');
    expect(b!.response.content.text).toBeUndefined();
    expect(b!.request.bodySize).toBe(-1);
  });

  it('bodies cut at capture say so, and give no size they do not know', async () => {
    const cut = hit(BODIES, { ts: T0, method: 'GET', url: 'http://api.test/big', status: 200, response_body: 'x'.repeat(100), response_truncated: true });
    const e = (await valid((await buildHar([], [cut], opts)).text)).log.entries[0]!;
    expect(e.response.content).toMatchObject({ size: 0, text: 'x'.repeat(100), comment: 'cut at capture (16 384 characters)' });
  });

  it('redacts again at egress: Authorization, cookies, query secrets and body secrets never reach the file', async () => {
    // as a record stored before a rule ran (or by a producer that skipped ingest redaction): raw
    const raw = hit(BODIES, {
      ts: T0,
      method: 'GET',
      url: 'http://api.test/me?access_token=ya29.a0AfH6SMBsecretsecretsecret&page=1',
      status: 200,
      request_headers: { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl', Cookie: 'sid=s3cr3tSessionValue123; theme=dark', 'X-Api-Key': 'sk_live_51Habcdefghijklmnopqrstu' },
      response_headers: { 'set-cookie': 'sid=newSessionValue456; Path=/; HttpOnly' },
      request_body: '{"password":"hunter2hunter2"}',
      response_body: 'card 4111 1111 1111 1111 ok',
    });
    const r = await buildHar([], [raw], opts);
    for (const secret of ['eyJhbGciOiJIUzI1NiJ9', 's3cr3tSessionValue123', 'newSessionValue456', 'sk_live_51Habcdefghijklmnopqrstu', 'ya29.a0AfH6SMBsecretsecretsecret', 'hunter2hunter2', '4111 1111 1111 1111']) expect(r.text).not.toContain(secret);
    const e = (await valid(r.text)).log.entries[0]!;
    expect(e.request.headers).toContainEqual({ name: 'Authorization', value: 'Bearer [REDACTED:bearer]' });
    expect(e.request.cookies).toEqual([
      { name: 'sid', value: '[REDACTED:cookie]' },
      { name: 'theme', value: '[REDACTED:cookie]' },
    ]);
    const token = e.request.queryString.find((q: { name: string }) => q.name === 'access_token');
    expect(token.value).toMatch(/^\[REDACTED:/);
    expect(e.request.queryString).toContainEqual({ name: 'page', value: '1' });
  });

  it('a rule added at run time reaches the file (the engine in force, not the one at ingest)', async () => {
    const withRule = egress.withRule({ name: 'order_id', pattern: 'ORD-\\d{6}' });
    const rec = hit(BODIES, { ts: T0, method: 'GET', url: 'http://api.test/o/ORD-123456', status: 200, response_body: '{"order":"ORD-654321"}' });
    const text = (await buildHar([], [rec], { ...opts, egress: withRule })).text;
    expect(text).not.toMatch(/ORD-\d{6}/);
    await valid(text);
  });

  it('caps: the newest entries within the entry limit and the byte cap, and says what it left out', async () => {
    const many = Array.from({ length: 50 }, (_x, i) => hit(BODIES, { ts: T0 + i, method: 'GET', url: `http://api.test/n/${i}`, status: 200, response_body: 'y'.repeat(1000) }));
    const byCount = await buildHar([], many, { ...opts, maxEntries: 10 });
    expect(byCount).toMatchObject({ entries: 10, dropped: { over_limit: 40, over_bytes: 0 } });
    const h1 = await valid(byCount.text);
    expect(h1.log.entries.map((e) => e.request.url)).toEqual(Array.from({ length: 10 }, (_x, i) => `http://api.test/n/${40 + i}`));
    expect(h1.log.comment).toContain('40 older entries over the 10-entry limit left out');

    const byBytes = await buildHar([], many, { ...opts, maxBytes: 20_000 });
    expect(byBytes.bytes).toBeLessThanOrEqual(20_000);
    expect(byBytes.entries).toBeGreaterThan(5);
    expect(byBytes.entries + byBytes.dropped.over_bytes).toBe(50);
    const h2 = await valid(byBytes.text);
    expect(h2.log.entries.at(-1)!.request.url).toBe('http://api.test/n/49');
    expect(h2.log.comment).toContain(`${byBytes.dropped.over_bytes} older entries over the 20000-byte cap left out`);

    const none = await buildHar([], many, { ...opts, maxBytes: 100 });
    expect(none).toMatchObject({ entries: 0, dropped: { over_bytes: 50 } });
    await valid(none.text);
  });

  it('nothing captured: a valid, empty HAR', async () => {
    const r = await buildHar([], [], opts);
    expect((await valid(r.text)).log.entries).toEqual([]);
    expect(r.entries).toBe(0);
  });
});

describe('readHarRecords', () => {
  function store(): { reader: StoreReader; write: (kind: number, recs: Array<Record<string, unknown>>, tab?: number) => void } {
    const buffers = allocateStore([4096, 64 * 1024, 64 * 1024, 4096, 4096, 4096, 4096]);
    const writer = new StoreWriter(buffers, 1);
    return {
      reader: new StoreReader(buffers),
      write: (kind, recs, tab = 1) => writer.commit({ recvTime: T0, records: recs.map((r) => ({ kind, clientTime: Number(r.ts), tab, payload: Buffer.from(JSON.stringify(r)) })), received: [recs.length], rejected: [] }),
    };
  }
  const spec = { from: [0, 0, 0, 0, 0, 0, 0], maxEntries: 1000, maxBytes: 1 << 20 };

  it('filters by URL substring, time, tabs; keeps the newest within the caps and counts the rest', async () => {
    const s = store();
    s.write(NET, Array.from({ length: 30 }, (_x, i) => ({ ts: T0 + i, method: 'GET', url: `http://api.test/${i % 2 ? 'a' : 'b'}/${i}`, status: 200, duration: 1 })), 1);
    s.write(NET, [{ ts: T0 + 100, method: 'GET', url: 'http://api.test/a/tab2', status: 200, duration: 1 }], 2);
    s.write(BODIES, [{ ts: T0 + 1, method: 'GET', url: 'http://api.test/a/1', status: 200, response_body: 'ok' }], 1);
    const all = await readHarRecords(s.reader, spec);
    expect([all.network.length, all.bodies.length, all.dropped, all.partial]).toEqual([31, 1, 0, false]);
    const a = await readHarRecords(s.reader, { ...spec, url: '/a/' });
    expect(a.network.length).toBe(16);
    const tab = await readHarRecords(s.reader, { ...spec, tabs: [2] });
    expect(tab.network.map((h) => h.rec.url)).toEqual(['http://api.test/a/tab2']);
    const late = await readHarRecords(s.reader, { ...spec, sinceMs: T0 + 25 });
    expect(late.network.length).toBe(6);
    const capped = await readHarRecords(s.reader, { ...spec, maxEntries: 5 });
    expect(capped.network.map((h) => h.rec.ts)).toEqual([T0 + 26, T0 + 27, T0 + 28, T0 + 29, T0 + 100]);
    expect(capped.dropped).toBe(26);
    const fromOrd = await readHarRecords(s.reader, { ...spec, from: [0, 28, 1, 0, 0, 0, 0] });
    expect([fromOrd.network.length, fromOrd.bodies.length]).toEqual([3, 0]);
    const har = await buildHar(all.network, all.bodies, opts);
    await valid(har.text);
    expect(har.entries).toBe(31);
  });
});
