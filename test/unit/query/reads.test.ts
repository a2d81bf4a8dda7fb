/** Issue 15: the reads the tools render from, run on a real store without a tool around them. */
import { describe, expect, it } from 'vitest';
import { KIND_COUNT, kindId, type Kind } from '../../../src/domain/kinds.js';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';
import { errorContext, failingEndpoints, findErrors, hitsBefore, lastPage, securityFindings, wsConnections, wsErrorsSince } from '../../../src/query/index.js';

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
