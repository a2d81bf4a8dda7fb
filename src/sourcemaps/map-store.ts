/**
 * The parsed maps, and the one place positions are resolved. Bounded everywhere: maps kept by
 * count and by bytes (least recently used go first), a miss remembered for a while so a page
 * whose dev server serves no map is not asked again on every error, a map kept no longer than
 * `maxAgeMs` (a dev server rebuilds the bundle under the same URL), at most `concurrency` loads at
 * once and `maxQueue` waiting (the rest are dropped and counted). Runs in the source-map worker
 * (workers/sourcemaps.ts): parsing a map of megabytes must never pause the thread that writes MCP.
 */
import { isIgnored, originalPositionFor, sourceContentFor, type TraceMap } from '@jridgewell/trace-mapping';
import { loadMap, MapMiss, MISS_REASONS, type LoadLimits, type LoadedMap, type MissReason } from './load.js';
import { frameKey, type Frame } from './stack.js';

export interface MapStoreLimits extends LoadLimits {
  cacheMaps: number;
  cacheBytes: number;
  missTtlMs: number;
  maxAgeMs: number;
  concurrency: number;
  maxQueue: number;
}

/** An original position: the file as the map names it (cleaned for reading), 1-based line and column. */
export interface Resolved {
  file: string;
  line: number;
  column: number;
  /** the original source line, trimmed and cut, when the map carries sourcesContent */
  code?: string;
  /** a library frame (the map's ignore list, or node_modules): shown after the app's own */
  ignored?: true;
}

export interface FrameAnswer {
  key: string;
  to?: Resolved;
  miss?: MissReason | 'unmapped' | 'dropped';
}

export interface MapStoreStats {
  maps: number;
  bytes: number;
  loads: number;
  hits: number;
  evicted: number;
  dropped: number;
  misses: Record<string, number>;
}

interface Ready {
  map: TraceMap;
  bytes: number;
  at: number;
}

/** misses remembered at once; past it the oldest is forgotten */
const MAX_MISSES = 1000;
const CODE_CHARS = 160;
const FILE_CHARS = 200;

export class MapStore {
  private readonly ready = new Map<string, Ready>();
  private readonly missed = new Map<string, { until: number; reason: MissReason }>();
  private readonly loading = new Map<string, Promise<Ready | MissReason>>();
  private readonly waiting: Array<() => void> = [];
  private active = 0;
  private bytes = 0;
  private readonly counts = { loads: 0, hits: 0, evicted: 0, dropped: 0, misses: Object.fromEntries(MISS_REASONS.map((r) => [r, 0])) as Record<MissReason, number> };

  constructor(
    private readonly l: MapStoreLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Each frame's original position, or why there is none. */
  async resolve(frames: readonly Frame[], pageUrl: string | undefined): Promise<FrameAnswer[]> {
    const byUrl = new Map<string, Promise<Ready | MissReason | 'dropped'>>();
    for (const f of frames) if (!byUrl.has(f.url)) byUrl.set(f.url, this.mapOf(f.url, pageUrl));
    const out: FrameAnswer[] = [];
    for (const f of frames) {
      const m = await byUrl.get(f.url)!;
      const key = frameKey(f);
      if (typeof m === 'string') out.push({ key, miss: m });
      else {
        const to = position(m.map, f);
        out.push(to ? { key, to } : { key, miss: 'unmapped' });
      }
    }
    return out;
  }

  /** Forget every map and miss (source maps were switched off, or back on). */
  clear(): void {
    this.ready.clear();
    this.missed.clear();
    this.bytes = 0;
  }

  stats(): MapStoreStats {
    return { maps: this.ready.size, bytes: this.bytes, loads: this.counts.loads, hits: this.counts.hits, evicted: this.counts.evicted, dropped: this.counts.dropped, misses: { ...this.counts.misses } };
  }

  private mapOf(url: string, pageUrl: string | undefined): Promise<Ready | MissReason | 'dropped'> {
    const t = this.now();
    const r = this.ready.get(url);
    if (r && t - r.at <= this.l.maxAgeMs) {
      // least recently used last out: a hit moves to the end
      this.ready.delete(url);
      this.ready.set(url, r);
      this.counts.hits++;
      return Promise.resolve(r);
    }
    if (r) this.drop(url);
    const miss = this.missed.get(url);
    if (miss && miss.until > t) return Promise.resolve(miss.reason);
    if (miss) this.missed.delete(url);
    const inFlight = this.loading.get(url);
    if (inFlight) return inFlight;
    if (this.active >= this.l.concurrency && this.waiting.length >= this.l.maxQueue) {
      this.counts.dropped++;
      return Promise.resolve('dropped');
    }
    const p = this.load(url, pageUrl).finally(() => this.loading.delete(url));
    this.loading.set(url, p);
    return p;
  }

  private async load(url: string, pageUrl: string | undefined): Promise<Ready | MissReason> {
    await this.slot();
    this.counts.loads++;
    let got: LoadedMap | MissReason;
    try {
      got = await loadMap(url, pageUrl, this.l);
    } catch (e) {
      got = e instanceof MapMiss ? e.reason : 'fetch_failed';
    } finally {
      this.release();
    }
    if (typeof got === 'string') {
      this.counts.misses[got]++;
      // a refusal depends on the page that asked, not on the script: another page may be allowed
      if (got !== 'refused') this.remember(url, got);
      return got;
    }
    if (got.bytes > this.l.cacheBytes) {
      this.counts.misses.too_large++;
      this.remember(url, 'too_large');
      return 'too_large';
    }
    const entry: Ready = { map: got.map, bytes: got.bytes, at: this.now() };
    this.ready.set(url, entry);
    this.bytes += entry.bytes;
    while (this.ready.size > this.l.cacheMaps || this.bytes > this.l.cacheBytes) {
      const oldest = this.ready.keys().next().value as string;
      this.drop(oldest);
      this.counts.evicted++;
    }
    return entry;
  }

  /** A load slot: taken at once while fewer than `concurrency` run, else handed over by the one that ends. */
  private async slot(): Promise<void> {
    if (this.active < this.l.concurrency) {
      this.active++;
      return;
    }
    await new Promise<void>((go) => this.waiting.push(go));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  private remember(url: string, reason: MissReason): void {
    this.missed.delete(url);
    this.missed.set(url, { until: this.now() + this.l.missTtlMs, reason });
    if (this.missed.size > MAX_MISSES) this.missed.delete(this.missed.keys().next().value as string);
  }

  private drop(url: string): void {
    const r = this.ready.get(url);
    if (!r) return;
    this.ready.delete(url);
    this.bytes -= r.bytes;
  }
}

/** V8's columns are 1-based, a map's 0-based; lines are 1-based in both. */
function position(map: TraceMap, f: Frame): Resolved | undefined {
  const o = originalPositionFor(map, { line: f.line, column: f.column - 1 });
  if (o.source === null || o.line === null || o.column === null) return undefined;
  const code = lineOf(sourceContentFor(map, o.source), o.line);
  const ignored = isIgnored(map, o.source) || o.source.includes('/node_modules/');
  return { file: readable(o.source), line: o.line, column: o.column + 1, ...(code ? { code } : {}), ...(ignored ? { ignored: true as const } : {}) };
}

/** `webpack://app/./src/cart.ts`, `../src/cart.ts` → `src/cart.ts`: the path a developer opens. */
export function readable(source: string): string {
  const s = source
    .replace(/^webpack:\/\/[^/]*\//, '')
    .replace(/^(?:\.\.?\/)+/, '');
  return s.length > FILE_CHARS ? `…${s.slice(-FILE_CHARS)}` : s;
}

function lineOf(content: string | null, line: number): string | undefined {
  if (!content) return undefined;
  let at = 0;
  for (let i = 1; i < line; i++) {
    at = content.indexOf('\n', at);
    if (at < 0) return undefined;
    at++;
  }
  const end = content.indexOf('\n', at);
  const text = content.slice(at, end < 0 ? undefined : end).trim();
  if (!text) return undefined;
  return text.length > CODE_CHARS ? `${text.slice(0, CODE_CHARS)}…` : text;
}

export { frameKey };
