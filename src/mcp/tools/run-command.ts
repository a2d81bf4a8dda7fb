/**
 * The one path from a tool call to the extension and back: start a command for this client,
 * wait a short while, and answer with the formatted result, a specific error, or — when the
 * command outlives the wait — a query id to fetch later with observe({what:"command_result"}).
 */
import type { CommandType } from '../../domain/commands.js';
import type { Outcome, ProducerRef, Query } from '../../clients/commands.js';
import { formatResult } from '../render/command-format.js';
import { pageFlat, pageText } from '../render/page-text.js';
import { gasolineError } from '../../errors.js';
import type { ToolContext, ToolResult } from './context.js';

const NO_SERVER = 'no browser commands: the ingest server is not running, so no extension can connect. Stop the other process on the port or set GASOLINE_PORT, then restart this MCP server.';

export async function runCommand(ctx: ToolContext, type: CommandType, params: Record<string, unknown>, opts: { deadlineMs?: number; tabId?: number | undefined } = {}): Promise<ToolResult> {
  const router = ctx.port.commands;
  if (!router) throw gasolineError('no_ingest', NO_SERVER);
  const started = router.start(ctx.clientId, type, params, { ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}), ...(opts.tabId !== undefined ? { tabId: opts.tabId } : {}) });
  if (!started.ok) throw gasolineError(started.code, started.message);
  const outcome = await router.wait(started.query, ctx.commandWaitMs);
  if (!outcome) return ctx.text(stillRunning(started.query));
  router.release(started.query);
  return answer(ctx, started.query, outcome);
}

/** observe({what:"command_result", query_id}) */
export function commandResult(ctx: ToolContext, queryId: string | undefined): ToolResult {
  const router = ctx.port.commands;
  if (!router) throw gasolineError('no_ingest', NO_SERVER);
  if (!queryId) throw gasolineError('invalid_argument', 'command_result needs query_id: the id a previous analyze or interact call answered with');
  const q = router.get(ctx.clientId, queryId);
  if (!q) throw gasolineError('unknown_query', `no query ${JSON.stringify(queryId.slice(0, 40))} for you (the latest 32 answers are kept up to 5 minutes, only for the client that asked, and only until you have seen them)`);
  if (!q.outcome) return ctx.text(stillRunning(q));
  return answer(ctx, q, q.outcome);
}

function stillRunning(q: Query): string {
  return `${q.type} still running after ${Math.round((Date.now() - q.startedAt) / 100) / 10}s; query_id=${q.id}\nfetch it: observe({what:"command_result", query_id:"${q.id}"})`;
}

/** Every answer names the producer that gave it (or was sent the command), so a forged one can be traced. */
function answer(ctx: ToolContext, q: Query, o: Outcome): ToolResult {
  const by = producerLine(q.producer, q.answered);
  // the extension words its own refusals, and a page can reach them (a selector it echoes)
  if (!o.ok) throw gasolineError(o.code, `${pageFlat(o.message)} (${by})`);
  return ctx.text(formatResult(q.type, o.result, by));
}

/** The producer's own words (client, version, session) come from its hello: page-controlled text. */
function producerLine(p: ProducerRef, answered: boolean): string {
  return `${answered ? 'answered by' : 'sent to'} producer #${p.id} (client ${pageText(p.client, 64)}, version ${pageText(p.version, 32)}, session ${pageText(p.session, 64)})`;
}
