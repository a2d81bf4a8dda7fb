/**
 * The last step of an answer: fit the budget, redact, and fit again. Stored records were redacted
 * at ingest, but a rule added at run time redacts them again on the way out, and its replacement
 * can be longer than what it hides — the budget is for what the agent reads, after redaction.
 * An answer that shows page data ends with PAGE_NOTE, once, inside the same budget.
 */
import type { ToolContext, ToolResult } from '../tools/context.js';
import { fitLines } from './budget.js';
import { PAGE_NOTE } from './page-text.js';

/** An answer's text, and whether it shows anything the page wrote (it then carries the note). */
export interface Rendered {
  text: string;
  page: boolean;
}

export const plain = (text: string): Rendered => ({ text, page: false });
export const fromPage = (text: string, page = true): Rendered => ({ text, page });

/** the note as the last line, when the answer shows page data */
export const withNote = (r: Rendered): string => (r.page ? `${r.text}\n${PAGE_NOTE}` : r.text);

export function budgeted(ctx: ToolContext, r: Rendered, budget: number, hint: string): ToolResult {
  const note = r.page ? PAGE_NOTE.length + 1 : 0;
  const room = budget - note;
  const fitted = (s: string): ToolResult => ctx.text(withNote({ text: fitLines(s, room, hint, budget), page: r.page }));
  const first = fitted(r.text);
  const out = first.content[0];
  if (out?.type !== 'text' || out.text.length <= budget) return first;
  // redaction is idempotent, so passing the redacted text through ctx.text again changes nothing else
  return fitted(note ? out.text.slice(0, -note) : out.text);
}
