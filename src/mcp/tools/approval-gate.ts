/**
 * The approval gate (issue 19 item 4): every tool call whose action is mutating or destructive
 * (src/domain/actions/classes.ts) passes here before it acts, whatever transport carried it.
 * The user's policy may let it run or refuse it; otherwise the user is asked in the browser: an
 * `approval_request` command goes to the extension over the same command channel as every other
 * command (src/clients/commands.ts), which shows it in the popup or, with the popup closed, as a
 * notification. The call waits for the decision up to commands.wait_ms, then answers
 * approval_required with the request's id; the agent polls by making the same call again with
 * approval_id. A decision counts only from a trusted producer (src/clients/trusted-producer.ts).
 */
import { classify, type ActionClass } from '../../domain/actions/classes.js';
import { fingerprint, type ApprovalBook, type ApprovalRequest } from '../../domain/approvals/book.js';
import { ApprovalDecisionResult } from '../../domain/commands.js';
import { isTrustedProducer } from '../../clients/trusted-producer.js';
import type { Outcome, Query } from '../../clients/commands.js';
import { gasolineError } from '../../errors.js';
import type { ToolContext } from './context.js';
import { NO_SERVER } from './run-command.js';

type Args = Readonly<Record<string, unknown>>;

/**
 * Resolves when the call may run, with the tab it must run on (an approval pins the tab the user
 * approved on; undefined = the call's own choice). Throws GasolineError otherwise.
 */
export async function passGate(ctx: ToolContext, tool: 'interact' | 'configure', args: Args): Promise<number | undefined> {
  const book = ctx.port.approvals;
  const c = classify(tool, args);
  const tab = typeof args.tab_id === 'number' ? args.tab_id : null;
  const approvalId = typeof args.approval_id === 'string' ? args.approval_id : undefined;
  if (!book) {
    // a port without a book cannot ask anyone: only what needs no asking runs
    if (c.class === 'read_only') return tab ?? undefined;
    throw gasolineError('action_blocked', `${c.label} is ${c.class} and this server has no approvals`);
  }
  const scope = { clientId: ctx.clientId, label: c.label, tab, target: fingerprint(args) };
  const first = book.admit(c.class, scope, approvalId);
  if (first.kind === 'run') return first.tab ?? undefined;
  const req = first.kind === 'ask' ? ask(ctx, book, book.open(scope), c.class, args) : book.get(first.id)!;
  await Promise.race([req.settled, sleep(ctx.commandWaitMs)]);
  if (req.state === 'pending') throw required(req, c.label);
  // decided: this very call redeems it (single use), exactly as a poll with approval_id would
  const now = book.admit(c.class, scope, req.id);
  if (now.kind !== 'run') throw required(req, c.label);
  return now.tab ?? undefined;
}

/** Sends the request to the extension; the decision lands in the book whenever it comes. */
function ask(ctx: ToolContext, book: ApprovalBook, req: ApprovalRequest, cls: ActionClass, args: Args): ApprovalRequest {
  const router = ctx.port.commands;
  const fail = (code: 'no_ingest', message: string): never => {
    book.fail(req.id, { code, message });
    throw gasolineError(code, message);
  };
  const why = `${req.scope.label} is ${cls} and needs the user's approval in the browser`;
  // no ingest: the same refusal every command gets (nothing could run it, approved or not)
  if (!router) return fail('no_ingest', NO_SERVER);
  const ttl = book.settings.requestTtlMs;
  const params = {
    approval_id: req.id,
    action: req.scope.label,
    class: cls,
    target: target(args),
    client: ctx.clientId.slice(0, 64),
    ...(ctx.clientName ? { client_name: ctx.clientName.slice(0, 120) } : {}),
    expires_at: Date.now() + ttl,
    in_page: req.scope.label.startsWith('interact '),
  };
  const started = router.start(ctx.clientId, 'approval_request', params, { deadlineMs: ttl, ...(req.scope.tab !== null ? { tabId: req.scope.tab } : {}) });
  if (!started.ok) {
    book.fail(req.id, { code: 'no_extension', message: started.message });
    throw gasolineError(started.code, `${why}: ${started.message}`);
  }
  // the router settles every query by its deadline (plus grace), so this wait always ends
  void router.wait(started.query, ttl + 10_000).then((o) => {
    settle(book, req, started.query, o);
    // the decision is the book's now: it is never a command result for the agent to fetch
    router.release(started.query);
  });
  return req;
}

/** The extension's answer → the book. Only a trusted producer's own answer is a decision. */
function settle(book: ApprovalBook, req: ApprovalRequest, q: Query, o: Outcome | null): void {
  if (!o?.ok) {
    // the deadline passing is the request expiring; any other failure keeps its own code and words
    // (agent_control_off: the master switch; command_failed: no tracked tab; extension_disconnected)
    const lapsed = !o || o.code === 'command_timeout';
    book.fail(req.id, lapsed ? { code: 'approval_expired', message: `nobody decided on ${req.scope.label} in the browser before the request lapsed; make the call again to ask again` } : { code: o.code, message: o.message });
    return;
  }
  if (!q.answered || !isTrustedProducer(q.producer)) {
    book.fail(req.id, { code: 'approval_denied', message: `a decision on ${req.scope.label} came from a producer that is not the paired extension; it was ignored and counts as denied` });
    return;
  }
  const d = ApprovalDecisionResult.parse(o.result);
  book.decide(req.id, d.decision === 'approve_window' ? { kind: 'approve_window', minutes: d.minutes } : { kind: d.decision }, d.tab_id);
}

/** What the user sees of the call: never the typed text, only its length (it may be a password). */
function target(a: Args): Record<string, unknown> {
  const t: Record<string, unknown> = {};
  if (typeof a.selector === 'string') t.selector = a.selector;
  if (typeof a.url === 'string') t.url = a.url;
  if (typeof a.action === 'string' && a.action === 'select' && typeof a.value === 'string') t.value = a.value;
  if (typeof a.text === 'string') t.text_length = a.text.length;
  if (a.action === 'clear') t.detail = 'empties the shared buffers: every client loses what is buffered';
  if (a.action === 'redaction' && typeof a.name === 'string') t.detail = `${String(a.redaction_action)} redaction rule "${a.name.slice(0, 100)}"${a.redaction_action === 'add' && typeof a.pattern === 'string' ? ` /${a.pattern.slice(0, 80)}/` : ''}`;
  if (a.action === 'noise_rule') t.detail = `${String(a.noise_action)} global noise rule ${typeof a.id === 'string' ? a.id : typeof a.pattern === 'string' ? `/${a.pattern.slice(0, 80)}/` : ''}`;
  if (a.action === 'source_maps') t.detail = `source maps ${String(a.value).slice(0, 10)} for every client`;
  return t;
}

function required(req: ApprovalRequest, label: string): Error {
  return gasolineError(
    'approval_required',
    `${label} waits for the user's approval in the browser (asked ${Math.round((Date.now() - req.createdAt) / 100) / 10}s ago, no decision yet). approval_id=${req.id}\npoll: make the same call again with approval_id:"${req.id}" (each poll waits again); tell the user to approve in the Gasoline popup`,
    { approval_id: req.id },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
