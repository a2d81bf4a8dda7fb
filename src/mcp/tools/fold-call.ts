/**
 * A folded read through the scan worker, as a tool makes one: the caller's noise rules and tab
 * filter go along as data, and the hits the worker counted come back onto the rules. A read the worker refused
 * or lost rejects with its GasolineError (scan_busy, scan_failed), which the tool call answers.
 */
import type { FoldAnswer, FoldQuery } from '../../query/index.js';
import type { ToolContext } from './context.js';
import { tabScope } from './tab-scope.js';

export async function foldFor(ctx: ToolContext, q: Omit<FoldQuery, 'noise' | 'scope'>, hideNoise: boolean): Promise<FoldAnswer> {
  const folded = await ctx.fold({ ...q, scope: tabScope(ctx), noise: hideNoise ? ctx.client.noise.map((r) => ({ id: r.id, field: r.field, pattern: r.pattern })) : undefined });
  for (const r of ctx.client.noise) r.hits += folded.noiseHits[r.id] ?? 0;
  return folded;
}
