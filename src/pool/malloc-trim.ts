/**
 * Giving the C allocator's free pages back to the OS: glibc's malloc_trim(0), through a 14 KB
 * N-API addon built from native/malloc-trim.c (committed prebuilt for linux-x64; nothing to
 * compile at install).
 *
 * Why: an idle daemon's RSS after a burst grew with the number of workers the pool grew to. Each
 * ingest worker thread that ends leaves its share of glibc's heaps behind as free chunks (~2 MB a
 * worker: 80–84 MB over ring data at four workers against 73–77 at one). free() returns only the
 * top of a heap; the pages of chunks in the middle stay resident until malloc_trim walks them, and
 * no allocator setting did it without costing ingest throughput (PERFORMANCE.md, "Idle RSS").
 * The pool calls this once a shrink's or a recycle's workers have ended (ingest-pool.ts): under a
 * millisecond on main each time (0.4–0.7 ms measured), a few times per burst.
 *
 * Elsewhere (macOS, musl, arm64) there is no binary or no malloc_trim: `mallocTrim()` answers
 * undefined and `mallocTrimSupport()` says why. The addon is loaded with RTLD_NOW, so a libc
 * without malloc_trim fails at load, never at a call.
 */
import { loadAddon } from './native-addon.js';

interface TrimAddon {
  trim(): boolean;
}

/** Whether this process can trim, and if not, why (for /health). */
export type MallocTrimSupport = { available: true } | { available: false; reason: string };

let addon: TrimAddon | null | undefined;
let support: MallocTrimSupport | undefined;

function load(): TrimAddon | null {
  if (addon !== undefined) return addon;
  const r = loadAddon<TrimAddon>('malloc-trim', ['trim']);
  if ('addon' in r) {
    addon = r.addon;
    support = { available: true };
  } else {
    addon = null;
    // musl and other libcs: no malloc_trim to bind
    support = { available: false, reason: r.missing ? r.reason : `malloc_trim addon did not load: ${r.reason}` };
  }
  return addon;
}

/** Loads the addon on first use (a trim, /health, the doctor), not at start; mapping its 14 KB costs no measurable RSS. */
export function mallocTrimSupport(): MallocTrimSupport {
  load();
  return support!;
}

/**
 * malloc_trim(0), timed and weighed: the bytes of RSS it gave back (the resident set before less
 * after, never negative), or undefined where it cannot run.
 */
export function mallocTrim(): { releasedBytes: number; ms: number } | undefined {
  const a = load();
  if (!a) return undefined;
  const before = process.memoryUsage.rss();
  const t0 = performance.now();
  a.trim();
  const ms = performance.now() - t0;
  return { releasedBytes: Math.max(0, before - process.memoryUsage.rss()), ms };
}
