/**
 * Server-side command router: sends a `cmd` to the extension on behalf of one MCP client and
 * routes the `result` back to that client only. Holds a bounded set of pending queries, each
 * with its own deadline; fails them at once when the extension's connection goes away; keeps
 * finished answers a while so a client can fetch a long-running one by its query id.
 */
import { randomBytes } from 'node:crypto';
import type { ErrorCode } from '../errors.js';
import { DEFAULT_DEADLINE_MS, EXTENSION_ERROR_CODES, MAX_ERROR_CHARS, PARAMS, RESULTS, type CommandType } from '../domain/commands.js';

/** The producer a command went to, as its hello named it; every answer names it (issue #18). */
export interface ProducerRef {
  readonly id: number;
  readonly client: string;
  readonly version: string;
  readonly session: string;
  /** it proved the pairing secret in its hello (src/pairing/) */
  readonly verified?: boolean;
}

/** What the router needs from the WebSocket edge, nothing more. */
export interface CommandLink {
  /** the authenticated extension commands go to, or why there is none */
  route(): { producer: ProducerRef } | { refused: 'no_extension' | 'extension_unverified' };
  send(connId: number, frame: Record<string, unknown>): boolean;
}

export type Outcome = { ok: true; result: unknown } | { ok: false; code: ErrorCode; message: string };

export interface Query {
  readonly id: string;
  readonly clientId: string;
  readonly type: CommandType;
  readonly connId: number;
  readonly producer: ProducerRef;
  readonly startedAt: number;
  outcome: Outcome | null;
  /** the outcome came from the producer's own `result` frame (not our deadline or its disconnect) */
  answered: boolean;
  finishedAt: number;
  /** the outcome was handed to the client (in its call, or fetched): a resumed session is not told again */
  seen: boolean;
}

export interface RouterOptions {
  maxPending?: number;
  maxPendingPerClient?: number;
  /** finished answers kept for observe({what:"command_result"}); each is at most max_frame */
  keepMs?: number;
  maxKept?: number;
  /** finished answers kept per client (config sessions.results_per_client): one client cannot push out another's */
  maxKeptPerClient?: number;
  /** how long past its deadline the server waits for the extension's own timeout answer */
  graceMs?: number;
}

export const NO_EXTENSION = 'no extension connected: open Chrome with the Gasoline extension and track a tab (popup)';
export const EXTENSION_UNVERIFIED =
  'a producer says it is the extension but has not proven pairing (or connected without the Gasoline extension\'s Origin), so no command is sent to it (it would see what you type and could forge answers). Ask the user to pair the extension: `gasoline pair` prints a code to type into its popup (docs/SECURITY.md); an unpacked build with another id also needs its chrome-extension:// origin in allowed_origins';

interface Pending {
  q: Query;
  timer: NodeJS.Timeout;
  waiters: Array<(o: Outcome) => void>;
}

export class CommandRouter {
  private readonly pending = new Map<string, Pending>();
  private readonly done = new Map<string, Query>();
  private readonly o: Required<RouterOptions>;
  readonly stats = { sent: 0, completed: 0, failed: {} as Record<string, number>, rejected_results: {} as Record<string, number> };

  constructor(
    private readonly link: CommandLink,
    opts: RouterOptions = {},
  ) {
    this.o = { maxPending: 64, maxPendingPerClient: 16, keepMs: 5 * 60_000, maxKept: 64, maxKeptPerClient: 16, graceMs: 1500, ...opts };
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Validates, sends, and returns the query; or fails at once (no extension, too many pending, bad params). */
  start(clientId: string, type: CommandType, params: unknown, opts: { deadlineMs?: number; tabId?: number } = {}): { ok: true; query: Query } | { ok: false; code: ErrorCode; message: string } {
    const parsed = PARAMS[type].safeParse(params ?? {});
    if (!parsed.success) return this.refuse('invalid_params', `${type}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(params)'}: ${i.message}`).join('; ')}`);
    const route = this.link.route();
    if ('refused' in route) return route.refused === 'no_extension' ? this.refuse('no_extension', NO_EXTENSION) : this.refuse('extension_unverified', EXTENSION_UNVERIFIED);
    const producer = route.producer;
    const connId = producer.id;
    if (this.pending.size >= this.o.maxPending) return this.refuse('too_many_pending', `${this.pending.size} commands are already waiting for the extension; fetch or wait for them first`);
    let mine = 0;
    for (const p of this.pending.values()) if (p.q.clientId === clientId) mine++;
    if (mine >= this.o.maxPendingPerClient) return this.refuse('too_many_pending', `you have ${mine} commands waiting; fetch them with observe({what:"command_result", query_id}) first`);
    const deadline = opts.deadlineMs ?? DEFAULT_DEADLINE_MS[type];
    const id = `q${randomBytes(8).toString('hex')}`;
    const frame: Record<string, unknown> = { t: 'cmd', id, type, params: parsed.data, deadline_ms: deadline };
    if (opts.tabId !== undefined) frame.tab_id = opts.tabId;
    if (!this.link.send(connId, frame)) return this.refuse('no_extension', NO_EXTENSION);
    this.stats.sent++;
    const q: Query = { id, clientId, type, connId, producer, startedAt: Date.now(), outcome: null, answered: false, finishedAt: 0, seen: false };
    const timer = setTimeout(() => this.finish(id, { ok: false, code: 'command_timeout', message: `${type} got no answer from the extension within ${deadline} ms; is the tab busy or closed? retry, or check observe({what:"page"})` }), deadline + this.o.graceMs);
    timer.unref();
    this.pending.set(id, { q, timer, waiters: [] });
    this.sweep();
    return { ok: true, query: q };
  }

  /** The outcome, or null if the query is still pending after `ms`. */
  wait(q: Query, ms: number): Promise<Outcome | null> {
    if (q.outcome) return Promise.resolve(q.outcome);
    const p = this.pending.get(q.id);
    if (!p) return Promise.resolve(q.outcome);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(null), ms);
      t.unref();
      p.waiters.push((o) => {
        clearTimeout(t);
        resolve(o);
      });
    });
  }

  /** A query of this client (never another client's), pending or finished and still kept. */
  get(clientId: string, id: string): Query | undefined {
    this.sweep();
    const q = this.pending.get(id)?.q ?? this.done.get(id);
    return q && q.clientId === clientId ? q : undefined;
  }

  /** The caller got the answer in its own call: nobody will fetch it by id, so drop it now. */
  release(q: Query): void {
    if (!q.outcome) return;
    q.seen = true;
    this.done.delete(q.id);
  }

  /**
   * The client's finished answers nobody has been handed yet, oldest first: a call whose session
   * went away (a bridge reconnecting) or that stopped waiting. Its next call, in any of its
   * sessions, is told; observe({what:"command_result"}) without an id hands them over in order.
   */
  unseen(clientId: string): Query[] {
    this.sweep();
    const out: Query[] = [];
    for (const q of this.done.values()) if (q.clientId === clientId && !q.seen && q.type !== 'approval_request') out.push(q);
    return out;
  }

  /** A `result` frame from connection `connId` (already schema-checked as a frame by the worker). */
  onResult(connId: number, r: { id: string; status: string; result?: unknown; error?: unknown }): void {
    const p = this.pending.get(r.id);
    if (!p || p.q.connId !== connId) {
      // late (after our timeout), duplicated, or for a command another connection was sent
      this.count(this.stats.rejected_results, 'unknown_result');
      return;
    }
    const type = p.q.type;
    p.q.answered = true;
    if (r.status === 'complete') {
      const parsed = RESULTS[type].safeParse(r.result);
      if (!parsed.success) {
        const first = parsed.error.issues[0]!;
        this.count(this.stats.rejected_results, 'invalid_result');
        this.finish(r.id, { ok: false, code: 'invalid_result', message: `${type} result rejected: ${first.path.join('.') || '(result)'}: ${first.message}` });
        return;
      }
      this.finish(r.id, { ok: true, result: parsed.data });
      return;
    }
    if (typeof r.error !== 'string' || r.error.length > MAX_ERROR_CHARS) {
      this.count(this.stats.rejected_results, 'invalid_result');
      this.finish(r.id, { ok: false, code: 'invalid_result', message: `${type} error result rejected: error must be a string of at most ${MAX_ERROR_CHARS} characters` });
      return;
    }
    if (r.status === 'timeout') {
      this.finish(r.id, { ok: false, code: 'command_timeout', message: `${type} timed out in the extension: ${r.error}` });
      return;
    }
    const m = /^([a-z_]+): ([\s\S]*)$/.exec(r.error);
    const code = m && (EXTENSION_ERROR_CODES as readonly string[]).includes(m[1]!) ? (m[1] as ErrorCode) : 'command_failed';
    this.finish(r.id, { ok: false, code, message: m && m[1] === code ? m[2]! : r.error });
  }

  /** The extension's connection closed: nothing sent on it will be answered. */
  onDisconnect(connId: number): void {
    for (const p of [...this.pending.values()]) {
      if (p.q.connId === connId) this.finish(p.q.id, { ok: false, code: 'extension_disconnected', message: `the extension disconnected before answering ${p.q.type} (its service worker may have restarted); retry the call` });
    }
  }

  /** Shutdown: every waiter gets an answer. */
  close(): void {
    for (const p of [...this.pending.values()]) this.finish(p.q.id, { ok: false, code: 'extension_disconnected', message: 'the server is shutting down' });
  }

  private finish(id: string, o: Outcome): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.q.outcome = o;
    p.q.finishedAt = Date.now();
    if (o.ok) this.stats.completed++;
    else this.count(this.stats.failed, o.code);
    this.done.set(id, p.q);
    let mine = 0;
    for (const q of this.done.values()) if (q.clientId === p.q.clientId) mine++;
    if (mine > this.o.maxKeptPerClient) {
      for (const [k, q] of this.done) {
        if (q.clientId !== p.q.clientId) continue;
        this.done.delete(k);
        break;
      }
    }
    if (this.done.size > this.o.maxKept) this.done.delete(this.done.keys().next().value as string);
    for (const w of p.waiters) w(o);
  }

  private sweep(): void {
    const cut = Date.now() - this.o.keepMs;
    for (const [id, q] of this.done) {
      if (q.finishedAt >= cut) break; // insertion order is finish order
      this.done.delete(id);
    }
  }

  private refuse(code: ErrorCode, message: string): { ok: false; code: ErrorCode; message: string } {
    this.count(this.stats.failed, code);
    return { ok: false, code, message };
  }

  private count(m: Record<string, number>, k: string): void {
    m[k] = (m[k] ?? 0) + 1;
  }
}
