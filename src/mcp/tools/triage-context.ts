/**
 * What a triage is about, read from the store: the buffered errors folded by signature (the most
 * frequent first), the top ones with their bundle (the actions, requests and warnings of the 5 s
 * before) and their top frame, source-mapped when a map resolves it; the failing endpoints. Read
 * like analyze reads (the scan worker, the caller's noise rules and tab filter), moving no cursor:
 * a triage is a look, not a read of what is new. Bounded: 200 signatures and endpoints, bundles
 * for the first 10 errors.
 */
import { kindId } from '../../domain/kinds.js';
import { gasolineError } from '../../errors.js';
import { errorSignature } from '../../domain/signals/signature.js';
import type { Before, TriageContext, TriageError, TriageRequest } from '../../model/index.js';
import { errorContext, MAX_WALL_MS, type Group, type Hit, type Rec } from '../../query/index.js';
import { shortFrame } from '../../sourcemaps/index.js';
import type { ToolContext } from './context.js';
import { foldFor } from './fold-call.js';
import { mappedFrames } from './observe-list.js';

const MAX_SCAN = 50_000;
const MAX_LISTED = 200;
const BUNDLED = 10;
const WINDOW_MS = 5000;
const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/** the longest selector handed on: analyze dom's own bound; a longer one is left out, as a cut one would not select */
const SELECTOR_MAX = 1000;

/**
 * Every text through the rules in force BEFORE it is cut to the request's bounds: a cut can split
 * a secret so that the rules (a run-time rule the ingest workers never applied) no longer match
 * the piece that stays. The gateway applies them again to what leaves. A rule set that cannot run
 * lets nothing out, as in the gateway.
 */
function fitter(ctx: ToolContext): (s: string, n: number) => string {
  return (s, n) => {
    let r: string;
    try {
      r = ctx.redact(s);
    } catch (e) {
      throw gasolineError('model_egress_blocked', `redaction failed (${e instanceof Error ? e.name : typeof e}): nothing was sent to the model`);
    }
    return cut(r, n);
  };
}

/** most frequent first, then the newest; the key breaks ties, so the order never depends on the read */
const order = (x: Group, y: Group): number => y.count - x.count || y.lastTime - x.lastTime || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);

export async function triageContext(ctx: ToolContext): Promise<TriageContext> {
  const reader = ctx.reader();
  const logsK = kindId('logs');
  const netK = kindId('network');
  const errors = await foldFor(ctx, { kinds: [logsK], start: [reader.tailOrd(logsK)], maxScan: MAX_SCAN, filter: { what: 'errors' }, fold: true, by: 'signature', maxGroups: MAX_LISTED + 1, wallMs: MAX_WALL_MS }, true);
  const failing = await foldFor(ctx, { kinds: [netK], start: [reader.tailOrd(netK)], maxScan: MAX_SCAN, filter: { what: 'failing' }, fold: true, maxGroups: MAX_LISTED + 1, wallMs: MAX_WALL_MS }, true);
  const errGroups = errors.groups.sort(order);
  const reqGroups = failing.groups.sort(order);
  const top = errGroups.slice(0, MAX_LISTED);
  const frames = await mappedFrames(ctx, top.slice(0, BUNDLED).map((g) => g.example), true);
  const bounded = fitter(ctx);
  const out: TriageError[] = top.map((g, i) => {
    const rec = g.example.rec;
    const where = location(rec, frames, bounded);
    return {
      message: bounded(String(rec.message ?? ''), 4000),
      signature: bounded(errorSignature(rec), 1000),
      count: g.count,
      first: g.firstTime,
      last: g.lastTime,
      ...(where ? { location: where.at, mapped: where.mapped } : {}),
      ...(typeof rec.url === 'string' && rec.url ? { page: bounded(rec.url, 2000) } : {}),
      before: i < BUNDLED ? bundle(ctx, g.example, bounded) : [],
    };
  });
  const requests: TriageRequest[] = reqGroups.slice(0, MAX_LISTED).map((g) => {
    const r = g.example.rec;
    return { method: bounded(String(r.method ?? 'GET'), 16), url: bounded(String(r.url ?? ''), 4000), status: typeof r.status === 'number' ? r.status : 0, count: g.count, last: g.lastTime, ...(r.error ? { error: bounded(String(r.error), 2000) } : {}) };
  });
  const results = [...errors.results, ...failing.results];
  return {
    since: oldest(ctx),
    records: reader.ringStats(logsK).records + reader.ringStats(netK).records,
    extension: extension(ctx),
    errors: out,
    failing: requests,
    more_errors: Math.max(0, errGroups.length - MAX_LISTED),
    more_failing: Math.max(0, reqGroups.length - MAX_LISTED),
    partial: results.some((r) => r.stopped || !r.atEnd) || errGroups.length > MAX_LISTED || reqGroups.length > MAX_LISTED,
  };
}

/** the top frame: the original position when a map resolved it, else the generated one */
function location(rec: Rec, frames: ((r: Rec) => ReturnType<NonNullable<ToolContext['port']['stacks']>['lookup']>) | undefined, cut: (s: string, n: number) => string): { at: string; mapped: boolean } | undefined {
  const s = frames?.(rec);
  const f = s?.frames[s.top];
  if (f?.to) return { at: cut(`${f.to.file}:${f.to.line}:${f.to.column}`, 1000), mapped: true };
  if (f) return { at: cut(shortFrame(f.frame), 1000), mapped: false };
  if (typeof rec.filename === 'string' && rec.filename) return { at: cut(`${rec.filename}:${rec.lineno ?? ''}${rec.colno !== undefined ? `:${rec.colno}` : ''}`, 1000), mapped: false };
  if (typeof rec.stack === 'string') {
    const line = rec.stack.split('\n').find((x, i) => i > 0 && x.trim().startsWith('at '));
    // "at pay (http://host/app.min.js:1:471)" → "app.min.js:1:471": the file, as a person names it
    const at = line && /([^\s()/]+:\d+:\d+)\)?\s*$/.exec(line)?.[1];
    if (at) return { at: cut(at, 1000), mapped: false };
    if (line) return { at: cut(line.trim().slice(3), 1000), mapped: false };
  }
  if (typeof rec.source === 'string' && rec.source) return { at: cut(rec.source, 1000), mapped: false };
  return undefined;
}

/** the error's bundle as evidence: what the user did, what was requested, what warned, in time order */
function bundle(ctx: ToolContext, e: Hit, cut: (s: string, n: number) => string): Before[] {
  const hits = errorContext(ctx.reader(), e, WINDOW_MS).filter((h) => h.ord !== e.ord || h.kind !== e.kind);
  hits.sort((x, y) => x.clientTime - y.clientTime || x.seq - y.seq);
  const out: Before[] = [];
  for (const h of hits.slice(-24)) {
    const r = h.rec;
    if (h.kind === kindId('actions')) {
      const sel = selectorOf(r, (x) => cut(x, Number.MAX_SAFE_INTEGER));
      out.push({ kind: 'action', text: cut(`${String(r.type ?? 'action')}${sel ? ` ${sel}` : ''}`, 2000), ...(sel ? { selector: sel } : {}) });
    } else if (h.kind === kindId('network')) {
      out.push({ kind: 'request', text: cut(`${String(r.method ?? 'GET')} ${String(r.url ?? '')} → ${typeof r.status === 'number' && r.status > 0 ? r.status : 'no response'}`, 2000) });
    } else {
      out.push({ kind: 'log', text: cut(`${String(r.level ?? 'log')} ${String(r.message ?? '')}`, 2000) });
    }
  }
  return out;
}

/**
 * A CSS selector analyze dom can use, from the strongest hint the extension recorded that fits
 * SELECTOR_MAX once redacted: a page's aria-label or test id has no bound of its own, and one
 * over-long selector would fail the model request's schema, blocking every triage while its
 * record is buffered. A hint too long is passed over, never cut (a cut selector selects nothing).
 */
function selectorOf(r: Rec, redact: (s: string) => string): string | undefined {
  const s = r.selectors as { test_id?: string; id?: string; aria_label?: string; css_path?: string } | undefined;
  if (!s) return undefined;
  const hints = [
    typeof s.test_id === 'string' && s.test_id ? `[data-testid=${JSON.stringify(s.test_id)}]` : undefined,
    typeof s.id === 'string' && /^[A-Za-z_][\w-]*$/.test(s.id) ? `#${s.id}` : undefined,
    typeof s.aria_label === 'string' && s.aria_label ? `[aria-label=${JSON.stringify(s.aria_label)}]` : undefined,
    typeof s.css_path === 'string' && s.css_path ? s.css_path : undefined,
  ];
  for (const h of hints) {
    if (h === undefined || h.length > SELECTOR_MAX) continue;
    const red = redact(h);
    if (red.length <= SELECTOR_MAX) return red;
  }
  return undefined;
}

/** the oldest buffered record among errors' and requests' kinds, or null when both are empty */
function oldest(ctx: ToolContext): number | null {
  const reader = ctx.reader();
  let t: number | null = null;
  for (const k of [kindId('logs'), kindId('network')]) {
    const r = reader.read(k, reader.tailOrd(k), 1);
    const first = r.records[0];
    if (first && (t === null || first.clientTime < t)) t = first.clientTime;
  }
  return t;
}

function extension(ctx: ToolContext): TriageContext['extension'] {
  const ext = ctx.producers().filter((p) => p.client === 'extension');
  if (!ext.length) return 'absent';
  return ext.some((p) => p.verified !== false) ? 'connected' : 'unpaired';
}
