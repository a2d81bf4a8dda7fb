/**
 * observe({what:"summary"}): one call that answers "what happened since I last looked" across
 * every kind, in about 2 000 tokens, each item with the call that shows its details. It reads on
 * the client's summary cursors, not its list cursors, so the lists it points to still hold what
 * it names.
 */
import { KINDS, kindId, type Kind } from '../../domain/kinds.js';
import { errorSignature, pathTemplate } from '../../domain/signals/signature.js';
import { baselineOf, regressions } from '../../domain/signals/vitals.js';
import { perfByUrlSliced, ScanBudget, wsTroubleSince, type FoldAnswer, type Group, type Rec, type TabScope } from '../../query/index.js';
import { tabScope } from './tab-scope.js';
import type { StoreReader } from '../../shm/index.js';
import { fromPage, type Rendered } from '../render/egress.js';
import { clock } from '../render/format.js';
import { pageText, pageWord } from '../render/page-text.js';
import type { ToolContext } from './context.js';
import { foldFor } from './fold-call.js';

const MAX_SCAN = 20_000;
/** rows per section: ten of each is what an agent acts on; the section's call lists the rest */
const ROWS = 10;

/** for a filter in a suggested call: a prefix still matches a substring filter, an ellipsis would not */
const arg = (s: string, n: number): string => pageText(s.slice(0, n), n);

export async function summary(ctx: ToolContext): Promise<Rendered> {
  const reader = ctx.reader();
  const from = ctx.client.summaryCursors;
  const latest = KINDS.map((_k, id) => reader.latestOrd(id));
  const news = KINDS.map((_k, id) => latest[id]! - Math.max(from[id]!, reader.tailOrd(id)));
  const evicted = KINDS.reduce((n, _k, id) => n + Math.max(0, reader.tailOrd(id) - from[id]!), 0);
  const next = [...latest];
  const work = new ScanBudget();

  // the two big folds run in the scan worker; the ws and perf scans below read rare records
  const errors = await foldKind(ctx, 'logs', from, next, 'errors', true);
  const failing = await foldKind(ctx, 'network', from, next, 'failing', false);
  const wsK = kindId('ws_events');
  const scope = tabScope(ctx);
  const ws = await wsTroubleSince(reader, work, from[wsK]!, MAX_SCAN, scope);
  next[wsK] = ws.next;
  const perf = await perfRegressions(reader, work, from[kindId('perf')]!, scope);
  KINDS.forEach((_k, id) => {
    from[id] = next[id]!;
  });

  const out: string[] = [];
  const total = news.reduce((n, x) => n + x, 0);
  out.push(`summary (since your last summary): ${total} new records${evicted ? `, ${evicted} evicted before you looked` : ''}; ${extension(ctx)}`);
  out.push(`per kind: ${KINDS.map((k, id) => `${k} ${news[id]}`).join(', ')}`);
  alerts(ctx, out);
  section(out, `errors: ${errors.folded.records} (${errors.folded.groups.length} distinct)${errors.hidden ? `, ${errors.hidden} hidden by noise rules` : ''}`, 'observe({what:"errors"})', errors.folded.groups, (g) => {
    const sig = errorSignature(g.example.rec);
    return `  ×${g.count} ${pageText(sig, 160)} last ${clock(g.lastTime)} → observe({what:"errors", contains:${pageText(snippet(g.example.rec), 60)}})`;
  });
  section(out, `failing requests: ${failing.folded.records} (${failing.folded.groups.length} endpoints)`, 'observe({what:"network", status_min:400})', failing.folded.groups, (g) => {
    const r = g.example.rec;
    return `  ×${g.count} ${pageWord(r.method ?? 'GET')} ${pageText(pathTemplate(r.url ?? ''), 200)} → ${r.status ?? 'failed'} last ${clock(g.lastTime)} → observe({what:"network", url:${arg(pathOf(r.url ?? ''), 120)}, status_min:400})`;
  });
  const wsRows = [...ws.conns.values()].sort((x, y) => Number(y.bad) - Number(x.bad) || y.last - x.last);
  out.push(wsRows.length ? `websocket errors/closes: ${wsRows.length} connections` : 'websocket errors/closes: none');
  for (const c of wsRows.slice(0, ROWS)) out.push(`  ${pageText(c.id, 60)} ${c.what.join(' ')}${c.url ? ` ${pageText(c.url, 120)}` : ''} → observe({what:"websocket_events", connection_id:${arg(c.id, 200)}})`);
  out.push(perf.length ? `performance regressions: ${perf.length} URLs → analyze({target:"performance"})` : 'performance regressions: none new');
  for (const p of perf.slice(0, ROWS)) out.push(`  ${p}`);
  const partial = errors.partial || failing.partial || ws.partial;
  if (partial) out.push('scan paused on a very busy buffer: call summary again for the rest');
  // page data: any row above, a pending alert's title, or what a producer said about itself
  const page = errors.folded.groups.length + failing.folded.groups.length + wsRows.length + perf.length + (ctx.alerts?.size() ?? 0) + ctx.producers().length > 0;
  return fromPage(out.join('\n'), page);
}

/** A literal stretch of the message that `contains` can find: up to the first normalized part. */
function snippet(r: Rec): string {
  if (r.type === 'network') return pathOf(r.request_url ?? '').slice(0, 60);
  const msg = r.message ?? '';
  const m = /^[^"'\\\d<]{3,}/.exec(msg);
  const s = (m ? m[0] : msg).trim();
  // whole words: a cut word still matches, but reads as a typo to the agent
  return s.length > 60 ? s.slice(0, s.lastIndexOf(' ', 60) > 20 ? s.lastIndexOf(' ', 60) : 60) : s;
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.replace(/\?.*$/, '');
  }
}

function extension(ctx: ToolContext): string {
  const producers = ctx.producers();
  const ext = producers.find((p) => p.client === 'extension');
  const paired = producers.find((p) => p.client === 'extension' && p.verified !== false);
  const unverified = ctx.port.unverifiedRecords?.() ?? 0;
  // records from producers that proved nothing are kept, and said (issue 19: pairing)
  const note = unverified ? `; ${unverified} records came from unpaired (unverified) producers` : '';
  if (paired) return `extension ${pageWord(paired.version)} connected since ${paired.connected_at}${note}`;
  if (ext) return `extension ${pageWord(ext.version)} connected since ${ext.connected_at} but NOT paired: it gets no commands${note} — ask the user to run \`gasoline pair\` and type the code into the extension's popup`;
  const others = producers.map((p) => pageWord(p.client)).join(', ');
  return `extension NOT connected${others ? ` (other producers: ${others})` : ''} — ask the user to open Chrome with the Gasoline extension; configure({action:"health"}) for details`;
}

function alerts(ctx: ToolContext, out: string[]): void {
  if (!ctx.alerts) return;
  const n = ctx.alerts.size();
  out.push(n ? `pending alerts: ${n}` : 'pending alerts: none');
  for (const a of ctx.alerts.peek(ROWS)) out.push(`  [${a.severity}] ${pageText(a.title, 200)}${a.count > 1 ? ` ×${a.count}` : ''} → ${a.next}`);
  // over the rate caps an alert is held back, never lost without a word (#20 item 2)
  const total = ctx.port.alerts?.heldTotal?.() ?? 0;
  const mine = ctx.alerts.takeHeld?.() ?? 0;
  if (total) out.push(`alerts held back over the rate caps: ${mine} since your last summary (${total} since start); the alerts that name them say "+N more"`);
}

function section(out: string[], head: string, call: string, groups: Group[], row: (g: Group) => string): void {
  out.push(groups.length ? `${head} → ${call}` : `${head.replace(/: 0 .*/, ': none')}`);
  // worst first, then the most frequent: what an agent should look at before anything else
  const rows = groups.sort((x, y) => y.severity - x.severity || y.count - x.count || y.lastSeq - x.lastSeq);
  for (const g of rows.slice(0, ROWS)) out.push(row(g));
  if (rows.length > ROWS) out.push(`  … ${rows.length - ROWS} more → ${call}`);
}

interface Folded {
  folded: FoldAnswer;
  hidden: number;
  partial: boolean;
}

async function foldKind(ctx: ToolContext, kind: Kind, from: number[], next: number[], what: 'errors' | 'failing', hideNoise: boolean): Promise<Folded> {
  const k = kindId(kind);
  const folded = await foldFor(ctx, { kinds: [k], start: [from[k]!], maxScan: MAX_SCAN, filter: { what }, fold: true }, hideNoise);
  const r = folded.results[0]!;
  next[k] = r.next;
  return { folded, hidden: r.hidden, partial: !r.atEnd || r.stopped };
}

/** Per URL with a load since the last summary: the newest load against the median of the earlier ones. */
async function perfRegressions(reader: StoreReader, work: ScanBudget, since: number, scope: TabScope | undefined): Promise<string[]> {
  const k = kindId('perf');
  // no load since the last summary: nothing to compare, and no read
  if (reader.latestOrd(k) <= Math.max(since, reader.tailOrd(k))) return [];
  const by = await perfByUrlSliced(reader, work, MAX_SCAN, 500, scope);
  const out: string[] = [];
  for (const [url, snaps] of by) {
    const last = snaps[snaps.length - 1]!;
    if (last.ord < since || snaps.length < 2) continue;
    const regs = regressions(baselineOf(snaps.slice(0, -1).map((s) => s.timing)), last.timing);
    if (regs.length) out.push(`${pageText(url, 160)}: ${regs.map((r) => `${r.metric} ${r.metric === 'cls' ? r.baseline.toFixed(3) : `${Math.round(r.baseline)}ms`}→${r.metric === 'cls' ? r.current.toFixed(3) : `${Math.round(r.current)}ms`} (${r.change})`).join(', ')} → analyze({target:"performance", url:${arg(url, 160)}})`);
  }
  return out;
}
