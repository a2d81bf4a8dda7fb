/**
 * Main's side with the real source-map worker (dist/workers/sourcemaps.js: `pnpm build` first):
 * reads never wait beyond their bound, lookups are synchronous, off means nothing is fetched, a
 * frame the host guard refuses costs no round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceMaps } from '../../../src/sourcemaps/index.js';
import type { MapStoreLimits } from '../../../src/sourcemaps/map-store.js';
import { THROW_LINE } from '../../helpers/bundled-app.js';
import { waitFor } from '../../helpers/wait-for.js';
import { devServer, type DevServer } from './serve.js';

const LIMITS: MapStoreLimits = { timeoutMs: 2000, maxScriptBytes: 1_000_000, maxMapBytes: 1_000_000, cacheMaps: 8, cacheBytes: 10_000_000, missTtlMs: 30_000, maxAgeMs: 120_000, concurrency: 2, maxQueue: 8 };

let s: DevServer;
let stack: string;
const open: SourceMaps[] = [];
const maps = (enabled = true, waitMs = 1500): SourceMaps => {
  const m = new SourceMaps({ enabled, waitMs, limits: LIMITS });
  open.push(m);
  return m;
};
beforeAll(async () => {
  s = await devServer();
  const f = await s.frames('/app.js');
  stack = ['Error: empty cart', ...f.thrown.map((x) => `    at ${x.url}:${x.line}:${x.column}`)].join('\n');
});
afterAll(async () => {
  await Promise.all(open.map((m) => m.close()));
  await s.close();
});

describe('SourceMaps (main side, real worker)', () => {
  it('settle waits for the map, then lookup answers synchronously: the top frame first, the rest in order', async () => {
    const m = maps();
    const rec = { stack, url: `${s.base}/cart` };
    expect(m.lookup(rec)).toBeUndefined();
    await m.settle([rec]);
    const r = m.lookup(rec)!;
    expect(r.top).toBe(0);
    expect(r.frames[0]!.to).toEqual({ file: 'src/cart.ts', line: THROW_LINE, column: 11, code: "throw new Error('empty cart');" });
    expect(r.frames[1]!.to).toMatchObject({ file: 'src/main.ts' });
    expect(m.stats()).toMatchObject({ enabled: true, worker: true, maps: 1 });
  });

  it('a frame the host guard refuses (a public origin, another origin than the page) is neither sent to the worker nor waited for', async () => {
    const m = maps(true, 5000);
    const recs = [
      { stack: 'Error: x\n    at f (https://cdn.example.test/lib-1a2b.js:1:10)', url: `${s.base}/cart` },
      { stack: 'Error: z\n    at h (https://app.example.test/assets/index-9f.js:12:3)', url: 'https://app.example.test/' },
      { stack: `Error: y\n    at g (${s.base.replace('127.0.0.1', 'localhost')}/app.js:1:10)`, url: `${s.base}/` },
    ];
    const t0 = performance.now();
    await m.settle(recs);
    // not the settle bound's 5 s (generous for a loaded CI machine, far from what waiting would take)
    expect(performance.now() - t0).toBeLessThan(1000);
    for (const r of recs) expect(m.lookup(r)).toBeUndefined();
    expect(m.stats()).toMatchObject({ worker: false, requests: 0, refused_here: 3 });
    // a frame of the page's own dev server in the same read is still asked for and waited on
    const own = { stack, url: `${s.base}/cart` };
    await m.settle([...recs, own]);
    expect(m.lookup(own)!.frames[0]!.to).toMatchObject({ file: 'src/cart.ts' });
    expect(m.stats()).toMatchObject({ worker: true, requests: 1, refused_here: 6 });
    // the guard's verdict is kept per script and page together: the same script is refused under
    // another origin's page, and asked for under its own
    const other = `Error: w\n    at k (${s.base}/other.js:1:10)`;
    await m.settle([{ stack: other, url: 'https://elsewhere.example.test/' }]);
    expect(m.stats()).toMatchObject({ requests: 1, refused_here: 7 });
    await m.settle([{ stack: other, url: `${s.base}/` }]);
    expect(m.stats()).toMatchObject({ requests: 2, refused_here: 7 });
  });

  it('warm returns at once and the position arrives in the background; a console call site resolves too', async () => {
    const m = maps();
    const f = await s.frames('/n20.js', s.app.js.replace('sourceMappingURL=app.js.map', 'sourceMappingURL=/app.js.map'));
    const rec = { source: `audit (${f.logged[0]!.url}:${f.logged[0]!.line}:${f.logged[0]!.column})`, url: `${s.base}/` };
    const t0 = performance.now();
    m.warm(rec);
    // returned before anything was resolved: the load goes on in the background
    expect(m.lookup(rec)).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(1000);
    const r = await waitFor('the console call site resolved', () => m.lookup(rec));
    expect(r.frames[0]!.to).toMatchObject({ file: 'src/cart.ts', line: 9 });
  });

  it('settle gives up at its bound when the dev server does not answer; nothing resolved, nothing thrown', async () => {
    const m = maps(true, 200);
    const rec = { stack: 'Error: x\n    at f (' + `${s.base}/slow.js:1:10)`, url: `${s.base}/` };
    const t0 = Date.now();
    await m.settle([rec]);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(m.lookup(rec)).toBeUndefined();
  });

  it('a frame that cannot be resolved stays as it is: no map, a public host, a non-http frame', async () => {
    const m = maps();
    const recs = [
      { stack: `Error\n    at f (${s.base}/nomap.js:1:5)`, url: `${s.base}/` },
      { stack: 'Error\n    at f (https://cdn.example.com/app.js:1:5)', url: 'https://cdn.example.com/' },
      { stack: 'Error\n    at f (<anonymous>)\n    at chrome-extension://abc/inject.js:1:1' },
    ];
    await m.settle(recs);
    for (const r of recs) expect(m.lookup(r)).toBeUndefined();
    expect(s.hits.get('/nomap.js')).toBe(1);
  });

  it('off: nothing is fetched and nothing resolved is shown; on again: resolved afresh', async () => {
    const m = maps(false);
    const rec = { stack: stack.replaceAll('/app.js', '/n21.js'), url: `${s.base}/` };
    await m.settle([rec]);
    m.warm(rec);
    expect(m.lookup(rec)).toBeUndefined();
    expect(s.hits.get('/n21.js')).toBeUndefined();
    expect(m.stats()).toMatchObject({ enabled: false, worker: false });
    m.setEnabled(true);
    await m.settle([rec]);
    expect(m.lookup(rec)!.frames[0]!.to?.file).toBe('src/cart.ts');
    m.setEnabled(false);
    expect(m.lookup(rec)).toBeUndefined();
  });
});
