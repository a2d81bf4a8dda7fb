/**
 * `node:fs` plus `globSync` as Node 22 defines it, for the patterns the tools we run use
 * (`**`, `*`, `?` and literal path segments, with `cwd`): paths relative to `cwd`, `/`-separated
 * pattern, wildcards never match a leading dot (minimatch's default, which Node's glob keeps),
 * `**` matches zero or more directories and does not follow symlinked directories. Anything
 * else (braces, classes, negation, `exclude`) throws instead of matching differently.
 */
import fs from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export * from 'node:fs';
export default fs;

const UNSUPPORTED = /[[\]{}!()+@\\]/;

/** one pattern segment (`*.json`, `check?`, `name`) as an anchored regex */
function segmentRegex(seg) {
  let src = '';
  for (const ch of seg) {
    if (ch === '*') src += '[^/]*';
    else if (ch === '?') src += '[^/]';
    else src += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${src}$`);
}

function matchSegment(seg, name) {
  if (seg === name) return true;
  if (!/[*?]/.test(seg)) return false;
  if (name.startsWith('.') && !seg.startsWith('.')) return false;
  return segmentRegex(seg).test(name);
}

function entries(dir) {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** walk `dir` against `segs[i…]`, adding matches (absolute) to `out` */
function walk(dir, segs, i, out) {
  if (i === segs.length) {
    out.add(dir);
    return;
  }
  const seg = segs[i];
  if (seg === '**') {
    walk(dir, segs, i + 1, out); // zero directories
    for (const e of entries(dir)) {
      if (e.isDirectory() && !e.name.startsWith('.')) walk(join(dir, e.name), segs, i, out);
    }
    return;
  }
  const last = i === segs.length - 1;
  for (const e of entries(dir)) {
    if (!matchSegment(seg, e.name)) continue;
    if (last) out.add(join(dir, e.name));
    else if (e.isDirectory() || (e.isSymbolicLink() && isDir(join(dir, e.name)))) walk(join(dir, e.name), segs, i + 1, out);
  }
}

function isDir(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function globSync(pattern, options = {}) {
  const { cwd = process.cwd(), ...rest } = options;
  const unknown = Object.keys(rest).filter((k) => rest[k] !== undefined);
  if (unknown.length > 0) throw new Error(`globSync shim: unsupported option(s) ${unknown.join(', ')}`);
  const base = cwd instanceof URL ? fileURLToPath(cwd) : String(cwd);
  const out = new Set();
  for (const p of Array.isArray(pattern) ? pattern : [pattern]) {
    if (UNSUPPORTED.test(p)) throw new Error(`globSync shim: unsupported pattern ${JSON.stringify(p)}`);
    if (p.startsWith('/')) throw new Error(`globSync shim: absolute pattern ${JSON.stringify(p)}`);
    const segs = p.split('/').filter((s, i, all) => s !== '' && s !== '.' && !(s === '**' && all[i - 1] === '**'));
    walk(base, segs, 0, out);
  }
  return [...out].map((abs) => relative(base, abs).split(sep).join('/')).filter((r) => r !== '');
}
