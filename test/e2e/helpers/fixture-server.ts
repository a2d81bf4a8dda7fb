/** Serves test/fixtures/app over HTTP on 127.0.0.1 with a few API routes and a WebSocket echo. */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

const APP = fileURLToPath(new URL('../../fixtures/app/', import.meta.url));
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export interface Fixture {
  port: number;
  origin: string;
  close(): Promise<void>;
}

/** `extra`: more files by path, [content type, body] (a bundle and its source map) */
export async function startFixture(extra: Record<string, [string, Buffer]> = {}): Promise<Fixture> {
  const files: Record<string, [string, Buffer]> = {
    ...extra,
    '/': ['text/html; charset=utf-8', readFileSync(APP + 'index.html')],
    '/submitted': ['text/html; charset=utf-8', readFileSync(APP + 'index.html')],
    '/app.js': ['text/javascript', readFileSync(APP + 'app.js')],
    '/pixel.png': ['image/png', PIXEL],
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const json = (status: number, body: unknown, extra: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...extra });
      res.end(JSON.stringify(body));
    };
    if (path === '/api/ok') return json(200, { ok: true, items: [1, 2, 3] });
    if (path === '/api/xhr') return json(200, { via: 'xhr' });
    if (path === '/api/fail') {
      req.resume();
      return json(500, { error: 'fixture_failure', detail: 'the database is on fire' }, { 'set-cookie': 'sid=fixture-cookie-secret' });
    }
    const f = files[path];
    if (!f) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': f[0], 'cache-control': 'no-store' });
    res.end(f[1]);
  });
  const wss = new WebSocketServer({ server, path: '/echo' });
  wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
