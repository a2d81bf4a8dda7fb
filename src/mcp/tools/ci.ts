/**
 * observe({what:"ci"}): the CI results kept (POST /ci-result, newest 10), newest first, each with
 * its failing tests and the link to its run (#20 item 4). The alert a result raised is drained by
 * the next observe; this is where the failing tests stay readable. Bounded per result (20 tests,
 * each message cut) and, like every answer, by the caller's budget.
 */
import type { StoredCiResult } from '../../domain/ci-results.js';
import { fromPage, plain, type Rendered } from '../render/egress.js';
import { pageText as q, pageWord as w } from '../render/page-text.js';
import type { ToolContext } from './context.js';

/** failing tests shown per result; the rest are counted */
export const CI_TESTS_SHOWN = 20;

export function ciResults(ctx: ToolContext, limit: number | undefined): Rendered {
  const all = ctx.port.ci?.() ?? [];
  if (!all.length) return plain('ci: no CI results received (a CI job reports with POST /ci-result; see docs/PROTOCOL.md)');
  const shown = [...all].reverse().slice(0, limit ?? all.length);
  const head = `ci: ${all.length} result${all.length === 1 ? '' : 's'} kept (newest ${shown.length} shown, newest first)`;
  return fromPage([head, ...shown.map(result)].join('\n'));
}

function result(r: StoredCiResult): string {
  const what = [`${r.status} ${q(r.source, 200)}`, r.ref ? `ref ${q(r.ref, 200)}` : '', r.commit ? `@ ${w(r.commit.slice(0, 12))}` : '', `received ${r.received_at}`, r.updates ? `(updated ${r.updates}×)` : '', r.duration_ms !== undefined ? `${(r.duration_ms / 1000).toFixed(1)} s` : ''];
  const out = [what.filter(Boolean).join(' ')];
  if (r.summary) out.push(`  summary: ${q(r.summary, 300)}`);
  const failures = r.failures ?? [];
  if (failures.length) {
    out.push(`  failing tests (${failures.length}):`);
    for (const f of failures.slice(0, CI_TESTS_SHOWN)) out.push(`    ${q(f.name, 200)}${f.message ? ` — ${q(f.message, 300)}` : ''}`);
    if (failures.length > CI_TESTS_SHOWN) out.push(`    +${failures.length - CI_TESTS_SHOWN} more failing tests (the run has them all)`);
  }
  out.push(r.url ? `  run: ${q(r.url, 500)}` : '  run: no link reported');
  return out.join('\n');
}
