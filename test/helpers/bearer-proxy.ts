/**
 * A reverse proxy on 127.0.0.1 that adds `Authorization: Bearer <token>` and is otherwise
 * invisible, for clients that cannot send headers of their own (the MCP conformance CLI) to
 * reach a daemon's /mcp without any test-only path in the product.
 *
 * Invisible means the daemon sees what a client talking to it directly would send: a Host or
 * Origin naming the proxy's own loopback authority is rewritten to the daemon's (what a direct
 * client would have named), every other value (a foreign Host, an evil Origin) passes untouched
 * so the daemon's guard judges it; bodies and answers stream both ways unbuffered (SSE), status
 * and headers (Mcp-Session-Id, Last-Event-ID, …) pass as they are. An Authorization the client
 * sent itself is replaced: the proxy speaks for it.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

export interface BearerProxy {
  readonly port: number;
  /** requests forwarded so far */
  readonly forwarded: number;
  close(): Promise<void>;
}

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

export async function startBearerProxy(target: { port: number; token: string }): Promise<BearerProxy> {
  const sockets = new Set<Socket>();
  let port = 0;
  let forwarded = 0;

  /** `name:proxyPort` → `name:daemonPort` for loopback names; anything else as it came */
  const mapAuthority = (value: string): string => {
    for (const name of LOOPBACK) if (value.toLowerCase() === `${name}:${port}`) return `${name}:${target.port}`;
    return value;
  };
  const mapHeaders = (h: IncomingHttpHeaders): IncomingHttpHeaders => {
    const out: IncomingHttpHeaders = { ...h, authorization: `Bearer ${target.token}` };
    if (typeof h.host === 'string') out.host = mapAuthority(h.host);
    if (typeof h.origin === 'string') {
      const m = /^(https?:\/\/)(.*)$/i.exec(h.origin);
      if (m) out.origin = `${m[1]}${mapAuthority(m[2] as string)}`;
    }
    return out;
  };

  const server: Server = createServer((req, res) => {
    forwarded++;
    const up = httpRequest({ host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: mapHeaders(req.headers) }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      // an SSE answer's status line and first events must reach the client now, not at the end
      res.flushHeaders();
      upRes.pipe(res);
      upRes.on('error', () => res.destroy());
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    // the client went away (closed its SSE stream): so does the upstream exchange
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  server.on('connection', (s) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as { port: number }).port;

  return {
    get port() {
      return port;
    },
    get forwarded() {
      return forwarded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // open SSE streams would hold server.close() forever
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
