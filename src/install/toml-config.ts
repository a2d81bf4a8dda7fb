/**
 * Gasoline's table in a TOML file (Codex's config.toml), written without a TOML library: we own
 * one table, `[mcp_servers.gasoline]`, and every other byte of the file is kept as it was. A
 * scanner that knows TOML's strings, comments and multi-line arrays finds that table's lines (and
 * its sub-tables, such as `[mcp_servers.gasoline.env]`); they are replaced in place, or the table
 * is appended. Forms that would define the server a second time (a dotted key, an inline table)
 * are refused rather than turned into invalid TOML.
 */
import { InstallError, SERVER_NAME, type ServerEntry } from './entry.js';

/** A TOML basic string: quotes, backslashes and control characters escaped (Windows paths too). */
export function tomlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export function tomlTable(e: ServerEntry): string {
  return `[mcp_servers.${SERVER_NAME}]\ncommand = ${tomlString(e.command)}\nargs = [${e.args.map(tomlString).join(', ')}]\n`;
}

interface Line {
  start: number;
  end: number;
  /** the dotted name of a table header on this line ([a.b] or [[a.b]]), keys unquoted */
  header: string[] | null;
  /** the dotted key this line assigns at its start (a = 1, a.b = 1), when it starts one */
  key: string[] | null;
  /** the line ends inside a value (a multi-line array or string): the next line is part of it */
  continues: boolean;
}

/**
 * The file's lines, with which ones are table headers and which start a key: lines inside a
 * multi-line string or array are neither, whatever they look like.
 */
export function scanLines(text: string): Line[] {
  const lines: Line[] = [];
  let i = 0;
  let depth = 0; // brackets and braces open in a value
  let inMultiline: '"""' | "'''" | null = null;
  for (;;) {
    const start = i;
    let nl = text.indexOf('\n', i);
    if (nl < 0) nl = text.length;
    const atValueTop = depth === 0 && inMultiline === null;
    let header: string[] | null = null;
    let key: string[] | null = null;
    if (atValueTop) {
      const raw = text.slice(start, nl);
      header = parseHeader(raw);
      if (!header) key = parseKeyStart(raw);
    }
    // walk the line's characters to carry string and bracket state into the next line
    let j = start;
    if (header) j = nl;
    while (j < nl) {
      const ch = text[j]!;
      if (inMultiline) {
        if (inMultiline === '"""' && ch === '\\') j += 2;
        else if (text.startsWith(inMultiline, j)) {
          j += 3;
          // """" closes with a quote inside: up to two extra quotes belong to the string
          while (text[j] === inMultiline[0] && j < nl) j++;
          inMultiline = null;
        } else j++;
        continue;
      }
      if (ch === '#') break;
      if (text.startsWith('"""', j) || text.startsWith("'''", j)) {
        inMultiline = text.slice(j, j + 3) as '"""' | "'''";
        j += 3;
        continue;
      }
      if (ch === '"' || ch === "'") {
        j = skipString(text, j, nl);
        continue;
      }
      if (ch === '[' || ch === '{') depth++;
      else if ((ch === ']' || ch === '}') && depth > 0) depth--;
      j++;
    }
    i = nl + 1;
    lines.push({ start, end: Math.min(i, text.length), header, key, continues: depth > 0 || inMultiline !== null });
    if (nl >= text.length) break;
  }
  return lines;
}

/** index after a one-line string starting at i */
function skipString(text: string, i: number, nl: number): number {
  const q = text[i];
  let j = i + 1;
  while (j < nl) {
    if (q === '"' && text[j] === '\\') j += 2;
    else if (text[j] === q) return j + 1;
    else j++;
  }
  return nl;
}

const KEY_PART = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')`;
const DOTTED = String.raw`\s*${KEY_PART}(?:\s*\.\s*${KEY_PART})*\s*`;
const HEADER_RE = new RegExp(String.raw`^\s*\[\[?(${DOTTED})\]\]?\s*(?:#.*)?\r?$`);
const KEY_RE = new RegExp(String.raw`^\s*(${DOTTED})=`);

function splitDotted(s: string): string[] {
  const out: string[] = [];
  const re = new RegExp(KEY_PART, 'g');
  for (const m of s.matchAll(re)) {
    const p = m[0];
    if (p.startsWith('"')) out.push(JSON.parse(p) as string);
    else if (p.startsWith("'")) out.push(p.slice(1, -1));
    else out.push(p);
  }
  return out;
}

function parseHeader(raw: string): string[] | null {
  const m = HEADER_RE.exec(raw);
  return m ? splitDotted(m[1]!) : null;
}

function parseKeyStart(raw: string): string[] | null {
  const m = KEY_RE.exec(raw);
  return m ? splitDotted(m[1]!) : null;
}

const startsWith = (a: readonly string[], b: readonly string[]): boolean => b.every((p, i) => a[i] === p);

/** the keys of our table that we write; any other key there (env, enabled, timeouts) is the user's */
const OWN_KEYS = new Set(['command', 'args']);

/**
 * The file's text with our table set; `before` null: the file does not exist yet. An existing
 * `[mcp_servers.gasoline]` keeps its place and every key but `command` and `args`.
 */
export function mergeToml(before: string | null, e: ServerEntry, path: string): string {
  const table = tomlTable(e);
  if (before === null || before.trim() === '') return table;
  const lines = scanLines(before);
  const ours = ['mcp_servers', SERVER_NAME];
  const byHand = `add this by hand instead:\n${table}`;
  let current: string[] = [];
  let headerLine = -1;
  /** [from, to) byte ranges of our own keys' lines, values spanning lines included */
  const drop: Array<[number, number]> = [];
  for (let n = 0; n < lines.length; n++) {
    const l = lines[n]!;
    if (l.header) {
      current = l.header;
      if (headerLine < 0 && l.header.length === 2 && startsWith(l.header, ours)) headerLine = n;
      continue;
    }
    if (!l.key) continue;
    const full = [...current, ...l.key];
    // `mcp_servers = {...}`, `mcp_servers.gasoline.command = ...`, or `gasoline = {...}` under
    // [mcp_servers]: the server is (or would be) defined outside a table of its own
    const inOurTable = current.length === 2 && startsWith(current, ours);
    if ((startsWith(full, ours) && !startsWith(current, ours)) || (full.length === 1 && full[0] === 'mcp_servers')) {
      throw new InstallError(`${path} defines ${full.join('.')} as a key, which a [mcp_servers.${SERVER_NAME}] table cannot sit beside; ${byHand}`);
    }
    if (inOurTable && n > headerLine && OWN_KEYS.has(l.key[0]!)) {
      let last = n;
      while (lines[last]!.continues && last + 1 < lines.length) last++;
      drop.push([l.start, lines[last]!.end]);
      n = last;
    }
  }
  if (headerLine < 0) {
    const sep = before.endsWith('\n\n') ? '' : before.endsWith('\n') ? '\n' : '\n\n';
    return `${before}${sep}${table}`;
  }
  const h = lines[headerLine]!;
  const ownLines = table.slice(table.indexOf('\n') + 1);
  let out = before.slice(0, h.end) + (before.slice(h.start, h.end).endsWith('\n') ? '' : '\n') + ownLines;
  let cursor = h.end;
  for (const [from, to] of drop) {
    out += before.slice(cursor, from);
    cursor = to;
  }
  return out + before.slice(cursor);
}
