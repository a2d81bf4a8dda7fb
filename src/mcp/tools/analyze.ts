/**
 * analyze: conclusions over what was captured — performance regressions, changes since a
 * checkpoint, error clusters, security findings. Each scan is bounded; answers are summaries.
 * dom, page_info and accessibility look at the live page instead: they go to the extension as
 * commands (run-command.ts). triage asks the configured model, through the redaction gateway (triage.ts).
 */
import type { z } from 'zod';
import type { Checkpoint } from '../../clients/client-state.js';
import { gasolineError } from '../../errors.js';
import { kindId } from '../../domain/kinds.js';
import { baselineOf, regressions, type Metric } from '../../domain/signals/vitals.js';
import { failingEndpoints, loadsSince, MAX_GROUPS_LIMIT, MAX_WALL_MS, perfByUrl, securityReport, wsErrorsSince } from '../../query/index.js';
import { DEFAULT_BUDGET } from '../render/budget.js';
import { budgeted, fromPage, plain, type Rendered } from '../render/egress.js';
import { clock } from '../render/format.js';
import { pageFlat, pageText } from '../render/page-text.js';
import type { ToolContext, ToolResult } from './context.js';
import { foldFor } from './fold-call.js';
import { runCommand } from './run-command.js';
import { tabScope } from './tab-scope.js';
import { triageTool } from './triage.js';
import type { AnalyzeInput } from '../tool-defs.js';

type Args = { [K in keyof typeof AnalyzeInput]: z.infer<(typeof AnalyzeInput)[K]> };

const MAX_SCAN = 50_000;

export function analyze(ctx: ToolContext, a: Args): ToolResult | Promise<ToolResult> {
  switch (a.target) {
    case 'dom':
      if (!a.selector) throw gasolineError('invalid_argument', 'dom needs selector, e.g. analyze({target:"dom", selector:"#main button"})');
      return runCommand(ctx, 'dom_query', pick(a, ['selector', 'include_styles', 'include_children', 'max_depth', 'properties']), { tabId: a.tab_id });
    case 'page_info':
      return runCommand(ctx, 'page_info', {}, { tabId: a.tab_id });
    case 'accessibility':
      return runCommand(ctx, 'a11y_audit', pick(a, ['scope', 'tags', 'include_passes', 'force_refresh']), { tabId: a.tab_id });
    case 'triage':
      return triageTool(ctx, a.question, a.budget);
    default:
      return analyzeStored(ctx, a);
  }
}

function pick(a: Args, keys: Array<keyof Args>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (a[k] !== undefined) out[k] = a[k];
  return out;
}

function analyzeStored(ctx: ToolContext, a: Args): ToolResult | Promise<ToolResult> {
  // no store, no analysis: throws no_ingest
  ctx.reader();
  const text = (r: Rendered): ToolResult => budgeted(ctx, r, a.budget ?? DEFAULT_BUDGET, 'narrow with url or limit');
  switch (a.target) {
    case 'performance':
      return text(perf(ctx, a));
    case 'error_clusters':
      return clusters(ctx, a).then(text);
    case 'security':
      return text(security(ctx, a));
    case 'changes': {
      if (!a.checkpoint) throw gasolineError('invalid_argument', 'changes needs checkpoint: create one first with configure({action:"checkpoint", checkpoint_action:"create", name:"before-fix"})');
      const cp = checkpointByRef(ctx, a.checkpoint);
      return changes(ctx, cp.ords, a.checkpoint, cp.restarted ? `${cp.created_at}, before the daemon restarted: everything buffered now is after it` : cp.created_at).then(text);
    }
    default:
      // the live targets are answered by the extension, in analyze() above
      throw gasolineError('internal', `target ${a.target} is not a stored-data analysis`);
  }
}

/**
 * A checkpoint by name: the caller's own, else `CLIENT:name` names client CLIENT's (held or
 * saved), so one agent can compare against another's "before". Without the prefix only the
 * caller's own are seen; an own checkpoint whose name has a colon still wins.
 */
function checkpointByRef(ctx: ToolContext, ref: string): Checkpoint {
  const own = ctx.client.checkpoints.get(ref);
  if (own) return own;
  const colon = ref.indexOf(':');
  if (colon > 0) {
    const owner = ref.slice(0, colon);
    const name = ref.slice(colon + 1);
    const other = owner === ctx.clientId ? ctx.client : ctx.port.peekClient(owner);
    if (!other) throw gasolineError('unknown_name', `no client "${owner}" with saved state; its checkpoints are reached as ${owner}:name while it is known to this daemon`);
    const cp = other.checkpoints.get(name);
    if (!cp) throw gasolineError('unknown_name', `client "${owner}" has no checkpoint "${name}"`);
    return cp;
  }
  throw gasolineError('unknown_name', `no checkpoint "${ref}"; list them with configure({action:"checkpoint", checkpoint_action:"list"}); another client's: CLIENT:name`);
}

function perf(ctx: ToolContext, a: Args): Rendered {
  const out: string[] = [];
  let urls = 0;
  for (const [url, snaps] of perfByUrl(ctx.reader(), undefined, tabScope(ctx))) {
    if (a.url && !url.includes(a.url)) continue;
    urls++;
    if (snaps.length < 2) continue;
    const regs = regressions(baselineOf(snaps.slice(0, -1).map((s) => s.timing)), snaps[snaps.length - 1]!.timing);
    if (regs.length) out.push(`${pageText(url, 200)}: ${regs.map((r) => `${r.metric} ${fmt(r.metric, r.baseline)}→${fmt(r.metric, r.current)} (${r.change})`).join(', ')}`);
  }
  if (!urls) return plain('performance: no page-load snapshots captured');
  return out.length ? fromPage(`performance: ${out.length} of ${urls} URLs regressed against their baseline (median of earlier loads)\n${out.join('\n')}`) : plain(`performance: no regressions across ${urls} URLs (timing > +20 % or CLS > +0.1 against the baseline)`);
}

function fmt(m: Metric, v: number): string {
  return m === 'cls' ? v.toFixed(3) : `${Math.round(v)}ms`;
}

interface Cluster {
  sig: string;
  count: number;
  first: number;
  last: number;
}

/** Error signatures and their counts, most frequent first; folded by the scan worker, off the main thread. */
async function errorClusters(ctx: ToolContext, from?: number, to?: number): Promise<{ clusters: Cluster[]; partial: boolean }> {
  const reader = ctx.reader();
  const k = kindId('logs');
  const folded = await foldFor(ctx, { kinds: [k], start: [from ?? reader.tailOrd(k)], ...(to !== undefined ? { to: [to] } : {}), maxScan: MAX_SCAN, filter: { what: 'errors' }, fold: true, by: 'signature', maxGroups: MAX_GROUPS_LIMIT, wallMs: MAX_WALL_MS }, true);
  const r = folded.results[0]!;
  return {
    clusters: folded.groups.map((g) => ({ sig: g.key, count: g.count, first: g.firstTime, last: g.lastTime })).sort((x, y) => y.count - x.count || y.last - x.last),
    // more signatures than the bound, or a buffer too big to read in the wall budget
    partial: r.stopped || !r.atEnd,
  };
}

async function clusters(ctx: ToolContext, a: Args): Promise<Rendered> {
  const got = await errorClusters(ctx);
  const cs = got.clusters;
  if (!cs.length) return plain('error_clusters: no errors buffered');
  const limit = a.limit ?? 20;
  const rows = cs.slice(0, limit).map((c) => `${c.count}× ${pageText(c.sig, 300)} first ${clock(c.first)} last ${clock(c.last)}`);
  const partial = got.partial ? '; partial: more errors are buffered than one read covers (the oldest were counted)' : '';
  return fromPage(`error_clusters: ${cs.length} distinct signatures over ${cs.reduce((n, c) => n + c.count, 0)} errors${cs.length > limit ? ` (top ${limit})` : ''}${partial}\n${rows.join('\n')}`);
}

async function changes(ctx: ToolContext, ords: number[], name: string, at: string): Promise<Rendered> {
  const reader = ctx.reader();
  const scope = tabScope(ctx);
  const logsK = kindId('logs');
  const beforeClusters = await errorClusters(ctx, undefined, ords[logsK]!);
  const before = new Set(beforeClusters.clusters.map((c) => c.sig));
  const afterClusters = await errorClusters(ctx, Math.max(ords[logsK]!, reader.tailOrd(logsK)));
  const after = afterClusters.clusters;
  const newSigs = after.filter((c) => !before.has(c.sig));
  const netK = kindId('network');
  // read in slices (up to 50 000 records each side): the main thread keeps emitting pushes meanwhile
  const failedBefore = await failingEndpoints(reader, reader.tailOrd(netK), ords[netK]!, MAX_SCAN, MAX_WALL_MS, scope);
  const failedAfter = await failingEndpoints(reader, Math.max(ords[netK]!, reader.tailOrd(netK)), Number.MAX_SAFE_INTEGER, MAX_SCAN, MAX_WALL_MS, scope);
  const newlyFailing = [...failedAfter].filter(([k]) => !failedBefore.has(k));
  const wsErrors = wsErrorsSince(reader, ords[kindId('ws_events')]!, 50, MAX_SCAN, scope);
  const perfFrom = ords[kindId('perf')]!;
  const perfDeltas: string[] = [];
  for (const [url, snaps] of perfByUrl(reader, undefined, scope)) {
    const cut = loadsSince(reader, url, perfFrom, MAX_SCAN, scope);
    if (!cut.length || snaps.length === cut.length) continue;
    const regs = regressions(baselineOf(snaps.slice(0, snaps.length - cut.length).map((s) => s.timing)), cut[cut.length - 1]!.timing);
    if (regs.length) perfDeltas.push(`${pageText(url, 200)}: ${regs.map((r) => `${r.metric} ${r.change}`).join(', ')}`);
  }
  const lines = [`changes since checkpoint "${name}" (${at}):`];
  lines.push(newSigs.length ? `new error signatures (${newSigs.length}):` : 'new error signatures: none');
  for (const c of newSigs.slice(0, 20)) lines.push(`  ${c.count}× ${pageText(c.sig, 300)}`);
  lines.push(newlyFailing.length ? `newly failing endpoints (${newlyFailing.length}):` : 'newly failing endpoints: none');
  for (const [k, n] of newlyFailing.slice(0, 20)) lines.push(`  ${n}× ${pageText(k, 200)}`);
  lines.push(perfDeltas.length ? `performance regressions:\n  ${perfDeltas.join('\n  ')}` : 'performance regressions: none');
  lines.push(wsErrors.length ? `new WebSocket errors/abnormal closes (${wsErrors.length}): ${wsErrors.slice(0, 10).map((h) => `${pageText(h.rec.id, 100)} ${h.rec.event}${h.rec.code !== undefined ? `(${h.rec.code})` : ''}`).join(', ')}` : 'new WebSocket errors: none');
  return fromPage(lines.join('\n'), newSigs.length + newlyFailing.length + perfDeltas.length + wsErrors.length > 0);
}

/** Header names as people write them; the report keys are lower case. */
const HEADER_NAMES: Record<string, string> = {
  'content-security-policy': 'Content-Security-Policy',
  'content-security-policy-report-only': 'Content-Security-Policy-Report-Only',
  'strict-transport-security': 'Strict-Transport-Security',
  'x-frame-options': 'X-Frame-Options',
  'x-content-type-options': 'X-Content-Type-Options',
  'referrer-policy': 'Referrer-Policy',
  'permissions-policy': 'Permissions-Policy',
  'cross-origin-opener-policy': 'Cross-Origin-Opener-Policy',
  'cross-origin-embedder-policy': 'Cross-Origin-Embedder-Policy',
};
/** lines of each listing after the findings: the budget is shared, findings come first */
const MAX_DOCUMENT_LINES = 10;
const MAX_COOKIE_LINES = 30;

function security(ctx: ToolContext, a: Args): Rendered {
  const report = securityReport(ctx.reader(), MAX_SCAN, a.url, tabScope(ctx));
  const { findings, documents, cookies } = report;
  if (!findings.length && !documents.length && !cookies.length) return plain('security: no findings in captured traffic (document headers and cookies are read by the extension on each page load of a tracked tab; reload the page if it was loaded before tracking)');
  const rows = findings.slice(0, a.limit ?? 50);
  const lines = [`security: ${findings.length} findings${rows.length < findings.length ? ` (${rows.length} shown)` : ''}`];
  for (const f of rows) lines.push(`[${f.severity}] ${pageFlat(f.what)} — ${pageText(f.where, 300)}${f.count > 1 ? ` (${f.count}×)` : ''}`);
  if (documents.length) {
    lines.push(`documents (headers of the latest load; ${documents.length} URL${documents.length === 1 ? '' : 's'}):`);
    for (const d of documents.slice(0, MAX_DOCUMENT_LINES)) {
      const present = Object.entries(d.present).map(([k, v]) => `${HEADER_NAMES[k] ?? k}=${pageText(v, k.startsWith('content-security-policy') ? 160 : 80)}`);
      lines.push(`- ${pageText(d.url, 200)} ${d.status}${d.loads > 1 ? ` (${d.loads} loads)` : ''}: present ${present.length ? present.join(' ') : 'none'}; missing ${d.missing.length ? d.missing.map((k) => HEADER_NAMES[k] ?? k).join(', ') : 'none'}`);
    }
    if (documents.length > MAX_DOCUMENT_LINES) lines.push(`… ${documents.length - MAX_DOCUMENT_LINES} more documents (narrow with url)`);
  }
  if (cookies.length) {
    lines.push(`cookies set (attributes only; values are never captured): ${cookies.length}`);
    for (const c of cookies.slice(0, MAX_COOKIE_LINES)) {
      const flags = [c.secure ? 'Secure' : 'no Secure', c.http_only ? 'HttpOnly' : 'no HttpOnly', c.same_site ? `SameSite=${pageFlat(c.same_site)}` : 'no SameSite', ...(c.partitioned ? ['Partitioned'] : []), c.expiry];
      const scope = `${c.domain ? ` domain=${pageText(c.domain, 100)}` : ''}${c.path ? ` path=${pageText(c.path, 100)}` : ''}`;
      lines.push(`- ${pageText(c.name, 100)} ${flags.join(' ')}${scope} — set by ${pageText(c.where, 200)}${c.count > 1 ? ` (${c.count}×)` : ''}`);
    }
    if (cookies.length > MAX_COOKIE_LINES) lines.push(`… ${cookies.length - MAX_COOKIE_LINES} more cookies (narrow with url)`);
  }
  return fromPage(lines.join('\n'));
}
