/**
 * Chrome's stack lines, parsed into the generated positions a source map can resolve. V8 writes
 * `at fn (URL:line:col)`, `at URL:line:col` (anonymous), `at async fn (…)` (awaited callers),
 * `at new Foo (…)`, `at fn [as alias] (…)`, `at Array.map (<anonymous>)` (native: no position) and,
 * for code run by eval, `at eval (eval at caller (URL:line:col), <anonymous>:1:5)`: the position
 * inside the eval'd string has no map, so the eval's call site is what is resolved.
 * Only http(s) frames can be fetched; the rest stay as the page wrote them.
 */

/** One generated position; line and column are 1-based, as V8 prints them. */
export interface Frame {
  url: string;
  line: number;
  column: number;
  /** an `async` frame: a caller that awaited */
  async?: true;
  /** the position is an eval's call site, not the eval'd code */
  eval?: true;
}

/** stack lines looked at: the top frames are what an agent reads, and a stack is page text */
const MAX_LINES = 40;
const MAX_LINE_CHARS = 2000;

const AT = /^\s*at\s+(async\s+)?(.*)$/;
const EVAL = /\(eval at .*?\((\S+?):(\d+):(\d+)\)/;
const LOCATION = /\(?(\S+?):(\d+):(\d+)\)?$/;

/** One stack line (`    at …`, or a console record's `source`, which is a frame without `at`). */
export function parseFrame(text: string): Frame | undefined {
  const s = text.length > MAX_LINE_CHARS ? text.slice(0, MAX_LINE_CHARS) : text;
  const at = AT.exec(s);
  const body = (at ? at[2]! : s).trim();
  const isAsync = Boolean(at?.[1]);
  const ev = EVAL.exec(body);
  const m = ev ?? LOCATION.exec(body);
  if (!m) return undefined;
  const line = Number(m[2]);
  const column = Number(m[3]);
  if (!Number.isSafeInteger(line) || !Number.isSafeInteger(column) || line < 1 || column < 1) return undefined;
  return { url: m[1]!, line, column, ...(isAsync ? { async: true as const } : {}), ...(ev ? { eval: true as const } : {}) };
}

/** The frames of a stack with a position, in order (the message lines before them are skipped). */
export function parseStack(stack: string): Frame[] {
  const out: Frame[] = [];
  for (const l of stack.split('\n', MAX_LINES + 8)) {
    if (!/^\s*at\s/.test(l)) continue;
    const f = parseFrame(l);
    if (f) out.push(f);
    if (out.length >= MAX_LINES) break;
  }
  return out;
}

/** http(s) only: a map is fetched from where the script came from, and nothing else can be asked */
export function fetchable(f: Frame): boolean {
  return f.url.startsWith('http://') || f.url.startsWith('https://');
}

/** The key a resolved position is kept under. */
export const frameKey = (f: Pick<Frame, 'url' | 'line' | 'column'>): string => `${f.url}:${f.line}:${f.column}`;

/** What a log record carries, as far as frames go (the fields of LogRecordSchema). */
export interface FrameFields {
  stack?: unknown;
  source?: unknown;
  filename?: unknown;
  lineno?: unknown;
  colno?: unknown;
  /** the page's URL: its origin is the one maps may be fetched from */
  url?: unknown;
}

/**
 * A record's frames, outermost last: the stack when there is one, else the console call site
 * (`source`), else the error event's filename:lineno:colno. Frames of our own extension are left out.
 */
export function recordFrames(r: FrameFields): Frame[] {
  let frames: Frame[] = [];
  if (typeof r.stack === 'string' && r.stack) frames = parseStack(r.stack);
  if (!frames.length && typeof r.source === 'string') {
    const f = parseFrame(r.source);
    if (f) frames = [f];
  }
  if (!frames.length && typeof r.filename === 'string' && typeof r.lineno === 'number' && typeof r.colno === 'number') {
    const f = parseFrame(`${r.filename}:${r.lineno}:${r.colno}`);
    if (f) frames = [f];
  }
  return frames.filter((f) => !f.url.startsWith('chrome-extension://'));
}

/** `app.min.js:1:2345`: the generated position, compactly (the file name without its path or query). */
export function shortFrame(f: Frame): string {
  const path = f.url.replace(/[?#].*$/, '');
  const name = path.slice(path.lastIndexOf('/') + 1) || path;
  return `${name}:${f.line}:${f.column}`;
}
