/**
 * observe: what the browser did. Reads the rings through the caller's cursors ("new" = what
 * this client has not read yet), filters, and answers in compact lines with a header that says
 * what matched, what is shown, what was evicted, and the cursor to continue.
 */
import { z } from 'zod';
import { kindId, type Kind } from '../../domain/kinds.js';
import { errorSignature } from '../../domain/query/signature.js';
import { rate, METRICS, type Metric } from '../../domain/query/vitals.js';
import { line } from '../format.js';
import { scan, type Hit, type Rec, type ScanResult } from '../query.js';
import type { ToolContext, ToolResult } from './context.js';
import { commandResult } from './run-command.js';

export const OBSERVE_WHATS = ['errors', 'logs', 'network', 'network_bodies', 'websocket_events', 'websocket_status', 'actions', 'performance', 'page', 'timeline', 'error_bundles', 'command_result'] as const;

export const ObserveInput = {
  what: z.enum(OBSERVE_WHATS).describe('errors|logs|network|network_bodies|websocket_events|websocket_status|actions|performance|page|timeline|error_bundles|command_result'),
  limit: z.number().int().min(1).max(500).optional().describe('max records, default 50'),
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

type Args = { [K in keyof typeof ObserveInput]: z.infer<(typeof ObserveInput)[K]> };

const MAX_SCAN = 20_000;
/** per call; a result cut by it says so and gives the cursor to go on */
const BUDGET_MS = 2;
const MAX_CHARS = 100_000;
const LEVELS = ['debug', 'log', 'info', 'warn', 'error'];

const KIND_OF: Record<string, Kind[]> = {
  errors: ['logs'],
  logs: ['logs'],
  network: ['network'],
  network_bodies: ['network_bodies'],
  websocket_events: ['ws_events'],
  actions: ['actions'],
  timeline: ['logs', 'network', 'ws_events', 'actions', 'perf'],
};

export function observe(ctx: ToolContext, a: Args): ToolResult {
  if (a.what === 'command_result') return commandResult(ctx, a.query_id);
  const reader = ctx.reader();
  if (typeof reader === 'string') return ctx.error(reader);
  switch (a.what) {
    case 'websocket_status':
      return ctx.text(websocketStatus(ctx, a));
    case 'performance':
      return ctx.text(performance(ctx, a));
    case 'page':
      return ctx.text(page(ctx));
    case 'error_bundles': {
      const out = errorBundles(ctx, a);
      return out.startsWith('ERROR ') ? ctx.error(out.slice(6)) : ctx.text(out);
    }
    default: {
      const out = list(ctx, a);
      return out.startsWith('ERROR ') ? ctx.error(out.slice(6)) : ctx.text(out);
    }
  }
}

function matcher(a: Args): (r: Rec) => boolean {
  const minLevel = a.min_level ? LEVELS.indexOf(a.min_level) : -1;
  const method = a.method?.toUpperCase();
  const contains = a.contains?.toLowerCase();
  return (r) => {
    if (a.what === 'errors' && !(r.level === 'error' || r.type === 'exception' || (r.type === 'network' && (Number(r.status ?? 0) >= 400 || r.status === undefined || r.error !== undefined)))) return false;
    if (minLevel >= 0 && LEVELS.indexOf(String(r.level)) < minLevel) return false;
    if (method && String(r.method ?? '').toUpperCase() !== method) return false;
    if (a.status_min !== undefined && !(Number(r.status) >= a.status_min)) return false;
    if (a.status_max !== undefined && !(Number(r.status) <= a.status_max)) return false;
    if (a.connection_id !== undefined && r.id !== a.connection_id) return false;
    if (a.direction !== undefined && r.direction !== a.direction) return false;
    if (a.url) {
      const u = [r.url, r.request_url, r.page_url, r.to_url].filter((x) => typeof x === 'string').join(' ');
      if (!u.includes(a.url)) return false;
    }
    if (contains && !JSON.stringify(r).toLowerCase().includes(contains)) return false;
    return true;
  };
}

function prefilter(a: Args): { anyOf?: Buffer[]; allOf?: Buffer[] } {
  const allOf: Buffer[] = [];
  if (a.url) allOf.push(Buffer.from(JSON.stringify(a.url).slice(1, -1)));
  if (a.connection_id) allOf.push(Buffer.from(JSON.stringify(a.connection_id)));
  const out: { anyOf?: Buffer[]; allOf?: Buffer[] } = allOf.length ? { allOf } : {};
  if (a.what === 'errors') out.anyOf = [Buffer.from('"level":"error"'), Buffer.from('"type":"exception"'), Buffer.from('"type":"network"')];
  return out;
}

function decodeCursor(s: string, n: number): number[] | null {
  const parts = s.split('.').map((p) => Number.parseInt(p, 36));
  if (parts.length !== n || parts.some((p) => !Number.isFinite(p) || p < 0)) return null;
  return parts;
}

const encodeCursor = (ords: number[]): string => ords.map((o) => o.toString(36)).join('.');

function startOrds(ctx: ToolContext, a: Args, kinds: Kind[]): number[] | string {
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
  if (a.after) {
    const c = decodeCursor(a.after, kinds.length);
    if (!c) return `after: "${a.after}" is not a cursor of observe({what:"${a.what}"}); use the cursor from that result, or from:"start"`;
    return c;
  }
  if (a.from === 'start') return kinds.map((k) => reader.tailOrd(kindId(k)));
  return kinds.map((k) => ctx.client.cursors[kindId(k)]!);
}

function list(ctx: ToolContext, a: Args): string {
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
  const kinds = KIND_OF[a.what]!;
  if (a.before !== undefined) return listBefore(ctx, a, kinds);
  const start = startOrds(ctx, a, kinds);
  if (typeof start === 'string') return `ERROR ${start}`;
  const limit = a.limit ?? 50;
  const match = matcher(a);
  const hide = a.what === 'timeline' || a.what === 'errors' || a.what === 'logs' || a.what === 'network' ? (r: Rec) => ctx.client.noisy(r) !== undefined : undefined;
  const results: ScanResult[] = kinds.map((k, i) =>
    scan(reader, { kind: kindId(k), from: start[i]!, limit, maxScan: Math.floor(MAX_SCAN / kinds.length), budgetMs: BUDGET_MS / kinds.length, ...prefilter(a), match, ...(hide ? { hide } : {}), tab: a.tab_id }),
  );
  let hits: Hit[] = results.flatMap((r) => r.hits);
  const next = results.map((r) => r.next);
  if (kinds.length > 1) {
    // timeline: merge by global seq, keep the oldest `limit`, and continue each kind after what was shown
    hits.sort((x, y) => x.seq - y.seq);
    hits = hits.slice(0, limit);
    kinds.forEach((k, i) => {
      const shown = hits.filter((h) => h.kind === kindId(k));
      if (shown.length < results[i]!.hits.length) next[i] = shown.length ? shown[shown.length - 1]!.ord + 1 : start[i]!;
    });
  }
  // answer within budget: never end mid-record
  const lines: string[] = [];
  let size = 0;
  let cut = -1;
  for (let i = 0; i < hits.length; i++) {
    const l = line(hits[i]!);
    if (size + l.length > MAX_CHARS) {
      cut = i;
      break;
    }
    lines.push(l);
    size += l.length + 1;
  }
  if (cut >= 0) {
    hits = hits.slice(0, cut);
    kinds.forEach((k, i) => {
      const shown = hits.filter((h) => h.kind === kindId(k));
      next[i] = shown.length ? shown[shown.length - 1]!.ord + 1 : start[i]!;
    });
  }
  const matched = results.reduce((n, r) => n + r.matched, 0);
  const hidden = results.reduce((n, r) => n + r.hidden, 0);
  const missed = results.reduce((n, r) => n + r.missed, 0);
  const complete = results.every((r) => r.atEnd) && hits.length >= matched;
  if (!a.after && a.from !== 'start') kinds.forEach((k, i) => (ctx.client.cursors[kindId(k)] = next[i]!));
  const scope = a.after ? 'after cursor' : a.from === 'start' ? 'all buffered' : 'new since your last look';
  const head = [`${a.what} (${scope}): ${matched}${complete ? '' : '+'} matched, ${hits.length} shown`];
  if (hidden) head.push(`${hidden} hidden by noise rules`);
  if (missed) head.push(`${missed} evicted before you read them`);
  const cursor = encodeCursor(next);
  const more = !complete || cut >= 0 ? `\nmore: observe({what:"${a.what}", after:"${cursor}"})` : '';
  return `${head.join('; ')}${more}\n${lines.join('\n')}`.trimEnd();
}

/** Paging back: the `limit` matching records just before the cursor, oldest first. */
function listBefore(ctx: ToolContext, a: Args, kinds: Kind[]): string {
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
  const end = decodeCursor(a.before!, kinds.length);
  if (!end) return `ERROR before: "${a.before}" is not a cursor of observe({what:"${a.what}"}); use a cursor from that result`;
  const limit = a.limit ?? 50;
  const match = matcher(a);
  const hide = (r: Rec): boolean => ctx.client.noisy(r) !== undefined;
  const back = Math.floor(MAX_SCAN / kinds.length);
  let hits: Hit[] = [];
  kinds.forEach((k, i) => {
    const id = kindId(k);
    const from = Math.max(reader.tailOrd(id), end[i]! - back);
    const r = scan(reader, { kind: id, from, limit: back, maxScan: back, budgetMs: BUDGET_MS / kinds.length, ...prefilter(a), match: (rec, h) => h.ord < end[i]! && match(rec), hide, tab: a.tab_id });
    hits.push(...r.hits);
  });
  hits.sort((x, y) => x.seq - y.seq);
  hits = hits.slice(-limit);
  const first = kinds.map((k, i) => {
    const mine = hits.filter((h) => h.kind === kindId(k));
    return mine.length ? mine[0]!.ord : end[i]!;
  });
  const lines = hits.map(line);
  const earlier = hits.length === limit ? `\nearlier: observe({what:"${a.what}", before:"${encodeCursor(first)}"})` : '';
  return `${a.what} (before cursor): ${hits.length} shown${earlier}\n${lines.join('\n')}`.trimEnd();
}

function websocketStatus(ctx: ToolContext, a: Args): string {
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
  const k = kindId('ws_events');
  const r = scan(reader, { kind: k, from: reader.tailOrd(k), limit: MAX_SCAN, maxScan: MAX_SCAN, tab: a.tab_id });
  interface Conn { id: string; url: string; state: string; in: number; out: number; first: number; last: number; lastMsg: string; code?: unknown }
  const conns = new Map<string, Conn>();
  for (const h of r.hits) {
    const e = h.rec;
    const id = String(e.id);
    let c = conns.get(id);
    if (!c) conns.set(id, (c = { id, url: String(e.url ?? ''), state: 'open', in: 0, out: 0, first: h.clientTime, last: h.clientTime, lastMsg: '' }));
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
  }
  if (!conns.size) return 'websocket_status: no WebSocket connections captured';
  const lines = [...conns.values()].slice(-50).map((c) => {
    const secs = Math.max(1, (c.last - c.first) / 1000);
    return `${c.id} ${c.state}${c.code !== undefined ? `(${String(c.code)})` : ''} ${c.url} in=${c.in} out=${c.out} rate=${((c.in + c.out) / secs).toFixed(1)}/s last=${c.lastMsg || '-'}`;
  });
  return `websocket_status: ${conns.size} connections (${[...conns.values()].filter((c) => c.state === 'open').length} open)\n${lines.join('\n')}`;
}

/** Latest snapshot per URL with ratings; also used by analyze. */
export function perfByUrl(ctx: ToolContext): Map<string, Array<{ t: number; timing: Partial<Record<Metric, number | null>> }>> {
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
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
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
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

function errorBundles(ctx: ToolContext, a: Args): string {
  const reader = ctx.reader() as Exclude<ReturnType<ToolContext['reader']>, string>;
  const start = startOrds(ctx, a, ['logs']);
  if (typeof start === 'string') return `ERROR ${start}`;
  const windowMs = (a.window_s ?? 5) * 1000;
  const k = kindId('logs');
  const limit = Math.min(a.limit ?? 5, 20);
  const r = scan(reader, { kind: k, from: start[0]!, limit, maxScan: MAX_SCAN, ...prefilter({ ...a, what: 'errors' }), match: matcher({ ...a, what: 'errors' }), hide: (rec) => ctx.client.noisy(rec) !== undefined, tab: a.tab_id });
  if (!a.after && a.from !== 'start') ctx.client.cursors[k] = r.next;
  if (!r.hits.length) return `error_bundles: no errors${a.from === 'start' ? ' buffered' : ' since your last look'}`;
  const out: string[] = [`error_bundles: ${r.matched}${r.atEnd ? '' : '+'} errors, ${r.hits.length} shown, each with the ${a.window_s ?? 5}s before it${r.atEnd && r.hits.length >= r.matched ? '' : `\nmore: observe({what:"error_bundles", after:"${encodeCursor([r.next])}"})`}`];
  for (const e of r.hits) {
    out.push(`■ ${line(e)}  sig=${JSON.stringify(errorSignature(e.rec))}`);
    for (const kind of ['actions', 'network', 'logs'] as Kind[]) {
      const kk = kindId(kind);
      // context lies just before the error; look back a bounded distance from its position
      const back = kind === 'logs' ? e.ord : reader.latestOrd(kk);
      const ctxHits = scan(reader, {
        kind: kk,
        from: Math.max(reader.tailOrd(kk), back - 2000),
        limit: 2000,
        maxScan: 2000,
        match: (rec, h) => h.clientTime <= e.clientTime && h.clientTime >= e.clientTime - windowMs && !(kind === 'logs' && h.ord >= e.ord) && (kind !== 'logs' || rec.level === 'warn' || rec.level === 'error'),
      }).hits;
      for (const h of ctxHits.slice(-8)) out.push(`  ${line(h)}`);
    }
  }
  return out.join('\n');
}
