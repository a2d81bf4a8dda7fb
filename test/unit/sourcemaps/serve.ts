/**
 * A developer's dev server for the resolver's tests: a real HTTP server on 127.0.0.1 serving an
 * esbuild bundle and its map, plus the ways a server goes wrong (no map, bad map, too big, slow,
 * stalled, redirecting, pointing elsewhere). Counts requests per path.
 */
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import { bundleApp, type BundledApp } from '../../helpers/bundled-app.js';
import { parseStack, type Frame } from '../../../src/sourcemaps/stack.js';

export interface DevServer {
  base: string;
  port: number;
  app: BundledApp;
  inline: BundledApp;
  hits: Map<string, number>;
  /** frames of the bundle's errors at `path` (a copy of app.js served there): the sync throw, the console.error call site and the awaited caller */
  frames(path: string, js?: string): Promise<{ thrown: Frame[]; logged: Frame[]; awaited: Frame[] }>;
  close(): Promise<void>;
}

const stripComment = (js: string): string => js.replace(/\/\/# sourceMappingURL=.*\s*$/, '');

export async function devServer(): Promise<DevServer> {
  const app = await bundleApp();
  const inline = await bundleApp({ inline: true, name: 'inline', dir: app.dir });
  const hits = new Map<string, number>();
  const open = new Set<ServerResponse>();
  let base = '';
  const js = (res: ServerResponse, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(200, { 'content-type': 'text/javascript', ...headers });
    res.end(body);
  };
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/app.js': (_q, r) => js(r, app.js),
    '/app.js.map': (_q, r) => js(r, app.map),
    '/copy.js': (_q, r) => js(r, app.js.replace('sourceMappingURL=app.js.map', 'sourceMappingURL=/app.js.map')),
    '/inline.js': (_q, r) => js(r, inline.js),
    '/hdr.js': (_q, r) => js(r, stripComment(app.js), { SourceMap: '/maps/hdr.map' }),
    '/maps/hdr.map': (_q, r) => js(r, app.map),
    '/nomap.js': (_q, r) => js(r, stripComment(app.js)),
    '/badmap.js': (_q, r) => js(r, `${stripComment(app.js)}\n//# sourceMappingURL=bad.map`),
    '/bad.map': (_q, r) => js(r, '{"version":3,"mappings":'),
    '/notv3.js': (_q, r) => js(r, `${stripComment(app.js)}\n//# sourceMappingURL=v2.map`),
    '/v2.map': (_q, r) => js(r, '{"version":2,"sources":[],"mappings":""}'),
    '/badinline.js': (_q, r) => js(r, `${stripComment(app.js)}\n//# sourceMappingURL=data:application/json;base64,bm90IGpzb24=`),
    '/big.js': (_q, r) => js(r, `${'/* pad */'.repeat(20_000)}\n${app.js}`),
    '/bigmap.js': (_q, r) => js(r, app.js.replace('sourceMappingURL=app.js.map', 'sourceMappingURL=big.map')),
    '/big.map': (_q, r) => {
      // no Content-Length: the bound must hold while the body streams
      r.writeHead(200, { 'content-type': 'application/json' });
      r.write(app.map.slice(0, -1));
      r.end(`,"x":"${'x'.repeat(200_000)}"}`);
    },
    '/slow.js': (_q, r) => {
      open.add(r);
    },
    '/stall.js': (_q, r) => {
      r.writeHead(200, { 'content-type': 'text/javascript' });
      r.write(app.js.slice(0, 100));
      open.add(r);
    },
    '/redirect.js': (_q, r) => {
      r.writeHead(302, { location: `${base}/app.js` });
      r.end();
    },
    '/othermap.js': (_q, r) => js(r, app.js.replace('sourceMappingURL=app.js.map', `sourceMappingURL=${base.replace('127.0.0.1', 'localhost')}/app.js.map`)),
    '/gone.js': (_q, r) => {
      r.writeHead(404);
      r.end();
    },
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path] ?? (path.startsWith('/n') && path.endsWith('.js') ? routes['/copy.js'] : undefined);
    if (route) route(req, res);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    base,
    port,
    app,
    inline,
    hits,
    async frames(path, code = app.js) {
      const logged: string[] = [];
      const context = vm.createContext({ console: { error: () => logged.push(new Error('call site').stack ?? '') } });
      new vm.Script(code, { filename: `${base}${path}` }).runInContext(context);
      const g = context as { App: { run(): void; checkout(items: number[]): Promise<number> } };
      let thrown = '';
      try {
        g.App.run();
      } catch (e) {
        thrown = (e as Error).stack ?? '';
      }
      const awaited = await g.App.checkout([]).then(
        () => '',
        (e: Error) => e.stack ?? '',
      );
      const mine = (s: string): Frame[] => parseStack(s).filter((f) => f.url === `${base}${path}`);
      // the console stub is the first frame; the caller's is the next one in the bundle
      return { thrown: mine(thrown), logged: mine(logged[0] ?? ''), awaited: mine(awaited) };
    },
    close: async () => {
      for (const r of open) r.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      // the bundle's sources and output: a temporary directory each server makes
      rmSync(app.dir, { recursive: true, force: true });
    },
  };
}
