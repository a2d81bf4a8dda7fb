/**
 * The default adapter: no model, no network. A deterministic triage of the redacted context the
 * gateway let out — a conclusion, the evidence (each line names its record: the error's message
 * and original position, a request's method, URL and status) and the exact tool calls to make
 * next. The same payload gives the same text, byte for byte: nothing here reads a clock, a random
 * source or the order of a hash map.
 */
import type { ModelAdapter, RedactedPayload } from './adapter.js';
import { iso } from './context-text.js';
import type { ModelAnswer, TriageContext, TriageError, TriageRequest } from './schema.js';

/** evidence lines per section: what a person reads before acting; the calls below list the rest */
const SHOWN = 5;

const q = (s: string, n: number): string => JSON.stringify(s.length > n ? `${s.slice(0, n)}…` : s);
const statusText = (s: number): string => (s === 0 ? 'no response' : String(s));

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.replace(/\?.*$/, '');
  }
}

/** a literal stretch of the message that observe's `contains` finds: up to the first quote, digit or marker */
function snippet(msg: string): string {
  const m = /^[^"'\\\d<[{]{3,}/.exec(msg);
  const s = (m ? m[0] : msg).trim();
  return s.length > 60 ? s.slice(0, s.lastIndexOf(' ', 60) > 20 ? s.lastIndexOf(' ', 60) : 60) : s;
}

function request(r: TriageRequest): string {
  return `${r.method} ${q(r.url, 300)} → ${statusText(r.status)}`;
}

/** the failing request in an error's bundle, when one came just before it */
function failedBefore(e: TriageError): string | undefined {
  const b = e.before.find((x) => x.kind === 'request' && /→ (no response|[45]\d\d)$/.test(x.text));
  return b && q(b.text, 300);
}

/** the last action with a target before an error: what the user did when it broke */
function actionBefore(e: TriageError): { text: string; selector: string } | undefined {
  for (let i = e.before.length - 1; i >= 0; i--) {
    const b = e.before[i]!;
    if (b.kind === 'action' && b.selector) return { text: q(b.text, 200), selector: b.selector };
  }
  return undefined;
}

function conclusion(c: TriageContext): string {
  const top = c.errors[0];
  const req = c.failing[0];
  if (!top && !req) {
    if (c.since === null) return c.extension === 'absent' ? 'nothing captured yet: no browser is connected' : 'nothing captured yet';
    return `nothing broke since ${iso(c.since)}: no errors and no failing requests in ${c.records} records`;
  }
  if (top) {
    const where = top.location ? ` at ${q(top.location, 200)}${top.mapped ? '' : ' (generated position)'}` : '';
    const cause = failedBefore(top);
    const action = actionBefore(top);
    const n = c.errors.length + c.more_errors;
    const head = `${n}${c.partial ? '+' : ''} distinct error${n === 1 ? '' : 's'}; the most frequent is ${q(top.message, 200)} ×${top.count}${where}`;
    if (cause) return `${head}, right after a failing request (${cause}): look at that endpoint first`;
    if (action) return `${head}, right after ${action.text}: look at that element and its handler`;
    return req ? `${head}; requests fail too (${request(req)} ×${req.count})` : head;
  }
  return `no page errors, but requests fail: ${request(req!)} ×${req!.count}${c.failing.length + c.more_failing > 1 ? ` and ${c.failing.length + c.more_failing - 1} more endpoint(s)` : ''}`;
}

function evidence(c: TriageContext): string[] {
  const out: string[] = [];
  for (const e of c.errors.slice(0, SHOWN)) {
    const where = e.location ? ` at ${q(e.location, 200)}${e.mapped ? ' (source-mapped)' : ''}` : '';
    out.push(`- error ×${e.count} ${q(e.message, 300)}${where}, last ${iso(e.last)}${e.page ? ` on ${q(e.page, 200)}` : ''}`);
    const before = e.before.slice(-4).map((b) => q(b.text, 300));
    if (before.length) out.push(`  before it: ${before.join('; ')}`);
  }
  if (c.errors.length > SHOWN || c.more_errors) out.push(`- … ${c.errors.length - Math.min(SHOWN, c.errors.length) + c.more_errors} more distinct errors`);
  for (const r of c.failing.slice(0, SHOWN)) out.push(`- request ×${r.count} ${request(r)}${r.error ? ` ${q(r.error, 200)}` : ''}, last ${iso(r.last)}`);
  if (c.failing.length > SHOWN || c.more_failing) out.push(`- … ${c.failing.length - Math.min(SHOWN, c.failing.length) + c.more_failing} more failing endpoints`);
  return out;
}

function nextCalls(c: TriageContext): string[] {
  const out: string[] = [];
  const top = c.errors[0];
  if (!top && !c.failing.length) {
    if (c.extension !== 'connected') out.push('configure({action:"health"}) — the extension is not connected (or not paired): nothing can be captured');
    out.push('observe({what:"summary"})', 'analyze({target:"performance"})');
    return out;
  }
  if (top) {
    out.push('observe({what:"error_bundles"})');
    const action = actionBefore(top);
    if (action) out.push(`analyze({target:"dom", selector:${q(action.selector, 200)}})`);
    out.push(`observe({what:"errors", contains:${q(snippet(top.message), 60)}})`);
  }
  const req = c.failing[0];
  if (req) out.push(`observe({what:"network", url:${q(pathOf(req.url).slice(0, 120), 120)}, status_min:400})`);
  if (c.errors.length + c.more_errors > 1) out.push('analyze({target:"error_clusters"})');
  return out;
}

/** The triage text of a (redacted) context and question. */
export function triage(c: TriageContext, question?: string): string {
  const lines = [`conclusion: ${conclusion(c)}`];
  if (c.partial) lines.push('(partial: a read stopped on its bound before the newest record)');
  const ev = evidence(c);
  if (ev.length) lines.push('evidence:', ...ev);
  lines.push('next:', ...nextCalls(c).map((x) => `- ${x}`));
  // no model reads the question offline: say so, rather than seem to answer it
  if (question) lines.push(`question ${q(question, 300)}: the offline adapter answers every question with this triage (set model.adapter "openai" in the config file for a model's answer)`);
  return lines.join('\n');
}

export const offlineAdapter: ModelAdapter = {
  name: 'offline',
  // nothing streams: the answer is whole at once, so no progress is sent
  ask(p: RedactedPayload): Promise<ModelAnswer> {
    return Promise.resolve({ text: triage(p.context, p.question), adapter: 'offline' });
  },
};
