/**
 * A folded read through the scan worker, as a tool makes one: the caller's noise rules go along
 * as data, the hits the worker counted come back onto the rules, and a read the worker refused or
 * lost becomes the tool's "ERROR <code>: …" answer.
 */
import { GasolineError } from '../../errors.js';
import type { FoldAnswer, FoldQuery } from '../../query/index.js';
import type { ToolContext } from './context.js';

export async function foldFor(ctx: ToolContext, q: Omit<FoldQuery, 'noise'>, hideNoise: boolean): Promise<FoldAnswer | string> {
  let folded: FoldAnswer;
  try {
    folded = await ctx.fold({ ...q, noise: hideNoise ? ctx.client.noise.map((r) => ({ id: r.id, field: r.field, pattern: r.pattern })) : undefined });
  } catch (e) {
    if (e instanceof GasolineError) return `ERROR ${e.code}: ${e.message}`;
    throw e;
  }
  for (const r of ctx.client.noise) r.hits += folded.noiseHits[r.id] ?? 0;
  return folded;
}
