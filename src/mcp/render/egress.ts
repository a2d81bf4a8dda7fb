/**
 * The last step of an answer: fit the budget, redact, and fit again. Stored records were redacted
 * at ingest, but a rule added at run time redacts them again on the way out, and its replacement
 * can be longer than what it hides — the budget is for what the agent reads, after redaction.
 */
import type { ToolContext, ToolResult } from '../tools/context.js';
import { fitLines } from './budget.js';

export function budgeted(ctx: ToolContext, text: string, budget: number, hint: string): ToolResult {
  const first = ctx.text(fitLines(text, budget, hint));
  const out = first.content[0];
  if (out?.type !== 'text' || out.text.length <= budget) return first;
  // redaction is idempotent, so passing the redacted text through ctx.text again changes nothing else
  return ctx.text(fitLines(out.text, budget, hint));
}
