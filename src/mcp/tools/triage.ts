/**
 * analyze({target:"triage", question?}): what broke, asked of the configured model through the
 * redaction gateway (src/model/). The answer is the adapter's text, then one footer line that says
 * what the gateway did: `redaction: policy <version> · redacted <n> · blocked <n> · model <adapter>`.
 * A streamed answer goes out as progress notifications when the caller gave a progressToken:
 * whole lines, redacted with all that came before them, coalesced (src/mcp/progress.ts); the
 * result holds the whole answer. A provider's failure or a blocked egress is
 * this call's error (model_*), with the footer too — never the daemon's health.
 */
import { gasolineError } from '../../errors.js';
import { TRIAGE_SYSTEM, type GatewayOutcome } from '../../model/index.js';
import { errorText } from '../error-result.js';
import { DEFAULT_BUDGET } from '../render/budget.js';
import { PAGE_NOTE } from '../render/page-text.js';
import type { ToolContext, ToolResult } from './context.js';
import { triageContext } from './triage-context.js';

export function footer(out: GatewayOutcome, adapter: string): string {
  return `redaction: policy ${out.policy} · redacted ${out.redacted} · blocked ${!out.ok && out.blocked ? 1 : 0} · model ${adapter}`;
}

/** whole lines while they fit, else a hard cut: a model's answer may be one long line */
function fitLines(text: string, room: number): string {
  if (text.length <= room) return text;
  const tail = `\n… answer cut at the ${room}-char budget; ask with a larger budget`;
  const keep = Math.max(0, room - tail.length);
  const nl = text.lastIndexOf('\n', keep);
  return `${text.slice(0, nl > keep / 2 ? nl : keep)}${tail}`;
}

export async function triageTool(ctx: ToolContext, question: string | undefined, budget = DEFAULT_BUDGET): Promise<ToolResult> {
  const model = ctx.port.model;
  if (!model) throw gasolineError('model_unavailable', 'this process has no model adapter (it runs without ingest)');
  const context = await triageContext(ctx);
  // a call cancelled while its context was read asks nothing of the provider
  if (ctx.signal?.aborted) throw gasolineError('model_unavailable', 'the call was cancelled before the model was asked');
  const out = await model.ask({ system: TRIAGE_SYSTEM, context, ...(question ? { question } : {}) }, { ...(ctx.progress ? { onChunk: ctx.progress } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
  const foot = footer(out, model.adapter.name);
  if (out.ok) ctx.progressEnd?.();
  if (!out.ok) {
    const r = ctx.text(`${errorText(out.error)}\n${foot}`);
    return { ...r, isError: true };
  }
  // the answer quotes page data (messages, URLs): the note says it is untrusted, the footer ends it
  const compose = (answer: string): string => `${fitLines(answer, budget - PAGE_NOTE.length - foot.length - 2)}\n${PAGE_NOTE}\n${foot}`;
  // redacted whole, then fitted: a cut through a secret leaves a piece no rule matches
  const first = ctx.text(compose(ctx.redact(out.answer.text)));
  const t = first.content[0];
  if (t?.type !== 'text' || t.text.length <= budget) return first;
  // redaction made it longer than the budget: fit the redacted text again (redaction is idempotent)
  return ctx.text(compose(t.text.slice(0, t.text.length - PAGE_NOTE.length - foot.length - 2)));
}
