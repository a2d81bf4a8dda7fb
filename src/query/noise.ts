/**
 * Noise rules as the read engine sees them: plain data (field and pattern) that crosses to the
 * scan worker. The client state that owns the rules builds on these, not the other way round,
 * so the engine knows nothing of who asked.
 */
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

/**
 * Compiled noise patterns, kept across queries: an agent's rules rarely change between calls.
 * Patterns were checked for safety when the rule was added; they are bounded in number and length.
 */
const compiled = new Map<string, RegExp>();
const MAX_COMPILED = 512;

function compile(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    re = new RegExp(pattern, 'i');
    compiled.set(pattern, re);
  }
  return re;
}

/** A test that hides a record when a rule matches, counting per rule id into `hits`. */
export function hider(noise: NoiseSpec[], hits: Record<string, number>): (r: Rec) => boolean {
  const rules = noise.map((n) => ({ id: n.id, field: n.field, re: compile(n.pattern) }));
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
