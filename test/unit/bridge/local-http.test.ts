/**
 * The bridge's HTTP/1.1 client (src/bridge/local-http.ts) against a real TCP server that writes
 * answers byte for byte as the test says: framing (Content-Length, chunked with extensions and
 * trailers, to the close, none), every split of an answer across reads, multi-byte text split
 * mid-character, kept sockets, concurrent requests, time-outs, aborts, and what it refuses.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalHttp } from '../../../src/bridge/local-http.js';

type Handler = (req: string, sock: Socket) => void;

let server: Server | undefined;
let clients: LocalHttp[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server that hands each complete request (head + content-length body) to `h`. */
async function serve(h: Handler): Promise<{ port: number; connections: () => number }> {
  let conns = 0;
  server = createServer((sock) => {
    conns++;
    let buf = '';
    sock.setEncoding('latin1');
    sock.on('error', () => undefined);
    sock.on('data', (d: string) => {
      buf += d;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const req = buf.slice(0, end + 4 + len);
        buf = buf.slice(end + 4 + len);
        h(req, sock);
      }
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  return { port: typeof addr === 'object' && addr ? addr.port : 0, connections: () => conns };
}

function client(port: number, o?: { keepIdleMs?: number; maxSockets?: number }): LocalHttp {
  const c = new LocalHttp(port, o);
  clients.push(c);
  return c;
}

/** writes `bytes` in pieces cut at `cuts`, each in a read of its own */
function writeCut(sock: Socket, bytes: Buffer, cuts: number[]): void {
  let at = 0;
  const pieces = [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length].map((c) => {
    const p = bytes.subarray(at, c);
    at = c;
    return p;
  });
  let i = 0;
  const next = (): void => {
    if (i >= pieces.length) return;
    sock.write(pieces[i++]!);
    setTimeout(next, 1);
  };
  next();
}

const TEXT = 'héllo → wörld 🌍 done';

describe('LocalHttp', () => {
  it('reads a Content-Length answer and a chunked one (extensions, trailers) cut at every byte', async () => {
    const body = Buffer.from(TEXT);
    const lengthAnswer = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Twice: a\r\nx-twice: b\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
    const half = body.length >> 1;
    const chunked = Buffer.concat([
      Buffer.from(`HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n${half.toString(16)};ext=1\r\n`),
      body.subarray(0, half),
      Buffer.from(`\r\n${(body.length - half).toString(16)}\r\n`),
      body.subarray(half),
      Buffer.from('\r\n0\r\nX-Trailer: t\r\n\r\n'),
    ]);
    for (const [answer, status] of [
      [lengthAnswer, 200],
      [chunked, 201],
    ] as const) {
      for (let cut = 1; cut < answer.length; cut += 3) {
        const { port } = await serve((_req, sock) => writeCut(sock, answer, [cut, cut + 1]));
        const c = client(port);
        const a = await c.request({ method: 'POST', path: '/x', body: '{}' });
        expect(a.status).toBe(status);
        expect(await a.text(1024)).toBe(TEXT);
        if (status === 200) expect(a.headers['x-twice']).toBe('a, b');
        c.close();
        await new Promise<void>((r) => server!.close(() => r()));
        server = undefined;
      }
    }
  });

  it('keeps its socket between requests, opens more for concurrent ones, and drops one idle too long', async () => {
    const { port, connections } = await serve((req, sock) => {
      const n = /x-n: (\d+)/.exec(req)![1]!;
      // the second of two concurrent requests is answered first
      setTimeout(() => sock.write(`HTTP/1.1 200 OK\r\ncontent-length: ${n.length}\r\n\r\n${n}`), n === '1' ? 30 : 1);
    });
    const c = client(port, { keepIdleMs: 200 });
    for (let i = 0; i < 3; i++) expect(await (await c.request({ method: 'GET', path: '/', headers: { 'x-n': '7' } })).text(100)).toBe('7');
    expect(connections()).toBe(1);
    const [a, b] = await Promise.all([c.request({ method: 'GET', path: '/', headers: { 'x-n': '1' } }), c.request({ method: 'GET', path: '/', headers: { 'x-n': '2' } })]);
    expect([await a.text(10), await b.text(10)]).toEqual(['1', '2']);
    expect(connections()).toBe(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(await (await c.request({ method: 'GET', path: '/', headers: { 'x-n': '3' } })).text(10)).toBe('3');
    expect(connections()).toBe(3);
  });

  it('streams a body as it arrives and ends it at the close when nothing frames it', async () => {
    const { port } = await serve((_req, sock) => {
      sock.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: 1\n\n');
      setTimeout(() => sock.write('data: 2\n\n'), 20);
      setTimeout(() => sock.end(), 40);
    });
    const a = await client(port).request({ method: 'GET', path: '/s' });
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => a.read({ data: (t) => got.push(t), end: resolve, fail: reject }));
    expect(got.join('')).toBe('data: 1\n\ndata: 2\n\n');
    expect(got.length).toBeGreaterThanOrEqual(2);
  });

  it('a body cut off mid-way fails its reader; the next request opens a new socket and works', async () => {
    let first = true;
    const { port } = await serve((_req, sock) => {
      if (first) {
        first = false;
        sock.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly some');
        setTimeout(() => sock.destroy(), 10);
      } else sock.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    const c = client(port);
    const a = await c.request({ method: 'GET', path: '/' });
    await expect(a.text(1000)).rejects.toThrow(/closed the connection/);
    expect(await (await c.request({ method: 'GET', path: '/' })).text(10)).toBe('ok');
  });

  it('time-out before the head, abort before and after it, refused connection: each rejects with its reason', async () => {
    const { port } = await serve((req, sock) => {
      if (req.includes('/slow')) return;
      if (req.includes('/stream')) sock.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n');
    });
    const c = client(port);
    await expect(c.request({ method: 'GET', path: '/slow', timeoutMs: 50 })).rejects.toThrow('no answer within 50 ms');
    const ac = new AbortController();
    const p = c.request({ method: 'GET', path: '/slow', signal: ac.signal });
    setTimeout(() => ac.abort(new Error('cancelled by the agent')), 20);
    await expect(p).rejects.toThrow('cancelled by the agent');
    const ac2 = new AbortController();
    const s = await c.request({ method: 'GET', path: '/stream', signal: ac2.signal });
    const text = s.text(100);
    setTimeout(() => ac2.abort(new Error('cancelled mid-body')), 20);
    await expect(text).rejects.toThrow('cancelled mid-body');
    const aborted = new AbortController();
    aborted.abort(new Error('already'));
    await expect(c.request({ method: 'GET', path: '/', signal: aborted.signal })).rejects.toThrow('already');
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    await expect(client(port).request({ method: 'GET', path: '/' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('refuses what is not HTTP, a head over its bound, a bad chunk size, bytes after the answer, a body over the caller\'s bound', async () => {
    const answers: Record<string, string> = {
      '/nothttp': 'SSH-2.0-OpenSSH\r\n\r\n',
      '/bigchunk': 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      '/extra': 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokEXTRA',
      '/long': `HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n${'x'.repeat(5000)}`,
      '/badlen': 'HTTP/1.1 200 OK\r\ncontent-length: -3\r\n\r\n',
    };
    const { port } = await serve((req, sock) => {
      const path = /^GET (\S+)/.exec(req)![1]!;
      if (path === '/hugehead') {
        sock.write('HTTP/1.1 200 OK\r\n');
        for (let i = 0; i < 100; i++) sock.write(`x-pad-${i}: ${'p'.repeat(1000)}\r\n`);
        return;
      }
      sock.write(answers[path]!);
    });
    const c = client(port);
    await expect(c.request({ method: 'GET', path: '/nothttp' })).rejects.toThrow(/not an HTTP answer/);
    await expect(c.request({ method: 'GET', path: '/hugehead' })).rejects.toThrow(/head is over/);
    await expect(c.request({ method: 'GET', path: '/badlen' })).rejects.toThrow(/bad content-length/);
    await expect((await c.request({ method: 'GET', path: '/bigchunk' })).text(100)).rejects.toThrow(/bad chunk size/);
    const extra = await c.request({ method: 'GET', path: '/extra' });
    expect(await extra.text(100)).toBe('ok');
    await expect((await c.request({ method: 'GET', path: '/long' })).text(1000)).rejects.toThrow('answer over 1000 bytes');
    await expect(c.request({ method: 'GET', path: '/', headers: { 'x-evil': 'a\r\nx-injected: 1' } })).rejects.toThrow(/line break/);
    // and it still works after all that
    answers['/fine'] = 'HTTP/1.1 204 No Content\r\n\r\n';
    const fine = await c.request({ method: 'GET', path: '/fine' });
    expect(fine.status).toBe(204);
    expect(await fine.text(10)).toBe('');
  });
});
