/**
 * A record schema compiled, once, into plain checks: the hot path's validator. zod's own parse of
 * a record cost ~0.5 µs of the worker's ~4.5 µs a record (issue 17: its payload objects, issue
 * lists and per-check closures); these checks read the schema's definition and do the same tests
 * with no allocation but the output.
 *
 * The zod schema stays the specification. A compiled check answers only "this record passes, and
 * here is exactly what zod's parse would return" (same keys, same order, unknown keys stripped),
 * or NOT_SURE; a record that is not sure goes through zod, which rejects it with its own message,
 * or — if the check was only cautious (an `undefined` value, an odd prototype) — accepts it.
 * A schema using anything not handled here compiles to null: that kind keeps plain zod.
 * test/unit/wire/fast-check.test.ts feeds both the same valid, invalid and fuzzed records.
 */
import type { z } from 'zod';

/** "Ask zod": the record may be invalid, or valid in a way these checks do not model. */
export const NOT_SURE: unique symbol = Symbol('not sure');

/** value → zod's output for it, or NOT_SURE */
export type FastCheck = (v: unknown) => unknown;

/**
 * The keys a check took from its input since the caller last zeroed it, at every depth, the own
 * keys of what a `z.unknown()` passed through included. A sure check's output holds its input's
 * values unchanged, less the keys it stripped; so when this equals the key-value pairs the input's
 * msgpack maps declared, nothing was stripped and no key was repeated (a repeated key decodes
 * once): the ingest worker may store the record as its bytes (process.ts, "verbatim").
 */
export const taken = { keys: 0 };

/** the own keys of every object in a value, at every depth */
export function keysUnder(v: object): number {
  let n = 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const e: unknown = v[i];
      if (typeof e === 'object' && e !== null) n += keysUnder(e);
    }
    return n;
  }
  const o = v as Record<string, unknown>;
  for (const key in o) {
    n++;
    const e = o[key];
    if (typeof e === 'object' && e !== null) n += keysUnder(e);
  }
  return n;
}

interface Def {
  type: string;
  checks?: Array<{ _zod: { def: CheckDef } }>;
  innerType?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, unknown>;
  values?: unknown[];
  element?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: unknown;
  coerce?: boolean;
}

interface CheckDef {
  check: string;
  minimum?: number;
  maximum?: number;
  format?: string;
  value?: number;
  inclusive?: boolean;
}

function defOf(s: z.ZodType): Def {
  return (s as unknown as { _zod: { def: Def } })._zod.def;
}

/** The length bounds of a string or array; null when it has any other check. */
function lengthBounds(d: Def): { min: number; max: number } | null {
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const c of d.checks ?? []) {
    const cd = c._zod.def;
    if (cd.check === 'max_length' && typeof cd.maximum === 'number') max = Math.min(max, cd.maximum);
    else if (cd.check === 'min_length' && typeof cd.minimum === 'number') min = Math.max(min, cd.minimum);
    else return null;
  }
  return { min, max };
}

/** A number's checks as one predicate; null when it has one not handled here. */
function numberTest(d: Def): ((n: number) => boolean) | null {
  let safeInt = false;
  let lo = Number.NEGATIVE_INFINITY;
  let loIn = true;
  let hi = Number.POSITIVE_INFINITY;
  let hiIn = true;
  for (const c of d.checks ?? []) {
    const cd = c._zod.def;
    if (cd.check === 'number_format' && cd.format === 'safeint') safeInt = true;
    else if (cd.check === 'greater_than' && typeof cd.value === 'number') (lo = cd.value), (loIn = cd.inclusive === true);
    else if (cd.check === 'less_than' && typeof cd.value === 'number') (hi = cd.value), (hiIn = cd.inclusive === true);
    else return null;
  }
  // zod's number refuses NaN and ±Infinity before any check
  return (n) => Number.isFinite(n) && (!safeInt || Number.isSafeInteger(n)) && (loIn ? n >= lo : n > lo) && (hiIn ? n <= hi : n < hi);
}

/**
 * Checks whose NOT_SURE means exactly "zod fails" (primitives): only these may be options of a
 * union, since a union takes the first option that passes.
 */
function exactPrimitive(s: z.ZodType): FastCheck | null {
  const d = defOf(s);
  if (d.coerce) return null;
  switch (d.type) {
    case 'string': {
      const b = lengthBounds(d);
      if (!b) return null;
      const { min, max } = b;
      return (v) => (typeof v === 'string' && v.length >= min && v.length <= max ? v : NOT_SURE);
    }
    case 'number': {
      const ok = numberTest(d);
      if (!ok) return null;
      return (v) => (typeof v === 'number' && ok(v) ? v : NOT_SURE);
    }
    case 'boolean':
      return (d.checks ?? []).length ? null : (v) => (typeof v === 'boolean' ? v : NOT_SURE);
    case 'enum': {
      if ((d.checks ?? []).length || !d.entries) return null;
      const values = new Set(Object.values(d.entries));
      return (v) => (values.has(v) ? v : NOT_SURE);
    }
    case 'literal': {
      if ((d.checks ?? []).length || !d.values) return null;
      const values = new Set(d.values);
      return (v) => (values.has(v) ? v : NOT_SURE);
    }
    default:
      return null;
  }
}

/**
 * The schema as a fast check, or null when it uses something not modelled here. `count`: the check
 * adds the keys it takes to `taken` (a record's check; a frame's would walk every record for nothing).
 */
export function compileCheck(s: z.ZodType, count = false): FastCheck | null {
  const d = defOf(s);
  const prim = exactPrimitive(s);
  if (prim) return prim;
  if ((d.checks ?? []).length && d.type !== 'array') return null;
  switch (d.type) {
    case 'unknown':
      return count
        ? (v) => {
            if (typeof v === 'object' && v !== null) taken.keys += keysUnder(v);
            return v;
          }
        : (v) => v;
    case 'optional': {
      const inner = d.innerType && compileCheck(d.innerType, count);
      // an explicit undefined: zod keeps the key with undefined; rare enough to leave to zod
      return inner ? (v) => (v === undefined ? NOT_SURE : inner(v)) : null;
    }
    case 'nullable': {
      const inner = d.innerType && compileCheck(d.innerType, count);
      return inner ? (v) => (v === null ? null : inner(v)) : null;
    }
    case 'union': {
      const options = (d.options ?? []).map(exactPrimitive);
      if (options.length === 0 || options.some((o) => o === null)) return null;
      const opts = options as FastCheck[];
      return (v) => {
        for (const o of opts) {
          const r = o(v);
          if (r !== NOT_SURE) return r;
        }
        return NOT_SURE;
      };
    }
    case 'array': {
      const b = lengthBounds(d);
      const el = d.element && compileCheck(d.element, count);
      if (!b || !el) return null;
      const { min, max } = b;
      return (v) => {
        if (!Array.isArray(v) || v.length < min || v.length > max) return NOT_SURE;
        // zod returns a new array of its elements' outputs
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const r = el(v[i]);
          if (r === NOT_SURE) return NOT_SURE;
          out[i] = r;
        }
        return out;
      };
    }
    case 'record':
      return recordCheck(d, count);
    case 'object':
      return objectCheck(d, count);
    default:
      return null;
  }
}

/** z.record(string, V): a plain object's own keys in order, each value through V. */
function recordCheck(d: Def, count: boolean): FastCheck | null {
  const key = d.keyType && exactPrimitive(d.keyType);
  const val = d.valueType && compileCheck(d.valueType, count);
  if (!key || !val || defOf(d.keyType!).type !== 'string') return null;
  return (v) => {
    // a plain object from JSON or msgpack; anything else (class instances, null prototypes) to zod
    if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) return NOT_SURE;
    const src = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(src)) {
      if (k === '__proto__' || k === 'constructor' || key(k) === NOT_SURE) return NOT_SURE;
      const r = val(src[k]);
      if (r === NOT_SURE) return NOT_SURE;
      out[k] = r;
      if (count) taken.keys++;
    }
    return out;
  };
}

/**
 * A JS expression that is true when `x` passes `s`, for the primitives whose output is their input
 * (inlined into an object's check); null for anything else.
 */
function inlineTest(s: z.ZodType): ((x: string) => string) | null {
  const d = defOf(s);
  if (d.coerce) return null;
  if (d.type === 'string') {
    const b = lengthBounds(d);
    if (!b) return null;
    const { min, max } = b;
    return (x) => `(typeof ${x} === 'string'${min > 0 ? ` && ${x}.length >= ${min}` : ''}${Number.isFinite(max) ? ` && ${x}.length <= ${max}` : ''})`;
  }
  if (d.type === 'number' && (d.checks ?? []).length === 0) return (x) => `(typeof ${x} === 'number' && Number.isFinite(${x}))`;
  if (d.type === 'boolean' && (d.checks ?? []).length === 0) return (x) => `(typeof ${x} === 'boolean')`;
  return null;
}

/**
 * z.object(shape), unknown keys stripped: the output holds the shape's keys present, in shape order.
 * Generated code, not a loop over the keys: each field a named store at its own site, so every
 * output object of a kind is built along one chain of hidden classes (a keyed store per field
 * measured slower than zod's own generated parser; zod generates its parser the same way).
 */
function objectCheck(d: Def, count: boolean): FastCheck | null {
  const tally = count ? ' T.keys++;' : '';
  if (!d.shape || d.catchall !== undefined) return null;
  const checks: FastCheck[] = [];
  const body: string[] = [`if (typeof v !== 'object' || v === null || Array.isArray(v)) return NS;`, 'const o = {};', 'let x;', 'let r;'];
  for (const k of Object.keys(d.shape)) {
    if (k === '__proto__') return null;
    const field = d.shape[k]!;
    const fd = defOf(field);
    const optional = fd.type === 'optional';
    const inner = optional ? fd.innerType! : field;
    const key = JSON.stringify(k);
    const inline = inlineTest(inner);
    let take: string;
    if (inline) take = `if (!${inline('x')}) return NS; o[${key}] = x;${tally}`;
    else {
      const c = compileCheck(inner, count);
      if (!c) return null;
      checks.push(c);
      take = `r = c[${checks.length - 1}](x); if (r === NS) return NS; o[${key}] = r;${tally}`;
    }
    // an explicit undefined in an optional field: zod keeps the key; left to zod (see NOT_SURE)
    body.push(`if (${key} in v) { x = v[${key}];${optional ? ' if (x === undefined) return NS;' : ''} ${take} }${optional ? '' : ' else return NS;'}`);
  }
  body.push('return o;');
  // the source is built from the schema's own keys (JSON-quoted) and constants, never from input
  const make = new Function('NS', 'c', 'T', `return function check(v) {\n${body.join('\n')}\n};`) as (ns: symbol, c: FastCheck[], t: typeof taken) => FastCheck;
  return make(NOT_SURE, checks, taken);
}
