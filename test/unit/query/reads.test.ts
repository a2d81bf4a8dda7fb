/** Issue 15: the reads the tools render from, run on a real store without a tool around them. */
import { describe, expect, it } from 'vitest';
import { KIND_COUNT, kindId, type Kind } from '../../../src/domain/kinds.js';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';
import { errorContext, failingEndpoints, findErrors, hitsBefore, lastPage, securityFindings, securityReport, wsConnections, wsErrorsSince } from '../../../src/query/index.js';

type Row = [Kind, Record<string, unknown>, number?];

/** One commit per row, in order; the third element is the client time (default: the row's index). */
function store(rows: Row[]): StoreReader {
  const buffers = allocateStore(new Array<number>(KIND_COUNT).fill(1024 * 1024));
  const writer = new StoreWriter(buffers, 1);
  rows.forEach(([kind, rec, t], i) => {
    const records = [{ kind: kindId(kind), clientTime: t ?? i, tab: 3, payload: Buffer.from(JSON.stringify(rec)) }];
    const received = new Array<number>(KIND_COUNT).fill(0);
    received[kindId(kind)] = 1;
    writer.commit({ recvTime: 1000 + i, records, received, rejected: [] });
  });
  return new StoreReader(buffers);
}

describe('query reads', () => {
  it('folds WebSocket events into connections, and picks the abnormal closes', async () => {
    const r = store([
      ['ws_events', { id: 'a', event: 'open', url: 'wss://x/a' }],
      ['ws_events', { id: 'a', event: 'message', direction: 'outgoing', data: 'hi' }],
      ['ws_events', { id: 'a', event: 'message', direction: 'incoming', data: 'yo' }],
      ['ws_events', { id: 'b', event: 'open', url: 'wss://x/b' }],
      ['ws_events', { id: 'b', event: 'close', code: 1006 }],
      ['ws_events', { id: 'a', event: 'close', code: 1000 }],
    ]);
    const conns = await wsConnections(r, 1000);
    expect(conns.get('a')).toMatchObject({ state: 'closed', code: 1000, in: 1, out: 1, url: 'wss://x/a', lastMsg: { outgoing: false, data: 'yo' } });
    expect(conns.get('b')).toMatchObject({ state: 'closed', code: 1006, in: 0, out: 0 });
    expect(wsErrorsSince(r, 0, 50, 1000).map((h) => h.rec.id)).toEqual(['b']);
  });

  it('names the last page reported, counts failing endpoints, and finds security problems', async () => {
    const r = store([
      ['network', { type: 'network', method: 'GET', url: 'https://app/api/users/12?token=abc', status: 500, page_url: 'https://app/' }],
      ['network', { type: 'network', method: 'GET', url: 'https://app/api/users/13', status: 200, page_url: 'https://app/' }],
      ['network', { type: 'network', method: 'GET', url: 'http://cdn/x.js', status: 404, page_url: 'https://app/home' }],
    ]);
    expect(lastPage(r)).toMatchObject({ url: 'https://app/home', tab: 3 });
    const failing = await failingEndpoints(r, 0, Number.MAX_SAFE_INTEGER, 1000, 100);
    expect([...failing]).toEqual([['GET app/api/users/<n> → 500', 1], ['GET cdn/x.js → 404', 1]]);
    const findings = securityFindings(r, 1000);
    expect(findings[0]).toMatchObject({ severity: 'high', what: 'credential-like query parameter in URL' });
    expect(findings.map((f) => f.what)).toContain('mixed content (http request from an https page)');
    expect(securityFindings(r, 1000, 'cdn').map((f) => f.severity)).toEqual(['medium']);
  });

  it('reports document headers and cookie attributes from the extension, latest first, with findings', () => {
    const doc = (url: string, headers: Record<string, string>, t: number): Row => ['network_bodies', { ts: t, method: 'GET', url, status: 200, document: true, response_headers: headers }, t];
    const r = store([
      doc('https://app.test/', {}, 1),
      doc('https://app.test/', { 'content-security-policy': "script-src 'self' 'unsafe-inline'; frame-ancestors 'self'", 'x-content-type-options': 'nosniff', 'content-security-policy-report-only': "default-src 'none'" }, 2),
      doc('http://plain.test/a', { 'x-frame-options': 'DENY', 'x-content-type-options': 'sniff-away' }, 3),
      ['network_bodies', { ts: 4, method: 'POST', url: 'https://app.test/api/login', status: 200, cookies: [{ name: 'sid', secure: false, http_only: true, same_site: 'none', expiry: 'session' }, { name: 'gone', secure: false, http_only: false, expiry: 'deletion' }] }, 4],
      ['network_bodies', { ts: 5, method: 'POST', url: 'https://app.test/api/login', status: 200, cookies: [{ name: 'sid', secure: true, http_only: true, same_site: 'lax', expiry: 'persistent' }] }, 5],
    ]);
    const rep = securityReport(r, 1000);
    expect(rep.documents.map((d) => [d.url, d.loads])).toEqual([['http://plain.test/a', 1], ['https://app.test/', 2]]);
    const app = rep.documents[1]!;
    // the latest load counts: CSP present, frame-ancestors standing in for X-Frame-Options
    expect(Object.keys(app.present)).toEqual(['content-security-policy', 'x-content-type-options', 'content-security-policy-report-only']);
    expect(app.missing).toEqual(['strict-transport-security', 'referrer-policy', 'permissions-policy', 'cross-origin-opener-policy', 'cross-origin-embedder-policy']);
    // over http HSTS is no gap
    expect(rep.documents[0]!.missing).not.toContain('strict-transport-security');
    expect(rep.cookies.map((c) => [c.name, c.secure, c.same_site, c.count, c.where])).toEqual([['sid', true, 'lax', 2, 'app.test/api/login'], ['gone', false, undefined, 1, 'app.test/api/login']]);
    const what = rep.findings.map((f) => `${f.severity} ${f.what} ${f.where}${f.count > 1 ? ` ×${f.count}` : ''}`);
    expect(what).toContain('medium document without Content-Security-Policy app.test/');
    expect(what).toContain("low Content-Security-Policy allows 'unsafe-inline' scripts app.test/");
    expect(what).toContain('low https document without Strict-Transport-Security app.test/ ×2');
    expect(what).toContain('low document without X-Content-Type-Options: nosniff plain.test/a');
    expect(what).toContain('medium cookie sid without Secure app.test/api/login');
    expect(what).toContain('medium cookie sid SameSite=None without Secure (browsers refuse it) app.test/api/login');
    // a deletion carries no risk; the X-Frame-Options there is enough
    expect(what.filter((w) => w.includes('gone'))).toEqual([]);
    expect(what.filter((w) => w.includes('X-Frame-Options') && w.includes('plain.test'))).toEqual([]);
    // url narrows both the findings and the listings
    expect(securityReport(r, 1000, 'plain.test').cookies).toEqual([]);
    expect(securityFindings(r, 1000, 'api/login').every((f) => f.what.startsWith('cookie sid'))).toBe(true);
  });

  it('finds errors with their context, and pages back from a cursor newest first', async () => {
    const r = store([
      ['actions', { type: 'click', selector: '#buy' }, 100],
      ['logs', { level: 'warn', message: 'slow' }, 101],
      ['logs', { level: 'info', message: 'chatter' }, 102],
      ['logs', { level: 'error', message: 'boom' }, 103],
      ['logs', { level: 'error', message: 'again' }, 104],
    ]);
    const found = await findErrors(r, { from: 0, limit: 1, maxScan: 1000, filter: { what: 'errors' } });
    expect(found.matched).toBe(2);
    expect(found.hits.map((h) => h.rec.message)).toEqual(['boom']);
    // one error kept: the cursor resumes right after it, so the second is not skipped
    expect(found.next).toBe(found.hits[0]!.ord + 1);
    const context = errorContext(r, found.hits[0]!, 5000);
    expect(context.map((h) => h.rec.message ?? (h.rec as { selector?: string }).selector)).toEqual(['#buy', 'slow']);
    const back = hitsBefore(r, { kinds: [kindId('logs')], end: [found.hits[0]!.ord + 1], filter: { what: 'logs' }, maxScan: 1000, budgetMs: 100 });
    expect(back.map((h) => h.rec.message)).toEqual(['boom', 'chatter', 'slow']);
  });
});
