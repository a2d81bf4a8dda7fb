/**
 * One `perf` snapshot per page load: navigation timing, paint, LCP, CLS, INP (approximate: the
 * longest interaction), long tasks and resource totals. Sent `perf_delay_ms` after load, or
 * earlier if the page is hidden first, since LCP and CLS may still move until then. A visible page
 * that has not painted by then (a busy machine, a slow first render) gets a few seconds more for
 * its first contentful paint, the figure the snapshot is most read for.
 */
import { cfg, emit, flush } from './channel.js';
import { guard, now } from './util.js';
import type { Json } from '../shared/protocol.js';

let lcp: number | null = null;
let cls = 0;
let inp: number | null = null;
let longCount = 0;
let longTotalBlocking = 0;
let longest = 0;
let sent = false;
/** the load's URL: a SPA may have navigated by the time the snapshot goes */
let loadUrl = '';

function observe(type: string, fn: (e: PerformanceEntry) => void, extra: Record<string, unknown> = {}): void {
  try {
    new PerformanceObserver((list) => guard(() => list.getEntries().forEach(fn))).observe({ type, buffered: true, ...extra } as PerformanceObserverInit);
  } catch {
    // entry type not supported here
  }
}

const round = (n: number | null | undefined): number | null => (n === null || n === undefined || !Number.isFinite(n) ? null : Math.round(n));

function snapshot(): void {
  if (sent) return;
  sent = true;
  if (!cfg.on) return;
  guard(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    const fcp = performance.getEntriesByName('first-contentful-paint')[0];
    const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
    let bytes = 0;
    for (const r of resources) bytes += r.transferSize || 0;
    const timing: Record<string, Json> = {
      ttfb: round(nav?.responseStart),
      fcp: round(fcp?.startTime),
      lcp: round(lcp),
      cls: Math.round(cls * 1000) / 1000,
      inp: round(inp),
      dom_content_loaded: round(nav?.domContentLoadedEventEnd),
      load: round(nav?.loadEventEnd) || null,
    };
    emit('perf', {
      ts: now(),
      url: loadUrl || location.href,
      timing,
      long_tasks: { count: longCount, total_blocking_time: Math.round(longTotalBlocking), longest: Math.round(longest) },
      resources: { count: resources.length, transfer_size: bytes },
    });
    flush();
  });
}

/** how long a visible page that has not painted yet may keep its snapshot waiting for the first paint, at least */
const PAINT_WAIT_MS = 3000;

/** The snapshot's time: now, unless a visible page has yet to paint (then at its first contentful paint, within PAINT_WAIT_MS). */
function due(): void {
  if (sent) return;
  if (performance.getEntriesByName('first-contentful-paint')[0] || document.visibilityState !== 'visible') return snapshot();
  // a page with nothing to paint never has one: it is sent without it
  const late = setTimeout(snapshot, Math.max(cfg.perf_delay_ms, PAINT_WAIT_MS));
  observe('paint', (e) => {
    if (e.name !== 'first-contentful-paint') return;
    clearTimeout(late);
    snapshot();
  });
}

export function installPerf(): void {
  if (typeof PerformanceObserver === 'undefined') return;
  observe('largest-contentful-paint', (e) => (lcp = e.startTime));
  observe('layout-shift', (e) => {
    const s = e as PerformanceEntry & { value: number; hadRecentInput: boolean };
    if (!s.hadRecentInput) cls += s.value;
  });
  observe(
    'event',
    (e) => {
      const ev = e as PerformanceEntry & { interactionId?: number };
      if (ev.interactionId) inp = Math.max(inp ?? 0, e.duration);
    },
    { durationThreshold: 40 },
  );
  observe('longtask', (e) => {
    longCount++;
    longTotalBlocking += Math.max(0, e.duration - 50);
    longest = Math.max(longest, e.duration);
  });
  const afterLoad = (): void => {
    loadUrl = location.href;
    setTimeout(due, cfg.perf_delay_ms);
  };
  if (document.readyState === 'complete') afterLoad();
  else addEventListener('load', afterLoad, { once: true });
  addEventListener('pagehide', snapshot, { capture: true });
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && snapshot(), { capture: true });
}
