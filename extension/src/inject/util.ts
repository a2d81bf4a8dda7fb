/** Small helpers shared by the page hooks. */

export const now = (): number => Date.now();

export function truncate(s: string, max: number): { text: string; truncated: boolean } {
  return s.length <= max ? { text: s, truncated: false } : { text: s.slice(0, max), truncated: true };
}

/** Runs capture code; whatever it throws stays with us, never reaches the page. */
export function guard(fn: () => void): void {
  try {
    fn();
  } catch {
    // capture is best effort by design
  }
}

export function absoluteUrl(u: unknown): string {
  try {
    return new URL(String(u), location.href).href;
  } catch {
    return String(u);
  }
}

/** Chrome stack line: "    at fn (https://host/file.js:12:34)" or "    at https://host/file.js:12:34" */
const FRAME = /\(?((?:https?|file|chrome-extension|blob|webpack):\/\/[^\s)]+?):(\d+):(\d+)\)?\s*$/;

export function topFrame(stack: string | undefined): { filename: string; lineno: number; colno: number } | null {
  if (!stack) return null;
  for (const line of stack.split('\n')) {
    if (!line.includes(' at ')) continue;
    const m = FRAME.exec(line);
    if (m) return { filename: m[1]!, lineno: Number(m[2]), colno: Number(m[3]) };
  }
  return null;
}
