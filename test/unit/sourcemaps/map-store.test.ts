/**
 * The resolver's core against a real dev server (serve.ts) and a real esbuild bundle: positions,
 * every way a map can be named, every way a server can fail, and the cache's bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MapStore, readable, type MapStoreLimits } from '../../../src/sourcemaps/map-store.js';
import { decodeDataUrl, mapComment } from '../../../src/sourcemaps/load.js';
import type { Frame } from '../../../src/sourcemaps/stack.js';
import { AUDIT_LINE, THROW_LINE } from '../../helpers/bundled-app.js';
import { devServer, type DevServer } from './serve.js';

const LIMITS: MapStoreLimits = { timeoutMs: 2000, maxScriptBytes: 100_000, maxMapBytes: 100_000, cacheMaps: 8, cacheBytes: 10_000_000, missTtlMs: 30_000, maxAgeMs: 120_000, concurrency: 2, maxQueue: 8 };

let s: DevServer;
let frames: { thrown: Frame[]; logged: Frame[]; awaited: Frame[] };
beforeAll(async () => {
  s = await devServer();
  frames = await s.frames('/app.js');
});
afterAll(() => s.close());

/** the same generated positions, as if the bundle were served at `path` */
const at = (path: string, f: Frame): Frame => ({ ...f, url: `${s.base}${path}` });
const page = (): string => `${s.base}/cart`;

describe('resolving a minified bundle with its source map', () => {
  it('an exception, its caller, a console.error call site and an awaited caller: original file, line, column and source line', async () => {
    const m = new MapStore(LIMITS);
    const [top, caller] = await m.resolve(frames.thrown, page());
    expect(top!.to).toEqual({ file: 'src/cart.ts', line: THROW_LINE, column: 11, code: "throw new Error('empty cart');" });
    expect(caller!.to).toMatchObject({ file: 'src/main.ts', line: 10, code: 'total([]);' });
    const [logged] = await m.resolve(frames.logged, page());
    expect(logged!.to).toMatchObject({ file: 'src/cart.ts', line: AUDIT_LINE });
    expect(logged!.to!.code).toContain("console.error('cart audit failed'");
    const awaited = await m.resolve(frames.awaited, page());
    expect(awaited[1]!.to).toMatchObject({ file: 'src/main.ts', line: 5, code: 'return total(items);' });
    // one script, one map: fetched once, then read from the cache
    expect(s.hits.get('/app.js')).toBe(1);
    expect(s.hits.get('/app.js.map')).toBe(1);
    expect(m.stats()).toMatchObject({ maps: 1, loads: 1 });
  });

  it('a map inline as a data: URL, and one named by the SourceMap header', async () => {
    const m = new MapStore(LIMITS);
    const inl = await s.frames('/inline.js', s.inline.js);
    expect((await m.resolve(inl.thrown, page()))[0]!.to).toMatchObject({ file: 'src/cart.ts', line: THROW_LINE });
    expect((await m.resolve([at('/hdr.js', frames.thrown[0]!)], page()))[0]!.to).toMatchObject({ file: 'src/cart.ts', line: THROW_LINE });
    expect(s.hits.get('/maps/hdr.map')).toBe(1);
  });

  it('a position the map does not cover is unmapped, not an error', async () => {
    const m = new MapStore(LIMITS);
    expect(await m.resolve([{ url: `${s.base}/app.js`, line: 99, column: 1 }], page())).toEqual([{ key: `${s.base}/app.js:99:1`, miss: 'unmapped' }]);
  });
});

describe('what goes wrong is a miss with a reason, remembered for miss_ttl', () => {
  const miss = async (m: MapStore, path: string): Promise<string | undefined> => (await m.resolve([at(path, frames.thrown[0]!)], page()))[0]!.miss;

  it('no map, a map that is not JSON or not version 3, an inline map that does not decode, a 404', async () => {
    const m = new MapStore(LIMITS);
    expect(await miss(m, '/nomap.js')).toBe('no_map');
    expect(await miss(m, '/badmap.js')).toBe('bad_map');
    expect(await miss(m, '/notv3.js')).toBe('bad_map');
    expect(await miss(m, '/badinline.js')).toBe('bad_map');
    expect(await miss(m, '/gone.js')).toBe('http_error');
    expect(m.stats().misses).toMatchObject({ no_map: 1, bad_map: 3, http_error: 1 });
  });

  it('a script or a map over its byte bound (by Content-Length, or while it streams)', async () => {
    const m = new MapStore({ ...LIMITS, maxScriptBytes: 50_000, maxMapBytes: 50_000 });
    expect(await miss(m, '/big.js')).toBe('too_large');
    expect(await miss(m, '/bigmap.js')).toBe('too_large');
    // an inline map is bounded too
    expect(() => decodeDataUrl(`data:application/json;base64,${'A'.repeat(80_000)}`, 50_000)).toThrow(/over 50000/);
  });

  it('a server that never answers, or stalls mid-body, is cut at the timeout', async () => {
    const m = new MapStore({ ...LIMITS, timeoutMs: 300 });
    const t0 = Date.now();
    expect(await miss(m, '/slow.js')).toBe('timeout');
    expect(await miss(m, '/stall.js')).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('a redirect is refused, and so is a map on another origin than its script', async () => {
    const m = new MapStore(LIMITS);
    const maps = s.hits.get('/app.js.map') ?? 0;
    const scripts = s.hits.get('/app.js') ?? 0;
    expect(await miss(m, '/redirect.js')).toBe('fetch_failed');
    expect(await miss(m, '/othermap.js')).toBe('refused');
    // the redirect was not followed and the other origin's map was not asked
    expect(s.hits.get('/app.js')).toBe(scripts);
    expect(s.hits.get('/app.js.map')).toBe(maps);
  });

  it('a stack naming a public host or another origin than the page is never fetched (SSRF)', async () => {
    const m = new MapStore(LIMITS);
    const before = [...s.hits.values()].reduce((a, b) => a + b, 0);
    expect((await m.resolve([{ url: 'http://169.254.169.254/latest/meta-data', line: 1, column: 1 }], page()))[0]!.miss).toBe('refused');
    expect((await m.resolve([at('/app.js', frames.thrown[0]!)], 'https://evil.example/'))[0]!.miss).toBe('refused');
    expect((await m.resolve([{ ...frames.thrown[0]!, url: frames.thrown[0]!.url.replace('127.0.0.1', 'localhost') }], page()))[0]!.miss).toBe('refused');
    expect([...s.hits.values()].reduce((a, b) => a + b, 0)).toBe(before);
  });

  it('a miss is not asked again before miss_ttl, and is after it', async () => {
    let now = 1_000;
    const m = new MapStore({ ...LIMITS, missTtlMs: 5_000 }, () => now);
    s.hits.delete('/nomap.js');
    await miss(m, '/nomap.js');
    await miss(m, '/nomap.js');
    expect(s.hits.get('/nomap.js')).toBe(1);
    now += 5_001;
    await miss(m, '/nomap.js');
    expect(s.hits.get('/nomap.js')).toBe(2);
  });
});

describe('the cache is bounded', () => {
  it('by count: the least recently used map goes first', async () => {
    const m = new MapStore({ ...LIMITS, cacheMaps: 2 });
    for (const p of ['/n1.js', '/n2.js', '/n1.js', '/n3.js']) await m.resolve([at(p, frames.thrown[0]!)], page());
    expect(m.stats()).toMatchObject({ maps: 2, evicted: 1 });
    const loads = m.stats().loads;
    await m.resolve([at('/n1.js', frames.thrown[0]!)], page());
    expect(m.stats().loads).toBe(loads);
    await m.resolve([at('/n2.js', frames.thrown[0]!)], page());
    expect(m.stats().loads).toBe(loads + 1);
  });

  it('by bytes: maps past cache_bytes push the oldest out; a map bigger than the whole cache is a miss', async () => {
    const size = s.app.map.length;
    const m = new MapStore({ ...LIMITS, cacheBytes: Math.floor(size * 2.5) });
    for (const p of ['/n4.js', '/n5.js', '/n6.js']) await m.resolve([at(p, frames.thrown[0]!)], page());
    expect(m.stats()).toMatchObject({ maps: 2, bytes: 2 * size, evicted: 1 });
    const tiny = new MapStore({ ...LIMITS, cacheBytes: size - 1 });
    expect((await tiny.resolve([at('/n7.js', frames.thrown[0]!)], page()))[0]!.miss).toBe('too_large');
    expect(tiny.stats().maps).toBe(0);
  });

  it('by age: a map is fetched again after max_age (a rebuilt bundle keeps its URL)', async () => {
    let now = 0;
    const m = new MapStore({ ...LIMITS, maxAgeMs: 10_000 }, () => now);
    await m.resolve([at('/n8.js', frames.thrown[0]!)], page());
    now = 9_000;
    await m.resolve([at('/n8.js', frames.thrown[0]!)], page());
    expect(s.hits.get('/n8.js')).toBe(1);
    now = 20_000;
    await m.resolve([at('/n8.js', frames.thrown[0]!)], page());
    expect(s.hits.get('/n8.js')).toBe(2);
  });

  it('loads at once are capped, waiting ones too; the rest are dropped and counted, and asked again later', async () => {
    const m = new MapStore({ ...LIMITS, timeoutMs: 1000, concurrency: 1, maxQueue: 1 });
    // the first holds the only slot (a server that never answers), the second waits, the third is dropped
    const all = await Promise.all(['/slow.js', '/n9.js', '/n10.js'].map((p) => m.resolve([at(p, frames.thrown[0]!)], page())));
    expect(all.map((r) => r[0]!.miss ?? 'resolved')).toEqual(['timeout', 'resolved', 'dropped']);
    expect(m.stats().dropped).toBe(1);
    expect((await m.resolve([at('/n10.js', frames.thrown[0]!)], page()))[0]!.to).toBeDefined();
  });

  it('one load per script however many frames and callers ask at once', async () => {
    const m = new MapStore(LIMITS);
    await Promise.all([1, 2, 3, 4].map(() => m.resolve([at('/n11.js', frames.thrown[0]!), at('/n11.js', frames.thrown[1]!)], page())));
    expect(s.hits.get('/n11.js')).toBe(1);
  });
});

describe('small parts', () => {
  it('the last sourceMappingURL comment wins; files are shown as a developer opens them', () => {
    expect(mapComment('a\n//# sourceMappingURL=old.map\nb\n//# sourceMappingURL=new.map\n')).toBe('new.map');
    expect(mapComment('x\n/*# sourceMappingURL=app.css.map */')).toBe('app.css.map');
    expect(mapComment('var s = "no comment";')).toBeUndefined();
    expect(readable('webpack://my-app/./src/cart.ts')).toBe('src/cart.ts');
    expect(readable('webpack:///./src/cart.ts')).toBe('src/cart.ts');
    expect(readable('../../src/cart.ts')).toBe('src/cart.ts');
    expect(readable(`/${'a/'.repeat(200)}x.ts`).length).toBe(201);
  });
});
