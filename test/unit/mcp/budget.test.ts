/** Issue 8: a result never ends mid-record, and what did not fit is counted. */
import { describe, expect, it } from 'vitest';
import { fill, fitLines } from '../../../src/mcp/render/budget.js';

describe('fill', () => {
  const items = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(i % 37)}`);

  it('takes whole lines in order until the room or the limit is reached', () => {
    for (const room of [10, 100, 555, 2000]) {
      const { shown, omitted } = fill(items, room, 1000, (s) => s);
      expect(shown.length + omitted.length).toBe(items.length);
      expect(shown.map((s) => s.text)).toEqual(items.slice(0, shown.length).map((s, i) => (i === 0 && s.length + 1 > room ? shown[0]!.text : s)));
      if (shown.length > 1) expect(shown.reduce((n, s) => n + s.text.length + 1, 0)).toBeLessThanOrEqual(room);
    }
    expect(fill(items, 1e6, 7, (s) => s).shown).toHaveLength(7);
  });

  it('cuts a first line longer than the room with a marker instead of answering nothing', () => {
    const { shown, omitted } = fill(['y'.repeat(5000), 'next'], 1000, 10, (s) => s);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.text.length).toBeLessThanOrEqual(1000);
    expect(shown[0]!.text.endsWith('[line cut]')).toBe(true);
    expect(omitted).toEqual(['next']);
  });
});

describe('fitLines', () => {
  it('keeps whole lines within the budget and says how many were left out', () => {
    const text = Array.from({ length: 500 }, (_, i) => `row ${i} ${'z'.repeat(30)}`).join('\n');
    const out = fitLines(text, 2000, 'filter with url');
    expect(out.length).toBeLessThanOrEqual(2000);
    const lines = out.split('\n');
    const kept = lines.slice(0, -1);
    expect(kept.every((l, i) => l === `row ${i} ${'z'.repeat(30)}`)).toBe(true);
    expect(lines.at(-1)).toBe(`… ${500 - kept.length} more lines over the 2000-char budget; filter with url`);
    expect(fitLines('short', 2000, '')).toBe('short');
  });
});
