/**
 * Cursors are opaque to agents and carry no state on the server. Two shapes:
 *   "o1.o2"            continue forward from these ordinals (one per kind of the result)
 *   "f1.f2~t1.t2~n"    the rest of an answer: the same range [f, t), skipping the first n lines
 *                      in fill order (what did not fit the budget or the limit)
 * Ordinals are base 36 to keep them short; every part is validated before use.
 */
import { GasolineError } from '../errors.js';

export type Cursor = { at: number[] } | { from: number[]; to: number[]; skip: number };

const ords = (s: string, n: number): number[] | null => {
  const parts = s.split('.');
  if (parts.length !== n || parts.some((p) => !/^[0-9a-z]{1,11}$/.test(p))) return null;
  return parts.map((p) => Number.parseInt(p, 36));
};

export function decodeCursor(s: string, n: number): Cursor | null {
  const parts = s.split('~');
  if (parts.length === 1) {
    const at = ords(parts[0]!, n);
    return at ? { at } : null;
  }
  if (parts.length !== 3 || !/^[0-9a-z]{1,6}$/.test(parts[2]!)) return null;
  const from = ords(parts[0]!, n);
  const to = ords(parts[1]!, n);
  if (!from || !to || from.some((f, i) => f > to[i]!)) return null;
  return { from, to, skip: Number.parseInt(parts[2]!, 36) };
}

export const encodeAt = (at: number[]): string => at.map((o) => o.toString(36)).join('.');

export const encodeRest = (from: number[], to: number[], skip: number): string => `${encodeAt(from)}~${encodeAt(to)}~${skip.toString(36)}`;

/** A cursor we did not hand out: the message says which parameter and what to use instead. */
export function badCursor(param: 'after' | 'before', value: string, what: string): GasolineError {
  return new GasolineError('bad_cursor', `${param}: ${JSON.stringify(value)} is not a cursor of observe({what:"${what}"}); use the cursor from that result${param === 'after' ? ', or from:"start"' : ''}`);
}
