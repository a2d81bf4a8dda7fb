/** Web-vitals ratings (web.dev thresholds) and baseline regression math. */
export type Metric = 'ttfb' | 'fcp' | 'lcp' | 'cls' | 'inp' | 'dom_content_loaded' | 'load';
export const METRICS: Metric[] = ['ttfb', 'fcp', 'lcp', 'cls', 'inp', 'dom_content_loaded', 'load'];

const THRESHOLDS: Partial<Record<Metric, [number, number]>> = {
  ttfb: [800, 1800],
  fcp: [1800, 3000],
  lcp: [2500, 4000],
  cls: [0.1, 0.25],
  inp: [200, 500],
};

export function rate(metric: Metric, v: number): 'good' | 'needs-improvement' | 'poor' | '' {
  const t = THRESHOLDS[metric];
  if (!t) return '';
  return v <= t[0] ? 'good' : v <= t[1] ? 'needs-improvement' : 'poor';
}

export interface Regression {
  metric: Metric;
  baseline: number;
  current: number;
  change: string;
}

/** Timing metrics worse by more than 20 %; CLS up by more than 0.1. */
export function regressions(baseline: Partial<Record<Metric, number | null>>, current: Partial<Record<Metric, number | null>>): Regression[] {
  const out: Regression[] = [];
  for (const m of METRICS) {
    const b = baseline[m];
    const c = current[m];
    if (typeof b !== 'number' || typeof c !== 'number') continue;
    if (m === 'cls') {
      if (c - b > 0.1) out.push({ metric: m, baseline: b, current: c, change: `+${(c - b).toFixed(2)}` });
    } else if (b > 0 && c > b * 1.2) {
      out.push({ metric: m, baseline: b, current: c, change: `+${Math.round(((c - b) / b) * 100)}%` });
    }
  }
  return out;
}

/** Median of earlier loads per metric: one slow outlier does not move the baseline. */
export function baselineOf(timings: Array<Partial<Record<Metric, number | null>>>): Partial<Record<Metric, number>> {
  const out: Partial<Record<Metric, number>> = {};
  for (const m of METRICS) {
    const vals = timings.map((t) => t[m]).filter((v): v is number => typeof v === 'number').sort((x, y) => x - y);
    const mid = vals.length >> 1;
    if (vals.length) out[m] = vals.length % 2 ? vals[mid]! : (vals[mid - 1]! + vals[mid]!) / 2;
  }
  return out;
}
