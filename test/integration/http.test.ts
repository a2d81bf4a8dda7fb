import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import type { App } from '../../src/app.js';
import { expectBalanced, readAll } from '../helpers/accounting.js';
import { logRecord } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';

let server: App;

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

function call(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    // a server that refuses early may reset the socket while we still write
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

beforeAll(async () => {
  server = await startTestServer({ limits: { max_http_body: 1024 * 1024 } });
});
afterAll(async () => {
  await server.close();
});

describe('POST telemetry routes', () => {
  it('stores /logs entries and answers with counts', async () => {
    const marker = `http-${Date.now()}`;
    const r = await call('POST', '/logs', JSON.stringify({ entries: [logRecord(1, { message: marker }), logRecord(2, { message: marker })] }));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ received: 2, accepted: 2, rejected: 0 });
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    expect(readAll(server, 'logs').filter((x) => x.message === marker)).toHaveLength(2);
    await expectBalanced(server);
  });

  it('stores every other route', async () => {
    const ts = Date.now();
    const routes: Array<[string, Record<string, unknown>]> = [
      ['/network', { entries: [{ ts, method: 'GET', url: 'http://127.0.0.1/a', status: 200, duration: 3 }] }],
      ['/network-bodies', { bodies: [{ ts, method: 'POST', url: 'http://127.0.0.1/b', status: 201, response_body: '{}' }] }],
      ['/websocket-events', { events: [{ ts, event: 'open', id: 'c1', url: 'ws://127.0.0.1/x' }] }],
      ['/enhanced-actions', { actions: [{ ts, type: 'click', url: 'http://127.0.0.1/' }] }],
      ['/performance-snapshots', { snapshots: [{ ts, url: 'http://127.0.0.1/', timing: { ttfb: 1, fcp: 2, lcp: 3, cls: 0, inp: null, dom_content_loaded: 4, load: 5 } }] }],
    ];
    for (const [route, body] of routes) {
      const r = await call('POST', route, JSON.stringify(body));
      expect(r.status, route).toBe(200);
      expect(r.body.accepted, route).toBe(1);
    }
    await expectBalanced(server);
  });

  it('answers 400 with reasons for truncated JSON and for invalid records', async () => {
    const bad = await call('POST', '/logs', '{"entries": [{"ts": 1, "lev');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('bad_json');
    const invalid = await call('POST', '/logs', JSON.stringify({ entries: [{ ts: 1, level: 'nope', message: 3 }] }));
    expect(invalid.status).toBe(400);
    expect(invalid.body.rejected).toBe(1);
    expect((invalid.body.errors as unknown[]).length).toBe(1);
    const shape = await call('POST', '/logs', JSON.stringify({ items: [] }));
    expect(shape.status).toBe(400);
    expect(shape.body.error).toBe('invalid_body');
    await expectBalanced(server);
  });

  it('answers 413 for a 12 MB body without reading it', async () => {
    const big = Buffer.alloc(12 * 1024 * 1024, 0x20);
    const r = await call('POST', '/logs', big).catch((e: NodeJS.ErrnoException) => ({ status: e.code === 'EPIPE' || e.code === 'ECONNRESET' ? 413 : 0, headers: {}, body: {} }));
    expect(r.status).toBe(413);
    expect(server.stats.httpStatus['413']).toBeGreaterThanOrEqual(1);
  });

  it('answers 415 for a wrong content type', async () => {
    const r = await call('POST', '/logs', 'a=b', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(415);
    expect(r.body.error).toBe('bad_content_type');
  });

  it('refuses a foreign Host and a foreign Origin with 403, accepts our extension', async () => {
    const body = JSON.stringify({ entries: [logRecord(1)] });
    expect((await call('POST', '/logs', body, { host: 'evil.example' })).status).toBe(403);
    expect((await call('POST', '/logs', body, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await call('GET', '/health', undefined, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await call('POST', '/logs', body, { origin: EXTENSION_ORIGIN })).status).toBe(200);
  });

  it('answers 404 for unknown routes and 405 for wrong methods', async () => {
    expect((await call('GET', '/nope')).status).toBe(404);
    expect((await call('GET', '/logs')).status).toBe(405);
  });
});

describe('/ci-result and /health', () => {
  it('keeps CI results and updates the same commit+status in place', async () => {
    const r1 = await call('POST', '/ci-result', JSON.stringify({ status: 'failure', source: 'gh', commit: 'abc', failures: [{ name: 't1', message: 'boom' }] }));
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ ok: true, updated: false });
    const r2 = await call('POST', '/ci-result', JSON.stringify({ status: 'failure', source: 'gh', commit: 'abc', summary: 'again' }));
    expect(r2.body).toMatchObject({ ok: true, updated: true });
    expect(server.ci.list().filter((c) => c.commit === 'abc')).toHaveLength(1);
    const bad = await call('POST', '/ci-result', JSON.stringify({ status: 'meh' }));
    expect(bad.status).toBe(400);
  });

  it('reports version, uptime, per-kind counters and ring use, pool and producers', async () => {
    const r = await call('GET', '/health');
    expect(r.status).toBe(200);
    const b = r.body as Record<string, any>;
    expect(b.version).toEqual(expect.any(String));
    expect(b.uptime_s).toEqual(expect.any(Number));
    for (const k of ['logs', 'network', 'network_bodies', 'ws_events', 'actions', 'perf']) {
      expect(b.kinds[k]).toMatchObject({ received: expect.any(Number), stored: expect.any(Number), rejected: expect.any(Number), dropped: expect.any(Object) });
      expect(b.kinds[k].ring).toMatchObject({ used_bytes: expect.any(Number), capacity_bytes: expect.any(Number) });
    }
    expect(b.pool).toMatchObject({ threads: 1, queue_depth: expect.any(Number) });
    expect(Array.isArray(b.extension.producers)).toBe(true);
  });
});
