/**
 * observe: what the browser did. Reads the rings through the caller's cursors ("new" = what
 * this client has not read yet), filters, and answers in compact lines with a header that says
 * what matched, what is shown, what was evicted, and the cursor to continue. Lists fold and fill
 * their budget in observe-list.ts; the cross-kind overview is summary.ts. Every answer, whatever
 * its kind, leaves through `budgeted` so it fits the caller's character budget after redaction.
 */
import type { z } from 'zod';
import { kindId, type Kind } from '../../domain/kinds.js';
import { errorSignature } from '../../domain/signals/signature.js';
import { rate, METRICS } from '../../domain/signals/vitals.js';
import { badCursor, decodeCursor, encodeAt, errorContext, findErrors, hitsBefore, lastPage, MAX_CONNS, perfByUrl, wsConnections, type Hit, type Rec } from '../../query/index.js';
import { DEFAULT_BUDGET, fill } from '../render/budget.js';
import { budgeted, fromPage, plain, type Rendered } from '../render/egress.js';
import { line } from '../render/format.js';
import { moreFrames } from '../render/frames.js';
import { pageText } from '../render/page-text.js';
import type { ToolContext, ToolResult } from './context.js';
import { filterOf, list, mappedFrames } from './observe-list.js';
import { tabScope } from './tab-scope.js';
import { oneAtATime } from './per-client.js';
import { ciResults } from './ci.js';
import { commandResult } from './run-command.js';
import { summary } from './summary.js';
import type { ObserveInput } from '../tool-defs.js';

type Args = { [K in keyof typeof ObserveInput]: z.infer<(typeof ObserveInput)[K]> } & {
  /** characters of the budget already promised to what rides along (the alert block); never from clients */
  reserve?: number;
};

const MAX_SCAN = 20_000;
/** per call; a result cut by it says so and gives the cursor to go on */
const BUDGET_MS = 2;

const KIND_OF: Record<string, Kind[]> = {
  errors: ['logs'],
  logs: ['logs'],
  network: ['network'],
  network_bodies: ['network_bodies'],
  websocket_events: ['ws_events'],
  actions: ['actions'],
  timeline: ['logs', 'network', 'ws_events', 'actions', 'perf'],
};

export async function observe(ctx: ToolContext, a: Args): Promise<ToolResult> {
  if (a.what === 'command_result') return commandResult(ctx, a.query_id);
  // no store, no answer: throws no_ingest before any cursor moves
  ctx.reader();
  const budget = (a.budget ?? DEFAULT_BUDGET) - (a.reserve ?? 0);
  // with an alert block riding along, the block carries the page-data note: once per answer
  const answer = (out: Rendered, hint: string): ToolResult => budgeted(ctx, a.reserve ? { ...out, page: false } : out, budget, hint);
  switch (a.what) {
    case 'summary':
      return answer(await oneAtATime(ctx.client, () => summary(ctx)), 'ask per kind with the calls named above');
    case 'websocket_status':
      return answer(await websocketStatus(ctx, a), 'filter with tab_id');
    case 'performance':
      return answer(performance(ctx, a), 'filter with url');
    case 'page':
      return answer(page(ctx), '');
    case 'ci':
      return answer(ciResults(ctx, a.limit), 'lower limit');
    case 'error_bundles':
      return answer(await oneAtATime(ctx.client, () => errorBundles(ctx, a)), 'lower limit or window_s');
    default: {
      const kinds = KIND_OF[a.what]!;
      const out = a.before !== undefined ? listBefore(ctx, a, kinds) : await oneAtATime(ctx.client, () => list(ctx, a, kinds));
      return answer(out, 'page with the cursor');
    }
  }
}

/** Paging back: the `limit` matching records just before the cursor that fit the budget, oldest first. */
function listBefore(ctx: ToolContext, a: Args, kinds: Kind[]): Rendered {
  const reader = ctx.reader();
  const c = decodeCursor(a.before!, kinds.length);
  if (!c) throw badCursor('before', a.before!, a.what);
  // a cursor over an answered range pages back from that range's end
  const end = 'at' in c ? c.at : c.to;
  const hide = (r: Rec): boolean => ctx.client.noisy(r) !== undefined;
  // newest first into the budget, so the cursor to go further back starts where this page does
  const hits = hitsBefore(reader, { kinds: kinds.map(kindId), end, filter: filterOf(a), hide, tab: a.tab_id, scope: tabScope(ctx), maxScan: MAX_SCAN, budgetMs: BUDGET_MS });
  // paging back shows what is already resolved; it does not wait for maps
  const stacks = ctx.port.stacks;
  const frames = stacks?.enabled ? (rec: Rec) => stacks.lookup(rec) : undefined;
  const { shown, omitted } = fill(hits, (a.budget ?? DEFAULT_BUDGET) - (a.reserve ?? 0) - 300, a.limit ?? 50, (h) => line(h, a.contains, frames));
  shown.reverse();
  const first = kinds.map((k, i) => shown.find((s) => s.item.kind === kindId(k))?.item.ord ?? end[i]!);
  const earlier = omitted.length ? `\nearlier: observe({what:"${a.what}", before:"${encodeAt(first)}"})` : '';
  return fromPage(`${a.what} (before cursor): ${shown.length} shown${earlier}\n${shown.map((s) => s.text).join('\n')}`.trimEnd(), shown.length > 0);
}

async function websocketStatus(ctx: ToolContext, a: Args): Promise<Rendered> {
  const conns = await wsConnections(ctx.reader(), MAX_SCAN, a.tab_id, tabScope(ctx));
  if (!conns.size) return plain('websocket_status: no WebSocket connections captured');
  const lines = [...conns.values()].slice(-50).map((c) => {
    const secs = Math.max(1, (c.last - c.first) / 1000);
    const lastMsg = c.lastMsg ? `${c.lastMsg.outgoing ? '→' : '←'} ${pageText(c.lastMsg.data, 300)}` : '-';
    return `${pageText(c.id, 100)} ${c.state}${c.code !== undefined ? `(${String(c.code)})` : ''} ${pageText(c.url, 200)} in=${c.in} out=${c.out} rate=${((c.in + c.out) / secs).toFixed(1)}/s last=${lastMsg}`;
  });
  const all = [...conns.values()];
  const untracked = all.filter((c) => c.state === 'untracked').length;
  // the extension follows the newest 20 open connections: say which ones it let go (#20 item 6)
  const evicted = untracked ? `; ${untracked} no longer followed: the extension follows the newest 20 open connections and let the oldest go (state untracked, counts up to then)` : '';
  return fromPage(`websocket_status: ${conns.size}${conns.size >= MAX_CONNS ? '+' : ''} connections (${all.filter((c) => c.state === 'open').length} open${evicted})\n${lines.join('\n')}`);
}

function performance(ctx: ToolContext, a: Args): Rendered {
  const by = perfByUrl(ctx.reader(), undefined, tabScope(ctx));
  const rows: string[] = [];
  for (const [url, snaps] of by) {
    if (a.url && !url.includes(a.url)) continue;
    const last = snaps[snaps.length - 1]!;
    const parts = METRICS.filter((m) => typeof last.timing[m] === 'number').map((m) => {
      const v = last.timing[m] as number;
      const r = rate(m, v);
      return `${m}=${m === 'cls' ? v.toFixed(3) : Math.round(v)}${r ? `(${r})` : ''}`;
    });
    rows.push(`${pageText(url, 200)} ${parts.join(' ')} [${snaps.length} loads]`);
  }
  return rows.length ? fromPage(`performance: latest vitals for ${rows.length} URLs\n${rows.slice(-100).join('\n')}`) : plain('performance: no page-load snapshots captured');
}

function page(ctx: ToolContext): Rendered {
  const best = lastPage(ctx.reader(), tabScope(ctx));
  const producers = ctx.producers();
  const ext = producers.some((p) => p.client === 'extension') ? 'extension connected' : 'extension NOT connected';
  if (!best) return plain(`page: nothing reported yet (${ext})`);
  return fromPage(`page: ${pageText(best.url, 500)}${best.tab >= 0 ? ` tab=${best.tab}` : ''}, last reported ${Math.round((Date.now() - best.t) / 1000)}s ago (${ext})`);
}

function startOrds(ctx: ToolContext, a: Args, kinds: Kind[]): number[] {
  const reader = ctx.reader();
  if (a.after) {
    const c = decodeCursor(a.after, kinds.length);
    if (!c || !('at' in c)) throw badCursor('after', a.after, a.what);
    return c.at;
  }
  if (a.from === 'start') return kinds.map((k) => reader.tailOrd(kindId(k)));
  return kinds.map((k) => ctx.client.cursors[kindId(k)]!);
}

/** Each error with what happened just before it (query/error-bundles.ts finds both), whole bundles within the budget. */
async function errorBundles(ctx: ToolContext, a: Args): Promise<Rendered> {
  const reader = ctx.reader();
  const start = startOrds(ctx, a, ['logs']);
  const windowMs = (a.window_s ?? 5) * 1000;
  const k = kindId('logs');
  const limit = Math.min(a.limit ?? 5, 20);
  const r = await findErrors(reader, { from: start[0]!, limit, maxScan: MAX_SCAN, filter: filterOf(a), hide: (rec) => ctx.client.noisy(rec) !== undefined, tab: a.tab_id, scope: tabScope(ctx) });
  const hits = r.hits;
  if (!hits.length) {
    if (!a.after && a.from !== 'start') ctx.client.cursors[k] = r.next;
    // the read stopped on its budget before the newest record: say so, and where to go on
    if (!r.atEnd) return plain(`error_bundles: no errors in the ${r.scanned} records read so far\nmore: observe({what:"error_bundles", after:"${encodeAt([r.next])}"})`);
    return plain(`error_bundles: no errors${a.from === 'start' ? ' buffered' : ' since your last look'}`);
  }
  // the errors' original frames (waited for within source_maps.wait_ms); the rest of each stack on a line of its own
  const frames = await mappedFrames(ctx, hits, true);
  const bundle = (e: Hit): string => {
    const mapped = frames?.(e.rec);
    const more = mapped && moreFrames(mapped);
    return [`■ ${line(e, a.contains, frames)}  sig=${pageText(errorSignature(e.rec), 300)}`, ...(more ? [`  ${more}`] : []), ...errorContext(reader, e, windowMs).map((h) => `  ${line(h, undefined, frames)}`)].join('\n');
  };
  // whole bundles within the budget; the cursor resumes at the first bundle left out, so none is skipped
  const { shown, omitted } = fill(hits, (a.budget ?? DEFAULT_BUDGET) - (a.reserve ?? 0) - 300, limit, bundle);
  const next = omitted.length ? omitted[0]!.ord : r.next;
  if (!a.after && a.from !== 'start') ctx.client.cursors[k] = next;
  const complete = r.atEnd && !omitted.length && hits.length >= r.matched;
  const head = `error_bundles: ${r.matched}${r.atEnd ? '' : '+'} errors, ${shown.length} shown, each with the ${a.window_s ?? 5}s before it${complete ? '' : `\nmore: observe({what:"error_bundles", after:"${encodeAt([next])}"})`}`;
  return fromPage([head, ...shown.map((b) => b.text)].join('\n'), shown.length > 0);
}
