/** The alert a CI result raises: error on failure or error, info on success. */
import type { CiResult } from '../ci-results.js';
import { correlationId, type Alert } from './alert.js';

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function ciAlert(r: CiResult): Alert {
  const what = `${r.source}${r.ref ? ` ${r.ref}` : ''}${r.commit ? ` @ ${r.commit.slice(0, 12)}` : ''}`;
  const failing = (r.failures ?? []).slice(0, 10).map((f) => f.name);
  const more = (r.failures?.length ?? 0) - failing.length;
  // the alert is drained by the next observe; the result stays readable there (#20 item 4)
  const detail = [r.summary ?? '', failing.length ? `failing: ${failing.join(', ')}${more > 0 ? ` and ${more} more` : ''}` : '', 'observe({what:"ci"}) shows the result'].filter(Boolean).join(' — ');
  return {
    severity: r.status === 'success' ? 'info' : 'error',
    category: 'ci',
    title: cut(`CI ${r.status}: ${what}`, 200),
    detail: cut(detail, 1000),
    timestamp: new Date().toISOString(),
    source: 'ci',
    ...(r.url ? { url: cut(r.url, 500) } : {}),
    dedup_key: `ci:${r.commit ?? r.ref ?? r.source}:${r.status}`,
    correlation_id: correlationId('ci'),
    context: { status: r.status, failing_tests: failing, ...(r.duration_ms !== undefined ? { duration_ms: r.duration_ms } : {}) },
  };
}
