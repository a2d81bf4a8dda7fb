/** Threshold alerts: only transitions speak, in both directions. */
import { describe, expect, it } from 'vitest';
import { pressureOf, ThresholdTracker } from '../../../src/domain/alerts/thresholds.js';

describe('ThresholdTracker', () => {
  it('input memory pressure: normal → soft → hard → normal, one alert per transition', () => {
    const t = new ThresholdTracker();
    expect(t.update(0.1, false)).toEqual([]);
    const soft = t.update(0.55, false);
    expect(soft.map((a) => [a.severity, a.title])).toEqual([['warning', 'Input memory pressure soft']]);
    expect(t.update(0.6, false)).toEqual([]);
    expect(t.update(0.8, false).map((a) => [a.severity, a.title])).toEqual([['error', 'Input memory pressure hard']]);
    const back = t.update(0.2, false);
    expect(back.map((a) => [a.severity, a.title])).toEqual([['info', 'Input memory pressure back to normal']]);
    expect(back[0]!.context).toMatchObject({ from: 'hard', to: 'normal' });
    expect(pressureOf(0.49)).toBe('normal');
  });

  it('overload on and off', () => {
    const t = new ThresholdTracker();
    expect(t.update(0, true).map((a) => a.title)).toEqual(['Ingest overloaded: refusing new batches']);
    expect(t.update(0, true)).toEqual([]);
    expect(t.update(0, false).map((a) => a.title)).toEqual(['Ingest recovered from overload']);
  });

  it('every alert is a valid threshold alert', () => {
    const t = new ThresholdTracker();
    for (const a of [...t.update(0.9, true), t.extension('connected', 's1', '0.1.0', (s) => s), t.extension('disconnected', 's1', '0.1.0', (s) => s)]) {
      expect(a.category).toBe('threshold');
      expect(a.source).toBe('threshold_monitor');
      expect(Date.parse(a.timestamp)).not.toBeNaN();
    }
  });
});
