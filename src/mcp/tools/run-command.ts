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

export const NO_SERVER = 'no browser commands: the ingest server is not running, so no extension can connect. Stop the other process on the port or set GASOLINE_PORT, then restart this MCP server.';

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
  // without an id: the next answer nobody was handed yet, oldest first (a cursor over them)
  const q = queryId ? router.get(ctx.clientId, queryId) : router.unseen(ctx.clientId)[0];
  if (!q) {
    if (!queryId) return ctx.text('no command results waiting for you (with query_id:"…" one is fetched by its id)');
    throw gasolineError('unknown_query', `no query ${JSON.stringify(queryId.slice(0, 40))} for you (answers are kept up to 5 minutes, the latest 16 per client, only for the client that asked)`);
  }
  if (!q.outcome) return ctx.text(stillRunning(q));
  q.seen = true;
  return answer(ctx, q, q.outcome);
}

/** One line on the next call when answers finished that nobody was handed (a lost session, a call that stopped waiting). */
export function unseenNote(ctx: Pick<ToolContext, 'port' | 'clientId'>, told: { ids: string }): string {
  const qs = ctx.port.commands?.unseen(ctx.clientId) ?? [];
  const ids = qs.map((q) => q.id).join(',');
  if (!qs.length || ids === told.ids) return '';
  told.ids = ids;
  return `${qs.length} command result${qs.length === 1 ? '' : 's'} finished for you that no call has shown (${qs.map((q) => `${q.type} ${q.id}`).join(', ')}): observe({what:"command_result"}) hands them over, oldest first`;
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
