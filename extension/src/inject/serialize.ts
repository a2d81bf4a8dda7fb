/**
 * Turns any page value into bounded JSON data without running page code we do not have to and
 * without throwing (getters and proxies may). Limits are the issue's: depth ≤ 10, arrays ≤ 100,
 * objects ≤ 50 keys, strings ≤ 10 KB, one serialized argument ≤ 10 KB.
 */
import type { Json } from '../shared/protocol.js';

export const LIMITS = { depth: 10, array: 100, keys: 50, string: 10 * 1024, arg: 10 * 1024 } as const;

export function serializeArg(v: unknown): Json {
  let out: Json;
  try {
    out = walk(v, 0, new Set());
  } catch {
    return '[Unserializable]';
  }
  if (typeof out === 'string' || typeof out === 'number' || typeof out === 'boolean' || out === null) return out;
  const json = JSON.stringify(out);
  return json.length <= LIMITS.arg ? out : `${json.slice(0, LIMITS.arg)}…[truncated]`;
}

function str(s: string): string {
  return s.length <= LIMITS.string ? s : `${s.slice(0, LIMITS.string)}…[truncated]`;
}

function describeNode(n: Node): string {
  if (n.nodeType === 1) {
    const el = n as Element;
    let d = el.tagName.toLowerCase();
    if (el.id) d += `#${el.id}`;
    const cls = typeof el.className === 'string' ? el.className.trim() : '';
    if (cls) d += `.${cls.split(/\s+/).slice(0, 5).join('.')}`;
    return d;
  }
  if (n.nodeType === 3) return `#text "${(n.textContent ?? '').slice(0, 50)}"`;
  return n.nodeName;
}

function isNode(v: object): v is Node {
  // instanceof fails for nodes of other frames; nodeType + nodeName is how DevTools duck-types too
  return typeof (v as Node).nodeType === 'number' && typeof (v as Node).nodeName === 'string' && 'ownerDocument' in v;
}

function walk(v: unknown, depth: number, path: Set<object>): Json {
  switch (typeof v) {
    case 'string':
      return str(v);
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'boolean':
      return v;
    case 'undefined':
      return '[undefined]';
    case 'bigint':
      return `${v}n`;
    case 'symbol':
      return v.toString();
    case 'function':
      return `[Function: ${v.name || 'anonymous'}]`;
  }
  if (v === null) return null;
  const o = v as object;
  if (path.has(o)) return '[Circular]';
  if (o instanceof Error) return { name: o.name, message: str(String(o.message)), stack: str(String(o.stack ?? '')) };
  if (o === window) return '[Window]';
  if (isNode(o)) return describeNode(o);
  if (o instanceof Date) return Number.isNaN(o.getTime()) ? 'Invalid Date' : o.toISOString();
  if (o instanceof RegExp) return String(o);
  if (o instanceof ArrayBuffer) return `[ArrayBuffer ${o.byteLength} bytes]`;
  if (ArrayBuffer.isView(o)) return `[${o.constructor.name} ${o.byteLength} bytes]`;
  if (o instanceof Promise) return '[Promise]';
  if (o instanceof WeakMap || o instanceof WeakSet) return `[${o.constructor.name}]`;
  if (depth >= LIMITS.depth) return Array.isArray(o) ? '[Array]' : '[Object]';
  path.add(o);
  try {
    if (Array.isArray(o)) return list(o, o.length, depth, path);
    if (o instanceof Set) return list([...o].slice(0, LIMITS.array + 1), o.size, depth, path);
    if (o instanceof Map) {
      const out: { [k: string]: Json } = {};
      let n = 0;
      for (const [k, val] of o) {
        if (n++ >= LIMITS.keys) {
          out['…'] = `${o.size - LIMITS.keys} more entries`;
          break;
        }
        out[typeof k === 'string' ? k : String(walk(k, LIMITS.depth, path))] = walk(val, depth + 1, path);
      }
      return out;
    }
    const out: { [k: string]: Json } = {};
    const keys = Object.keys(o);
    const n = Math.min(keys.length, LIMITS.keys);
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      try {
        out[k] = walk((o as Record<string, unknown>)[k], depth + 1, path);
      } catch {
        out[k] = '[Threw]';
      }
    }
    if (keys.length > n) out['…'] = `${keys.length - n} more keys`;
    return out;
  } finally {
    path.delete(o);
  }
}

function list(a: ArrayLike<unknown>, total: number, depth: number, path: Set<object>): Json[] {
  const n = Math.min(a.length, LIMITS.array);
  const out: Json[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = walk(a[i], depth + 1, path);
  if (total > n) out.push(`… ${total - n} more items`);
  return out;
}

/** The human-readable line for a console call, the way DevTools would print it, bounded. */
export function formatMessage(args: readonly unknown[], serialized: readonly Json[]): string {
  let s = '';
  for (let i = 0; i < serialized.length; i++) {
    if (i > 0) s += ' ';
    const raw = args[i];
    const v = serialized[i];
    s += typeof raw === 'string' ? (v as string) : typeof v === 'string' ? v : JSON.stringify(v);
    if (s.length > LIMITS.string) return `${s.slice(0, LIMITS.string)}…[truncated]`;
  }
  return s;
}
