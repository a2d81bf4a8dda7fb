/**
 * The fetch adapter's streamed answers on a real uWS server, read off a raw socket: a POST whose
 * answer comes at once leaves as one write (headers, event and end: one wake-up of the bridge), a
 * POST still silent after PREFACE_MS gets an SSE comment so its client knows the stream is open,
 * and a long-lived GET stream gets that comment at once. A request's body reaches the handler
 * whole however it arrived, and not at all when its client left before it ended.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { serveFetch, type FetchHandler } from '../../../src/transport/fetch-adapter.js';
import { uws, type us_listen_socket } from '../../../src/transport/uws.js';

const listening: us_listen_socket[] = [];
afterEach(() => {
  for (const s of listening.splice(0)) uws.us_listen_socket_close(s);
});

function serve(handler: FetchHandler, bodyOnExchange = false): Promise<number> {
  const app = uws.App();
  app.any('/*', (res, req) => serveFetch(res, req, { handler, maxBody: 1 << 20, bodyOnExchange }));
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (s) => {
      if (!s) return reject(new Error('listen failed'));
      listening.push(s);
      resolve(uws.us_socket_local_port(s));
    });
  });
}

function sse(events: Array<{ afterMs: number; text?: string }>): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      for (const e of events) {
        if (e.afterMs) await new Promise((r) => setTimeout(r, e.afterMs));
        if (e.text === undefined) return c.close();
        c.enqueue(enc.encode(e.text));
      }
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

/** sends a raw request and collects every chunk the socket delivered, with its time */
function raw(port: number, request: string, untilMs: number): Promise<Array<{ at: number; text: string }>> {
  return new Promise((resolve, reject) => {
    const chunks: Array<{ at: number; text: string }> = [];
    const t0 = performance.now();
    const s = connect(port, '127.0.0.1', () => s.write(request));
    s.on('data', (d) => {
      chunks.push({ at: performance.now() - t0, text: d.toString('utf8') });
      if (chunks.map((c) => c.text).join('').includes('0\r\n\r\n')) s.destroy();
    });
    s.on('error', reject);
    s.on('close', () => resolve(chunks));
    setTimeout(() => s.destroy(), untilMs);
  });
}

const post = (body: string) => `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;

describe('serveFetch streamed answers', () => {
  it('a POST answered at once: headers, the event and the end in one write, no comment', async () => {
    const port = await serve(async () => sse([{ afterMs: 0, text: 'event: message\ndata: {"ok":1}\n\n' }, { afterMs: 0 }]));
    const chunks = await raw(port, post('{}'), 2000);
    const all = chunks.map((c) => c.text).join('');
    expect(all).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(all).toContain('data: {"ok":1}');
    expect(all).toContain('0\r\n\r\n');
    expect(all).not.toContain(': open');
    expect(chunks.length).toBe(1);
  });

  it('a POST silent for longer than the preface wait says its stream is open first', async () => {
    const port = await serve(async () => sse([{ afterMs: 300, text: 'data: late\n\n' }, { afterMs: 0 }]));
    const chunks = await raw(port, post('{}'), 3000);
    expect(chunks[0]!.text).toContain(': open');
    expect(chunks[0]!.text).not.toContain('data: late');
    expect(chunks[0]!.at).toBeLessThan(250);
    expect(chunks.map((c) => c.text).join('')).toContain('data: late');
  });

  it('a GET stream (pushes) says it is open at once', async () => {
    const port = await serve(async () => sse([{ afterMs: 400, text: 'data: push\n\n' }, { afterMs: 0 }]));
    const chunks = await raw(port, 'GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n', 3000);
    expect(chunks[0]!.text).toContain(': open');
    expect(chunks[0]!.at).toBeLessThan(300);
  });
});

describe('serveFetch request bodies', () => {
  /** a handler that answers with what it read of the body */
  const echo: FetchHandler = async (req) => new Response(JSON.stringify({ method: req.method, body: await req.text() }), { headers: { 'content-type': 'application/json' } });

  /** writes `parts` one after the other, `gapMs` apart, and collects the answer */
  function sendParts(port: number, parts: string[], gapMs: number, closeAfterMs?: number): Promise<string> {
    return new Promise((resolve, reject) => {
      let got = '';
      const s = connect(port, '127.0.0.1', async () => {
        for (const p of parts) {
          s.write(p);
          await new Promise((r) => setTimeout(r, gapMs));
        }
        if (closeAfterMs !== undefined) setTimeout(() => s.destroy(), closeAfterMs);
      });
      s.on('data', (d) => {
        got += d.toString('utf8');
        if (/\r\n\r\n\{.*\}$/s.test(got)) s.destroy();
      });
      s.on('error', reject);
      s.on('close', () => resolve(got));
      setTimeout(() => s.destroy(), 3000);
    });
  }

  it('the handler reads the whole body, however it arrived: at once, in pieces, or empty', async () => {
    const port = await serve(echo);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'observe', arguments: { what: 'errors', pad: 'x'.repeat(5000) } } });
    const whole = await sendParts(port, [post(body)], 0);
    expect(JSON.parse(whole.slice(whole.indexOf('\r\n\r\n') + 4))).toEqual({ method: 'POST', body });
    const head = post(body).slice(0, post(body).length - body.length);
    const pieces = await sendParts(port, [head, body.slice(0, 100), body.slice(100, 3000), body.slice(3000)], 30);
    expect(JSON.parse(pieces.slice(pieces.indexOf('\r\n\r\n') + 4))).toEqual({ method: 'POST', body });
    const empty = await sendParts(port, ['POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n'], 0);
    expect(JSON.parse(empty.slice(empty.indexOf('\r\n\r\n') + 4))).toEqual({ method: 'POST', body: '' });
  });

  it('with bodyOnExchange the body is on the exchange, whole however it arrived, and the Request has none', async () => {
    const port = await serve(async (req, ex) => new Response(JSON.stringify({ method: req.method, request: req.body === null, body: ex.body ? Buffer.from(ex.body).toString('utf8') : null }), { headers: { 'content-type': 'application/json' } }), true);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'observe', arguments: { what: 'errors', pad: 'é'.repeat(3000) } } });
    const head = post(body).slice(0, post(body).length - body.length).replace(/content-length: \d+/, `content-length: ${Buffer.byteLength(body)}`);
    const pieces = await sendParts(port, [head, body.slice(0, 100), body.slice(100, 2000), body.slice(2000)], 30);
    expect(JSON.parse(pieces.slice(pieces.indexOf('\r\n\r\n') + 4))).toEqual({ method: 'POST', request: true, body });
    const get = await sendParts(port, ['GET /x HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n'], 0);
    expect(JSON.parse(get.slice(get.indexOf('\r\n\r\n') + 4))).toEqual({ method: 'GET', request: true, body: null });
  });

  it('a request whose client leaves before its body ended never reaches the handler', async () => {
    let called = 0;
    const port = await serve(async (req) => {
      called++;
      return echo(req, undefined as never);
    });
    const body = '{"a":"' + 'y'.repeat(2000) + '"}';
    const head = post(body).slice(0, post(body).length - body.length);
    await sendParts(port, [head, body.slice(0, 500)], 20, 50);
    await new Promise((r) => setTimeout(r, 100));
    expect(called).toBe(0);
    // the server goes on answering
    const after = await sendParts(port, [post('{}')], 0);
    expect(after).toContain('"body":"{}"');
    expect(called).toBe(1);
  });
});
