/**
 * observe: what the browser did. Reads the rings through the caller's cursors ("new" = what
 * this client has not read yet), filters, and answers in compact lines with a header that says
 * what matched, what is shown, what was evicted, and the cursor to continue. Lists fold and fill
 * their budget in observe-list.ts; the cross-kind overview is summary.ts. Every answer, whatever
 * its kind, leaves through `budgeted` so it fits the caller's character budget after redaction.
 */
import { z } from 'zod';
import { kindId, type Kind } from '../../domain/kinds.js';
import { errorSignature } from '../../domain/signals/signature.js';
import { rate, METRICS, type Metric } from '../../domain/signals/vitals.js';
import { DEFAULT_BUDGET, fill } from '../render/budget.js';
import { badCursor, decodeCursor, encodeAt } from '../../query/index.js';
import { budgeted } from '../render/egress.js';
import { oneAtATime } from './per-client.js';
import { line } from '../render/format.js';
import { lastMatching, scan, type Hit, type Rec } from '../../query/index.js';
import type { RecordHeader } from '../../shm/index.js';
import { ScanBudget, scanSliced } from '../../query/index.js';
import type { ToolContext, ToolResult } from './context.js';
import { commandResult } from './run-command.js';
import { matcher, prefilter } from '../../query/index.js';
import { list } from './observe-list.js';
import { summary } from './summary.js';

export const OBSERVE_WHATS = ['summary', 'errors', 'logs', 'network', 'network_bodies', 'websocket_events', 'websocket_status', 'actions', 'performance', 'page', 'timeline', 'error_bundles', 'command_result'] as const;

export const ObserveInput = {
  what: z.enum(OBSERVE_WHATS).describe('summary first: everything new, with the call to make next'),
  limit: z.number().int().min(1).max(500).optional().describe('max lines, default 50'),
  fold: z.boolean().optional().describe('default true: repeats are one line ×count; false lists each'),
  budget: z.number().int().min(1000).max(60_000).optional().describe('max chars, default 8000; the rest by cursor'),
  from: z.enum(['new', 'start']).optional().describe('new (default): unread by you; start: all buffered'),
  after: z.string().max(200).optional().describe('cursor from a previous result: continue forward'),
  before: z.string().max(200).optional().describe('cursor: the records just before it (page back)'),
  url: z.string().max(500).optional().describe('url substring'),
  contains: z.string().max(500).optional().describe('text substring'),
  tab_id: z.number().int().optional(),
  min_level: z.enum(['debug', 'log', 'info', 'warn', 'error']).optional().describe('logs'),
  method: z.string().max(16).optional().describe('network'),
  status_min: z.number().int().optional().describe('network'),
  status_max: z.number().int().optional().describe('network'),
  connection_id: z.string().max(200).optional().describe('websocket_events'),
  direction: z.enum(['incoming', 'outgoing']).optional().describe('websocket_events'),
  window_s: z.number().min(1).max(120).optional().describe('error_bundles: seconds before each error, default 5'),
  query_id: z.string().max(64).optional().describe('command_result'),
};

type Args = { [K in keyof typeof ObserveInput]: z.infer<(typeof ObserveInput)[K]> } & {
  /** characters of the budget already promised to what rides along (the alert block); never from clients */
  reserve?: number;
};

const MAX_SCAN = 20_000;
/** a log record's level as stored: the context of an error shows warnings and errors */
const WARN_OR_ERROR = [Buffer.from('"level":"warn"'), Buffer.from('"level":"error"')];
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
  const answer = (out: string, hint: string): ToolResult => budgeted(ctx, out, budget, hint);
  switch (a.what) {
    case 'summary':
      return answer(await oneAtATime(ctx.client, () => summary(ctx)), 'ask per kind with the calls named above');
    case 'websocket_status':
      return answer(await websocketStatus(ctx, a), 'filter with tab_id');
    case 'performance':
      return answer(performance(ctx, a), 'filter with url');
    case 'page':
      return answer(page(ctx), '');
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
function listBefore(ctx: ToolContext, a: Args, kinds: Kind[]): string {
  const reader = ctx.reader();
  const c = decodeCursor(a.before!, kinds.length);
  if (!c) throw badCursor('before', a.before!, a.what);
  // a cursor over an answered range pages back from that range's end
  const end = 'at' in c ? c.at : c.to;
  const limit = a.limit ?? 50;
  const match = matcher(a);
  const hide = (r: Rec): boolean => ctx.client.noisy(r) !== undefined;
  const back = Math.floor(MAX_SCAN / kinds.length);
  const hits: Hit[] = [];
  kinds.forEach((k, i) => {
    const id = kindId(k);
    const from = Math.max(reader.tailOrd(id), end[i]! - back);
    const r = scan(reader, { kind: id, from, limit: back, maxScan: back, budgetMs: BUDGET_MS / kinds.length, ...prefilter(a), match: (rec, h) => h.ord < end[i]! && match(rec), hide, tab: a.tab_id });
    hits.push(...r.hits);
  });
  // newest first into the budget, so the cursor to go further back starts where this page does
  hits.sort((x, y) => y.seq - x.seq);
  const { shown, omitted } = fill(hits, (a.budget ?? DEFAULT_BUDGET) - (a.reserve ?? 0) - 300, limit, line);
  shown.reverse();
  const first = kinds.map((k, i) => shown.find((s) => s.item.kind === kindId(k))?.item.ord ?? end[i]!);
  const earlier = omitted.length ? `\nearlier: observe({what:"${a.what}", before:"${encodeAt(first)}"})` : '';
  return `${a.what} (before cursor): ${shown.length} shown${earlier}\n${shown.map((s) => s.text).join('\n')}`.trimEnd();
}

/** Connections tracked per call: more than an answer can show, few enough to bound the map. */
const MAX_CONNS = 1000;

async function websocketStatus(ctx: ToolContext, a: Args): Promise<string> {
  const reader = ctx.reader();
  const k = kindId('ws_events');
  interface Conn { id: string; url: string; state: string; in: number; out: number; first: number; last: number; lastMsg: string; code?: unknown }
  const conns = new Map<string, Conn>();
  const add = (h: Hit): boolean => {
    const e = h.rec;
    const id = String(e.id);
    let c = conns.get(id);
    if (!c) {
      if (conns.size >= MAX_CONNS) return true;
      conns.set(id, (c = { id, url: String(e.url ?? ''), state: 'open', in: 0, out: 0, first: h.clientTime, last: h.clientTime, lastMsg: '' }));
    }
    if (e.url) c.url = String(e.url);
    c.last = h.clientTime;
    if (e.event === 'close') {
      c.state = 'closed';
      c.code = e.code;
    } else if (e.event === 'error') c.state = 'error';
    else if (e.event === 'open') c.state = 'open';
    else if (e.event === 'message') {
      if (e.direction === 'outgoing') c.out++;
      else c.in++;
      c.lastMsg = `${e.direction === 'outgoing' ? '→' : '←'} ${JSON.stringify(String(e.data ?? '').slice(0, 120))}`;
    }
    return true;
  };
  // a busy socket buffers 20 000 frames: read in slices so the main thread keeps emitting pushes
  // (the whole buffer, unlike a list: a status has no cursor to continue from)
  await scanSliced(reader, { kind: k, from: reader.tailOrd(k), limit: 0, maxScan: MAX_SCAN, tab: a.tab_id, sink: add }, new ScanBudget(1000));
  if (!conns.size) return 'websocket_status: no WebSocket connections captured';
  const lines = [...conns.values()].slice(-50).map((c) => {
    const secs = Math.max(1, (c.last - c.first) / 1000);
    return `${c.id} ${c.state}${c.code !== undefined ? `(${String(c.code)})` : ''} ${c.url} in=${c.in} out=${c.out} rate=${((c.in + c.out) / secs).toFixed(1)}/s last=${c.lastMsg || '-'}`;
  });
  return `websocket_status: ${conns.size}${conns.size >= MAX_CONNS ? '+' : ''} connections (${[...conns.values()].filter((c) => c.state === 'open').length} open)\n${lines.join('\n')}`;
}

/** Latest snapshot per URL with ratings; also used by analyze. */
export function perfByUrl(ctx: ToolContext): Map<string, Array<{ t: number; timing: Partial<Record<Metric, number | null>> }>> {
  const reader = ctx.reader();
  const k = kindId('perf');
  const r = scan(reader, { kind: k, from: reader.tailOrd(k), limit: MAX_SCAN, maxScan: MAX_SCAN });
  const by = new Map<string, Array<{ t: number; timing: Partial<Record<Metric, number | null>> }>>();
  for (const h of r.hits) {
    const url = String(h.rec.url);
    let arr = by.get(url);
    if (!arr) by.set(url, (arr = []));
    arr.push({ t: h.clientTime, timing: (h.rec.timing ?? {}) as Partial<Record<Metric, number | null>> });
  }
  return by;
}

function performance(ctx: ToolContext, a: Args): string {
  const by = perfByUrl(ctx);
  const rows: string[] = [];
  for (const [url, snaps] of by) {
    if (a.url && !url.includes(a.url)) continue;
    const last = snaps[snaps.length - 1]!;
    const parts = METRICS.filter((m) => typeof last.timing[m] === 'number').map((m) => {
      const v = last.timing[m] as number;
      const r = rate(m, v);
      return `${m}=${m === 'cls' ? v.toFixed(3) : Math.round(v)}${r ? `(${r})` : ''}`;
    });
    rows.push(`${url} ${parts.join(' ')} [${snaps.length} loads]`);
  }
  return rows.length ? `performance: latest vitals for ${rows.length} URLs\n${rows.slice(-100).join('\n')}` : 'performance: no page-load snapshots captured';
}

function page(ctx: ToolContext): string {
  const reader = ctx.reader();
  let best: { t: number; url: string; tab: number } | undefined;
  for (const kind of ['actions', 'perf', 'logs', 'network'] as Kind[]) {
    const k = kindId(kind);
    const from = Math.max(reader.tailOrd(k), reader.latestOrd(k) - 20);
    for (const h of scan(reader, { kind: k, from, limit: 20, maxScan: 20 }).hits) {
      const url = (kind === 'actions' && h.rec.type === 'navigate' ? h.rec.to_url : undefined) ?? h.rec.page_url ?? (kind === 'network' ? undefined : h.rec.url);
      if (typeof url === 'string' && (!best || h.recvTime >= best.t)) best = { t: h.recvTime, url, tab: h.tab };
    }
  }
  const producers = ctx.producers();
  const ext = producers.some((p) => p.client === 'extension') ? 'extension connected' : 'extension NOT connected';
  if (!best) return `page: nothing reported yet (${ext})`;
  return `page: ${best.url}${best.tab >= 0 ? ` tab=${best.tab}` : ''}, last reported ${Math.round((Date.now() - best.t) / 1000)}s ago (${ext})`;
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

/**
 * Each error with what happened just before it. Both halves stay light on the main thread: the
 * errors are found in 2 ms slices, and each bundle's context is picked on record headers (time
 * window) and bytes, parsing only the few records it shows.
 */
async function errorBundles(ctx: ToolContext, a: Args): Promise<string> {
  const reader = ctx.reader();
  const start = startOrds(ctx, a, ['logs']);
  const windowMs = (a.window_s ?? 5) * 1000;
  const k = kindId('logs');
  const limit = Math.min(a.limit ?? 5, 20);
  const hits: Hit[] = [];
  let afterHits = start[0]!;
  const match = matcher({ ...a, what: 'errors' });
  const r = await scanSliced(reader, {
    kind: k,
    from: start[0]!,
    limit: 0,
    maxScan: MAX_SCAN,
    ...prefilter({ ...a, what: 'errors' }),
    match,
    hide: (rec) => ctx.client.noisy(rec) !== undefined,
    tab: a.tab_id,
    sink: (h) => {
      if (hits.length < limit) {
        hits.push(h);
        afterHits = h.ord + 1;
      }
      return true;
    },
  });
  // past the shown errors the cursor resumes after the last of them; otherwise where the scan ended
  const scanNext = r.matched > hits.length ? afterHits : r.next;
  if (!hits.length) {
    if (!a.after && a.from !== 'start') ctx.client.cursors[k] = scanNext;
    // the read stopped on its budget before the newest record: say so, and where to go on
    if (!r.atEnd) return `error_bundles: no errors in the ${r.scanned} records read so far\nmore: observe({what:"error_bundles", after:"${encodeAt([scanNext])}"})`;
    return `error_bundles: no errors${a.from === 'start' ? ' buffered' : ' since your last look'}`;
  }
  const bundle = (e: Hit): string => {
    const out = [`■ ${line(e)}  sig=${JSON.stringify(errorSignature(e.rec))}`];
    const inWindow = (h: RecordHeader): boolean => h.clientTime <= e.clientTime && h.clientTime >= e.clientTime - windowMs;
    for (const kind of ['actions', 'network', 'logs'] as Kind[]) {
      const kk = kindId(kind);
      // context lies just before the error; look back a bounded distance from its position
      const back = kind === 'logs' ? e.ord : reader.latestOrd(kk);
      const ctxHits = lastMatching(reader, {
        kind: kk,
        from: Math.max(reader.tailOrd(kk), back - 2000),
        ...(kind === 'logs' ? { to: e.ord, anyOf: WARN_OR_ERROR, verify: (rec: Rec) => rec.level === 'warn' || rec.level === 'error' } : {}),
        n: 8,
        maxScan: 2000,
        where: inWindow,
      });
      for (const h of ctxHits) out.push(`  ${line(h)}`);
    }
    return out.join('\n');
  };
  // whole bundles within the budget; the cursor resumes at the first bundle left out, so none is skipped
  const { shown, omitted } = fill(hits, (a.budget ?? DEFAULT_BUDGET) - (a.reserve ?? 0) - 300, limit, bundle);
  const next = omitted.length ? omitted[0]!.ord : scanNext;
  if (!a.after && a.from !== 'start') ctx.client.cursors[k] = next;
  const complete = r.atEnd && !omitted.length && hits.length >= r.matched;
  const head = `error_bundles: ${r.matched}${r.atEnd ? '' : '+'} errors, ${shown.length} shown, each with the ${a.window_s ?? 5}s before it${complete ? '' : `\nmore: observe({what:"error_bundles", after:"${encodeAt([next])}"})`}`;
  return [head, ...shown.map((b) => b.text)].join('\n');
}
