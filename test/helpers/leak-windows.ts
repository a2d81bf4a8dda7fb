/**
 * Whether a secret leaked into some output, in any form it could travel in (raw, JSON-escaped,
 * URL-encoded): every 12-character window of the output, and a secret found by any of its own.
 */
export function windows(out: string): Set<string> {
  const w = new Set<string>();
  for (let i = 0; i + 12 <= out.length; i++) w.add(out.slice(i, i + 12));
  return w;
}

/** The first 12-character run of `secret` (in any form) found in `w`, or null. */
export function leakIn(w: Set<string>, secret: string): string | null {
  for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]) {
    for (let i = 0; i + 12 <= form.length; i++) if (w.has(form.slice(i, i + 12))) return form.slice(i, i + 12);
  }
  return null;
}
