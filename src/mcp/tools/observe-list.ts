/**
 * observe's list answers (errors, logs, network, …, timeline): scan from the caller's cursors in
 * slices, fold repeats into one line each, fill the character budget most severe first then
 * newest, show what was chosen in time order, and say in the header what matched and what is
 * shown. Whatever did not fit is counted and reachable by a cursor over the same range.
 */
import { kindId, type Kind } from '../../domain/kinds.js';
import { badCursor, bySeverityThenNewest, decodeCursor, encodeAt, encodeRest, errorKeysBefore, latestCheckpoint, type FilterArgs, type FoldAnswer, type Group, type Hit, type KindResult } from '../../query/index.js';
import { DEFAULT_BUDGET, fill } from '../render/budget.js';
import { fromPage, type Rendered } from '../render/egress.js';
import { clock, line } from '../render/format.js';
import type { FrameLookup } from '../render/frames.js';
import { pageText } from '../render/page-text.js';
import type { ToolContext } from './context.js';
import { foldFor } from './fold-call.js';

export interface ListArgs extends FilterArgs {
  limit?: number | undefined;
  from?: 'new' | 'start' | undefined;
  after?: string | undefined;
  tab_id?: number | undefined;
  fold?: boolean | undefined;
  budget?: number | undefined;
  /** part of the budget promised to what rides along (the alert block) */
  reserve?: number | undefined;
}

const MAX_SCAN = 20_000;
const NOISE_WHATS = new Set(['timeline', 'errors', 'logs', 'network']);

/** `contains`: the filter the group matched, shown where the line would not show it */
export function renderGroup(g: Group, contains?: string, frames?: FrameLookup): string {
  return g.count > 1 ? `×${g.count} ${clock(g.firstTime)}..${line(g.example, contains, frames)}` : line(g.example, contains, frames);
}

/** The call that continues this view: same filters, another cursor. */
export function callWith(a: ListArgs, after: string): string {
  const keep = Object.entries(a).filter(([k, v]) => v !== undefined && k !== 'from' && k !== 'after' && k !== 'before' && k !== 'reserve');
  return `observe({${[...keep, ['after', after] as const].map(([k, v]) => `${k}:${JSON.stringify(v)}`).join(', ')}})`;
}

export async function list(ctx: ToolContext, a: ListArgs, kinds: Kind[]): Promise<Rendered> {
  const reader = ctx.reader();
  const cursor = a.after !== undefined ? decodeCursor(a.after, kinds.length) : null;
  if (a.after !== undefined && !cursor) throw badCursor('after', a.after, a.what);
  const ids = kinds.map(kindId);
  const start = cursor ? ('at' in cursor ? cursor.at : cursor.from) : a.from === 'start' ? ids.map((k) => reader.tailOrd(k)) : ids.map((k) => ctx.client.cursors[k]!);
  const to = cursor && 'to' in cursor ? cursor.to : undefined;
  const skip = cursor && 'skip' in cursor ? cursor.skip : 0;
  const budget = (a.budget ?? DEFAULT_BUDGET) - (a.reserve ?? 0);
  const limit = a.limit ?? 50;
  // only the groups this answer can show (the `limit` after `skip`, in fill order) need their records
  const folded = await foldFor(ctx, { kinds: ids, start, to, maxScan: MAX_SCAN, filter: filterOf(a), fold: a.fold !== false, tab: a.tab_id, examples: skip + limit }, NOISE_WHATS.has(a.what));
  const results = folded.results;
  const next = results.map((r) => r.next);
  const complete = results.every((r) => r.atEnd && !r.stopped);
  if (!a.after && a.from !== 'start') {
    ids.forEach((k, i) => {
      ctx.client.cursors[k] = next[i]!;
    });
  }

  const size = folded.groups.length;
  const ordered = [...folded.groups].sort(bySeverityThenNewest).slice(skip);
  const rangeFrom = start;
  const rangeTo = to ?? next;
  // header and footers are sized first with worst-case numbers, so lines can use all the rest
  const header = await headerOf(ctx, a, folded, results, Boolean(cursor));
  const restLine = (n: number, records: number, shown: number): string =>
    `not shown: ${n} ${folded.fold ? 'lines' : 'records'}${folded.fold ? ` (${records} records)` : ''} over the ${shown >= limit ? `limit ${limit}` : `${budget}-char budget`} → ${callWith(a, encodeRest(rangeFrom, rangeTo, skip + shown))}`;
  const moreLine = complete ? '' : `more: ${results.some((r) => r.stopped) ? `${size} distinct signatures fill this answer` : 'scan paused'}; continue → ${callWith(a, encodeAt(next))}`;
  // +8: the limit wording and a longer skip count in the rest cursor
  const worst = header(ordered.length).length + restLine(folded.records, folded.records, 0).length + moreLine.length + 3 + 8;
  const frames = await mappedFrames(ctx, ordered.slice(0, limit).map((g) => g.example), a.what === 'errors');
  const { shown, omitted } = fill(ordered, budget - worst, limit, (g) => renderGroup(g, a.contains, frames));
  shown.sort((x, y) => x.item.lastSeq - y.item.lastSeq);
  const out = [header(shown.length)];
  if (omitted.length) out.push(restLine(omitted.length, omitted.reduce((n, g) => n + g.count, 0), shown.length));
  if (moreLine) out.push(moreLine);
  for (const s of shown) out.push(s.text);
  return fromPage(out.join('\n'), shown.length > 0);
}

/**
 * Source-mapped positions for the logs an answer may show (issue 21 item 4): what is missing is
 * asked for; `wait` (errors, error_bundles) waits for it within source_maps.wait_ms, other lists
 * show what is already resolved and find the rest next time.
 */
export async function mappedFrames(ctx: ToolContext, hits: readonly Hit[], wait: boolean): Promise<FrameLookup | undefined> {
  const stacks = ctx.port.stacks;
  if (!stacks?.enabled) return undefined;
  const logsK = kindId('logs');
  const recs = hits.filter((h) => h.kind === logsK && (h.rec.stack !== undefined || h.rec.source !== undefined || h.rec.filename !== undefined)).map((h) => h.rec);
  if (!recs.length) return undefined;
  if (wait) await stacks.settle(recs);
  else for (const r of recs) stacks.warm(r);
  return (rec) => stacks.lookup(rec);
}

/** The first line, given how many lines end up shown. */
async function headerOf(ctx: ToolContext, a: ListArgs, folder: FoldAnswer, results: KindResult[], paged: boolean): Promise<(shown: number) => string> {
  const scope = paged ? 'after cursor' : a.from === 'start' ? 'all buffered' : 'new since your last look';
  const hidden = results.reduce((n, r) => n + r.hidden, 0);
  const missed = results.reduce((n, r) => n + r.missed, 0);
  const complete = results.every((r) => r.atEnd && !r.stopped);
  const n = `${folder.records}${complete ? '' : '+'}`;
  const rest: string[] = [];
  if (hidden) rest.push(`${hidden} hidden by noise rules`);
  if (missed) rest.push(`${missed} evicted before you read them`);
  const fresh = a.what === 'errors' && folder.fold && folder.groups.length ? await newSinceCheckpoint(ctx, folder) : '';
  if (fresh) rest.push(fresh);
  return (shown) => [`${a.what} (${scope}): ${n} matched${folder.records && folder.fold ? ` (${folder.groups.length} distinct)` : ''}${folder.records ? `, showing ${shown}` : ''}`, ...rest].join('; ');
}

async function newSinceCheckpoint(ctx: ToolContext, folder: FoldAnswer): Promise<string> {
  const cp = latestCheckpoint(ctx.client.checkpoints);
  if (!cp) return '';
  const before = await errorKeysBefore(ctx.reader(), cp);
  const fresh = folder.groups.filter((g) => !before.has(g.key)).length;
  return `${fresh} new signature${fresh === 1 ? '' : 's'} since checkpoint ${pageText(cp.name, 100)}`;
}

/** Only the filter fields: the query crosses to the scan worker as plain data. */
export function filterOf(a: FilterArgs): FilterArgs {
  const { what, min_level, method, status_min, status_max, connection_id, direction, url, contains } = a;
  return { what, min_level, method, status_min, status_max, connection_id, direction, url, contains };
}
