/**
 * Noise rules as the read engine sees them: plain data (field and pattern) that crosses to the
 * scan worker. The client state that owns the rules builds on these, not the other way round,
 * so the engine knows nothing of who asked.
 */
import { compileUserPattern } from '../domain/patterns/user-pattern.js';
import type { Rec } from './scan.js';

export type NoiseField = 'message' | 'source' | 'url';

export interface NoiseSpec {
  id: string;
  field: NoiseField;
  pattern: string;
}

/** What a rule's field names in a record: a url rule also sees request_url. */
export function noiseField(rec: Rec, field: NoiseField): unknown {
  return field === 'url' ? (rec.url ?? rec.request_url) : rec[field];
}

/** The rules every client starts with: ours, written to be linear, so they run on V8 (10× faster than RE2 here). */
export const BUILTIN_NOISE: ReadonlyArray<readonly [NoiseField, string]> = [
  ['url', 'favicon\\.ico'],
  ['message', '^\\[(?:vite|HMR|webpack|WDS)\\]'],
  ['message', 'Download the React DevTools'],
  ['message', 'DevTools failed to load source map'],
];
const BUILTIN_SOURCES = new Set(BUILTIN_NOISE.map(([, p]) => p));
export const MAX_NOISE_PATTERN = 200;

/** What a noise rule tests a field with: a RegExp for our own rules, the linear-time engine for anyone else's. */
export interface NoiseTest {
  test(s: string): boolean;
}

/**
 * Compiled noise patterns, kept across queries: an agent's rules rarely change between calls.
 * A user's pattern goes through the user-pattern door (RE2 semantics, linear time), so a rule that
 * would backtrack for ever on V8 costs one pass here (#18 item 1); it throws `pattern_refused`.
 */
const compiled = new Map<string, NoiseTest>();
const MAX_COMPILED = 512;

export function compileNoise(pattern: string): NoiseTest {
  let re = compiled.get(pattern);
  if (!re) {
    re = BUILTIN_SOURCES.has(pattern) ? new RegExp(pattern, 'i') : compileUserPattern(pattern, 'noise', MAX_NOISE_PATTERN);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** A test that hides a record when a rule matches, counting per rule id into `hits`. */
export function hider(noise: NoiseSpec[], hits: Record<string, number>): (r: Rec) => boolean {
  const rules = noise.map((n) => ({ id: n.id, field: n.field, re: compileNoise(n.pattern) }));
  return (rec) => {
    for (const r of rules) {
      const v = noiseField(rec, r.field);
      if (typeof v === 'string' && r.re.test(v)) {
        hits[r.id] = (hits[r.id] ?? 0) + 1;
        return true;
      }
    }
    return false;
  };
}
