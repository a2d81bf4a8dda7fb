/**
 * Character budgets. An agent pays for every character it reads, so every result has a ceiling
 * (default 8 000 ≈ 2 000 tokens). Lines are taken whole, in the order given; what does not fit is
 * counted so the caller can say how to reach it. A result never ends mid-record.
 */
export const DEFAULT_BUDGET = 8000;

export interface Filled<T> {
  shown: Array<{ item: T; text: string }>;
  /** items not shown, from the first that did not fit */
  omitted: T[];
}

/**
 * Takes items in order while they fit `room` characters (one newline each) and `limit` lines.
 * The first line alone may be longer than the room (a 1 000-character budget and a 1 300-character
 * request body): it is cut with a marker rather than answering nothing and looping the cursor.
 */
export function fill<T>(items: readonly T[], room: number, limit: number, render: (t: T) => string): Filled<T> {
  const shown: Array<{ item: T; text: string }> = [];
  let used = 0;
  let i = 0;
  for (; i < items.length && shown.length < limit; i++) {
    const text = render(items[i]!);
    if (used + text.length + 1 > room) {
      if (!shown.length) shown.push({ item: items[i++]!, text: `${text.slice(0, Math.max(0, room - 20))}… [line cut]` });
      break;
    }
    shown.push({ item: items[i]!, text });
    used += text.length + 1;
  }
  return { shown, omitted: items.slice(i) };
}

/**
 * For answers that are prose lines (status, vitals, bundles): keep whole lines, say what was left
 * out. `asked` is the budget the caller named, when part of it is kept for a line added after.
 */
export function fitLines(text: string, budget: number, hint: string, asked = budget): string {
  if (text.length <= budget) return text;
  const lines = text.split('\n');
  const tail = (n: number): string => `… ${n} more lines over the ${asked}-char budget; ${hint}`;
  const room = budget - tail(lines.length).length - 1;
  const { shown, omitted } = fill(lines, room, lines.length, (l) => l);
  return `${shown.map((s) => s.text).join('\n')}\n${tail(omitted.length)}`;
}
