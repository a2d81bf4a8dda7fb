/** Passive delivery: a bounded buffer and the synthesis observe shows. */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../src/domain/alerts/alert.js';
import { AlertBuffer, pendingNote, synthesize } from '../../../src/domain/alerts/buffer.js';
import { formatAlerts } from '../../../src/mcp/render/alert-block.js';

let n = 0;
function alert(p: Partial<Alert> & Pick<Alert, 'category' | 'title'>, at = 0): Alert {
  return { severity: 'error', detail: 'd', timestamp: new Date(1_700_000_000_000 + at).toISOString(), source: 'test', dedup_key: p.title, correlation_id: `c${n++}`, ...p };
}

describe('AlertBuffer', () => {
  it('keeps the newest 50, evicting the oldest without a word', () => {
    const b = new AlertBuffer();
    for (let i = 0; i < 60; i++) b.add(alert({ category: 'anomaly', title: `t${i}` }, i));
    expect(b.pending).toBe(50);
    expect(b.evicted).toBe(10);
    const out = b.drain();
    expect(out.map((a) => a.title)).toEqual(Array.from({ length: 50 }, (_, i) => `t${i + 10}`));
    expect(b.pending).toBe(0);
    expect(formatAlerts(b.drain()).text).toBe('');
  });
});

describe('synthesis', () => {
  it('folds repeats by (category, title) with their count, newest kept', () => {
    const out = synthesize([alert({ category: 'anomaly', title: 'Server error: GET /x → 500', count: 3 }, 0), alert({ category: 'anomaly', title: 'Server error: GET /x → 500', detail: 'newest' }, 10)]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ count: 4, detail: 'newest' });
  });

  it('keeps the newest whatever the order they came in, counts them all, and changes none it was given', () => {
    const given = [alert({ category: 'anomaly', title: 't', detail: 'newest' }, 10), alert({ category: 'anomaly', title: 't', detail: 'old', count: 2 }, 0), alert({ category: 'anomaly', title: 't', detail: 'mid' }, 5)];
    const before = structuredClone(given);
    const out = synthesize(given);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ count: 4, detail: 'newest' });
    expect(given).toEqual(before);
  });

  it('merges a regression and an anomaly within 5 s into one compound alert, not further apart', () => {
    const close = synthesize([alert({ category: 'regression', severity: 'warning', title: 'Performance regression: /cart' }, 0), alert({ category: 'anomaly', title: 'Server error: GET /api/cart → 500' }, 4000)]);
    expect(close).toHaveLength(1);
    expect(close[0]!.title).toBe('Server error: GET /api/cart → 500 + Performance regression: /cart');
    expect(close[0]!.related?.category).toBe('regression');
    const apart = synthesize([alert({ category: 'regression', severity: 'warning', title: 'Performance regression: /cart' }, 0), alert({ category: 'anomaly', title: 'x' }, 6000)]);
    expect(apart).toHaveLength(2);
  });

  it('sorts error > warning > info, then newest first, and summarizes when more than 3', () => {
    const { text } = formatAlerts([
      alert({ category: 'ci', severity: 'info', title: 'CI success: web main' }, 0),
      alert({ category: 'threshold', severity: 'warning', title: 'Extension disconnected' }, 1),
      alert({ category: 'anomaly', title: 'New exception: a' }, 2),
      alert({ category: 'anomaly', title: 'New exception: b' }, 3),
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('--- ALERTS (4) ---');
    expect(lines[1]).toBe('4 alerts: 2 anomaly, 1 threshold, 1 ci');
    expect(lines.slice(2).map((l) => l.split(' — ')[0])).toEqual(['[error] anomaly: "New exception: b"', '[error] anomaly: "New exception: a"', '[warning] threshold: "Extension disconnected"', '[info] ci: "CI success: web main"']);
    expect(formatAlerts([alert({ category: 'ci', title: 'one' })]).text.split('\n')).toHaveLength(2);
  });

  it('fits a character cap: whole entries, most severe first, the rest handed back to wait', () => {
    const many = Array.from({ length: 30 }, (_, i) => alert({ category: 'anomaly', severity: i < 2 ? 'error' : 'info', title: `problem ${i}`, detail: 'x'.repeat(80) }, i));
    const { text, rest } = formatAlerts(many, 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text).toContain('problem 1');
    expect(text).toMatch(/\+\d+ more alerts: observe again to see them$/);
    expect(rest.length).toBeGreaterThan(15);
    expect(rest.length + text.split('\n').filter((l) => l.startsWith('[')).length).toBe(30);
  });

  it('says how many wait, in one line', () => {
    expect(pendingNote(0)).toBe('');
    expect(pendingNote(2)).toBe('2 alerts pending — call observe to see them');
  });
});
