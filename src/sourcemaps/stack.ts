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
 * The same array for the same text (see `KeptFrames`): callers read it, never change it.
 */
export function recordFrames(r: FrameFields): readonly Frame[] {
  // the first text with any position decides, even when all of them are the extension's own
  if (typeof r.stack === 'string' && r.stack) {
    const p = stacks.parsed(r.stack);
    if (p.any) return p.frames;
  }
  if (typeof r.source === 'string') {
    const p = sites.parsed(r.source);
    if (p.any) return p.frames;
  }
  if (typeof r.filename === 'string' && typeof r.lineno === 'number' && typeof r.colno === 'number') return ownFramesOut(oneFrame(`${r.filename}:${r.lineno}:${r.colno}`));
  return NONE;
}

const NONE: readonly Frame[] = Object.freeze([]);

function oneFrame(text: string): Frame[] {
  const f = parseFrame(text);
  return f ? [f] : [];
}

function ownFramesOut(frames: Frame[]): readonly Frame[] {
  return Object.freeze(frames.filter((f) => !f.url.startsWith('chrome-extension://')).map((f) => Object.freeze(f)));
}

/**
 * Parsed texts, kept across reads. An app repeats its errors, and every observe parses the stacks
 * of the records and alerts it may show two or three times (what to fetch, then what resolved):
 * ~0.9 ms of main's time per observe of a busy page (a profile under the bench's 20 000 events/s,
 * issue 17). Bounded by count and characters, emptied whole when full, as compiled noise patterns
 * are; a text longer than MAX_KEPT_TEXT is parsed every time. One per parser: the same text is a
 * different thing as a stack and as a call site.
 */
interface Parsed {
  /** the text named any position (before the extension's own frames were left out) */
  any: boolean;
  frames: readonly Frame[];
}

class KeptFrames {
  private readonly kept = new Map<string, Parsed>();
  private chars = 0;

  constructor(private readonly parse: (text: string) => Frame[]) {}

  parsed(text: string): Parsed {
    const hit = this.kept.get(text);
    if (hit) return hit;
    const all = this.parse(text);
    const p: Parsed = { any: all.length > 0, frames: ownFramesOut(all) };
    if (text.length <= MAX_KEPT_TEXT) {
      if (this.kept.size >= MAX_KEPT || this.chars + text.length > MAX_KEPT_CHARS) {
        this.kept.clear();
        this.chars = 0;
      }
      this.kept.set(text, p);
      this.chars += text.length;
    }
    return p;
  }
}

const MAX_KEPT = 1024;
const MAX_KEPT_CHARS = 512 * 1024;
const MAX_KEPT_TEXT = 8192;
const stacks = new KeptFrames(parseStack);
const sites = new KeptFrames(oneFrame);

/** `app.min.js:1:2345`: the generated position, compactly (the file name without its path or query). */
export function shortFrame(f: Frame): string {
  const path = f.url.replace(/[?#].*$/, '');
  const name = path.slice(path.lastIndexOf('/') + 1) || path;
  return `${name}:${f.line}:${f.column}`;
}
