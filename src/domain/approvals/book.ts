/**
 * The approval book (issue 19 item 4): who may run which mutating or destructive action, decided
 * by the user in the browser. Pure state with an injected clock; the MCP gate
 * (src/mcp/tools/approval-gate.ts) does the asking and the waiting.
 *
 * A request is opened for one scope — client, action label, tab, and a fingerprint of the exact
 * arguments (the selector, URL, value, and the typed text, hashed: never kept) — and sent to the
 * extension. The user's decision makes it:
 *   - approved: a token, single-use and good for `tokenTtlMs` (60 s), redeemed by the call that
 *     asked (at once, or by the agent re-issuing the same call with approval_id);
 *   - approved for N minutes: the same, plus a window in which this client's calls of this action
 *     on this tab run without asking;
 *   - denied.
 * Refusals are typed (src/errors.ts): approval_unknown, approval_denied, approval_expired,
 * approval_scope (the id is used for another action, tab, target or client), approval_replayed
 * (a second use), action_blocked (policy deny or watch mode: no approval can lift it).
 *
 * Bounded: at most `maxOpenPerClient` requests waiting per client and `maxKept` requests held in
 * all (settled ones go first, oldest first); used ids are remembered as long as they are held, so a
 * replay is told apart from an id that never existed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { gasolineError, type ErrorCode } from '../../errors.js';
import type { ActionClass } from '../actions/classes.js';

export const APPROVAL_POLICIES = ['ask', 'allow', 'deny'] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];
export const WINDOW_MINUTES = [5, 15, 60] as const;
export type WindowMinutes = (typeof WINDOW_MINUTES)[number];

export interface ApprovalSettings {
  policy: { mutating: ApprovalPolicy; destructive: ApprovalPolicy };
  /** watch mode: no mutating or destructive action runs, approved or not */
  watch: boolean;
  tokenTtlMs: number;
  /** how long a request stays open in the browser (the approval_request command's deadline) */
  requestTtlMs: number;
  maxOpenPerClient?: number;
  maxKept?: number;
}

export interface ApprovalScope {
  readonly clientId: string;
  /** "interact click", "configure clear scope:all" (src/domain/actions/classes.ts) */
  readonly label: string;
  /** the tab the call named; null = the extension's choice (the tab the user then approves on) */
  readonly tab: number | null;
  /** fingerprint of the exact arguments (./book.ts `fingerprint`) */
  readonly target: string;
}

export type Decision = { kind: 'approve' } | { kind: 'approve_window'; minutes: WindowMinutes } | { kind: 'deny' };

type State = 'pending' | 'approved' | 'denied' | 'expired' | 'used' | 'failed';

export interface ApprovalRequest {
  readonly id: string;
  readonly scope: ApprovalScope;
  readonly createdAt: number;
  state: State;
  /** the tab the user approved on (the call's own, or the one the extension showed) */
  tab: number | null;
  tokenExpiresAt: number;
  /** resolves when the user decided or the request failed: a call may wait on it */
  readonly settled: Promise<void>;
  /** why no decision came: approval_expired, or the command's own code (agent_control_off, no_extension, command_failed…) */
  failure?: { code: ErrorCode; message: string };
}

export type Admission =
  /** run it; `tab` pins the tab the approval was given for (null: the call's own choice) */
  | { kind: 'run'; tab: number | null; via: 'read_only' | 'policy' | 'token' | 'window' }
  /** nothing covers it: ask the user (open a request) */
  | { kind: 'ask' }
  /** this request is still waiting for the user */
  | { kind: 'wait'; id: string };

export interface Grant {
  clientId: string;
  label: string;
  tab: number;
  until: number;
}

export class ApprovalBook {
  private readonly requests = new Map<string, ApprovalRequest>();
  private readonly windows: Grant[] = [];
  private readonly settle = new Map<string, () => void>();
  readonly stats = { asked: 0, approved: 0, windows_granted: 0, denied: 0, expired: 0, refused: {} as Record<string, number> };

  constructor(
    private readonly s: ApprovalSettings,
    private readonly now: () => number = Date.now,
  ) {}

  get settings(): Readonly<ApprovalSettings> {
    return this.s;
  }

  /**
   * May this call run now? Refusals throw typed errors. With `approvalId` the call redeems that
   * request (single use, within its scope); without, a live window or the policy may cover it.
   */
  admit(cls: ActionClass, scope: ApprovalScope, approvalId?: string): Admission {
    if (cls === 'read_only') return { kind: 'run', tab: scope.tab, via: 'read_only' };
    // watch mode first: a token or a window given before it was switched on lifts nothing
    if (this.s.watch) throw this.refuse('action_blocked', `${scope.label} is ${cls}, and this daemon is in watch mode (approvals.watch in the config file): no ${cls} action runs, approved or not`);
    const policy = this.s.policy[cls];
    if (policy === 'deny') throw this.refuse('action_blocked', `${scope.label} is ${cls}, and the user's policy (approvals.policy.${cls}: deny in the config file) refuses every such action`);
    if (policy === 'allow') return { kind: 'run', tab: scope.tab, via: 'policy' };
    if (approvalId !== undefined) return this.redeem(approvalId, scope);
    const w = this.window(scope);
    if (w) return { kind: 'run', tab: w.tab, via: 'window' };
    // the same call again while its request waits: no second prompt for the user
    for (const r of this.requests.values()) if (r.state === 'pending' && sameScope(r.scope, scope)) return { kind: 'wait', id: r.id };
    return { kind: 'ask' };
  }

  /** A new request for `scope`; throws too_many_pending past the per-client bound. */
  open(scope: ApprovalScope): ApprovalRequest {
    let mine = 0;
    for (const r of this.requests.values()) if (r.state === 'pending' && r.scope.clientId === scope.clientId) mine++;
    if (mine >= (this.s.maxOpenPerClient ?? 8)) throw this.refuse('too_many_pending', `you have ${mine} approvals waiting for the user; poll them (the same call with approval_id) before asking for more`);
    let done!: () => void;
    const settled = new Promise<void>((res) => (done = res));
    const r: ApprovalRequest = { id: `ap${randomBytes(8).toString('hex')}`, scope, createdAt: this.now(), state: 'pending', tab: scope.tab, tokenExpiresAt: 0, settled };
    this.requests.set(r.id, r);
    this.settle.set(r.id, done);
    this.stats.asked++;
    this.prune();
    return r;
  }

  get(id: string): ApprovalRequest | undefined {
    return this.requests.get(id);
  }

  /** The user's decision. `tab` is the tab the extension showed when the call named none. */
  decide(id: string, d: Decision, tab?: number): void {
    const r = this.requests.get(id);
    if (r?.state !== 'pending') return;
    this.wake(id);
    if (d.kind === 'deny') {
      r.state = 'denied';
      this.stats.denied++;
      return;
    }
    // a call that named its tab is approved for that tab only, whatever the extension says
    if (r.tab === null && tab !== undefined) r.tab = tab;
    r.state = 'approved';
    r.tokenExpiresAt = this.now() + this.s.tokenTtlMs;
    this.stats.approved++;
    if (d.kind === 'approve_window' && r.tab !== null) {
      this.stats.windows_granted++;
      const until = this.now() + d.minutes * 60_000;
      const at = this.windows.findIndex((g) => g.clientId === r.scope.clientId && g.label === r.scope.label && g.tab === r.tab);
      if (at >= 0) this.windows.splice(at, 1);
      this.windows.push({ clientId: r.scope.clientId, label: r.scope.label, tab: r.tab, until });
      if (this.windows.length > 64) this.windows.shift();
    }
  }

  /** No decision will come: the extension went away, refused to ask, or the request outlived its deadline. */
  fail(id: string, failure: NonNullable<ApprovalRequest['failure']>): void {
    const r = this.requests.get(id);
    if (r?.state !== 'pending') return;
    this.wake(id);
    r.state = failure.code === 'approval_expired' ? 'expired' : 'failed';
    if (r.state === 'expired') this.stats.expired++;
    r.failure = failure;
  }

  /** The windows in force (the popup and /health list them). */
  activeWindows(): Grant[] {
    const t = this.now();
    for (let i = this.windows.length - 1; i >= 0; i--) if (this.windows[i]!.until <= t) this.windows.splice(i, 1);
    return [...this.windows];
  }

  pendingCount(): number {
    let n = 0;
    for (const r of this.requests.values()) if (r.state === 'pending') n++;
    return n;
  }

  private wake(id: string): void {
    this.settle.get(id)?.();
    this.settle.delete(id);
  }

  private window(scope: ApprovalScope): Grant | undefined {
    // newest first: with no tab named, the tab most recently granted is the one the user means
    const live = this.activeWindows().reverse();
    return live.find((g) => g.clientId === scope.clientId && g.label === scope.label && (scope.tab === null || g.tab === scope.tab));
  }

  private redeem(id: string, scope: ApprovalScope): Admission {
    const r = this.requests.get(id);
    if (!r) throw this.refuse('approval_unknown', `no approval ${JSON.stringify(id.slice(0, 40))}: it was never issued or is long gone; make the call again without approval_id to ask the user`);
    if (r.scope.clientId !== scope.clientId) throw this.refuse('approval_scope', `approval ${id} was given to another client`);
    if (r.state === 'used') throw this.refuse('approval_replayed', `approval ${id} was used already: each approval runs one call; make the call again without approval_id to ask again`);
    if (r.state === 'denied') throw this.refuse('approval_denied', `the user denied ${r.scope.label}; do not retry it unless the user asks you to`);
    if (r.state === 'expired' || r.state === 'failed') throw this.refuse(r.failure?.code ?? 'approval_expired', r.failure?.message ?? `approval ${id} expired`);
    if (r.scope.label !== scope.label || r.scope.target !== scope.target || (scope.tab !== null && r.tab !== null && scope.tab !== r.tab)) {
      throw this.refuse('approval_scope', `approval ${id} was given for ${r.scope.label}${r.tab !== null ? ` on tab ${r.tab}` : ''} with other arguments; it covers only that exact call`);
    }
    if (r.state === 'pending') return { kind: 'wait', id };
    if (this.now() >= r.tokenExpiresAt) {
      r.state = 'expired';
      r.failure = { code: 'approval_expired', message: `approval ${id} was given more than ${Math.round(this.s.tokenTtlMs / 1000)} s ago and has expired; make the call again without approval_id to ask again` };
      this.stats.expired++;
      throw this.refuse('approval_expired', r.failure.message);
    }
    r.state = 'used';
    return { kind: 'run', tab: r.tab, via: 'token' };
  }

  /** Settled requests go first, oldest first; pending ones only when nothing else is left. */
  private prune(): void {
    const max = this.s.maxKept ?? 256;
    if (this.requests.size <= max) return;
    for (const [id, r] of this.requests) {
      if (this.requests.size <= max) return;
      if (r.state !== 'pending') this.requests.delete(id);
    }
    for (const id of this.requests.keys()) {
      if (this.requests.size <= max) return;
      this.fail(id, { code: 'approval_expired', message: 'too many approvals were waiting; this one was dropped' });
      this.requests.delete(id);
    }
  }

  private refuse(code: ErrorCode, message: string): Error {
    this.stats.refused[code] = (this.stats.refused[code] ?? 0) + 1;
    return gasolineError(code, message);
  }
}

function sameScope(a: ApprovalScope, b: ApprovalScope): boolean {
  return a.clientId === b.clientId && a.label === b.label && a.tab === b.tab && a.target === b.target;
}

/** The exact arguments of a call, hashed: a token covers only the call it was given for; typed text is never kept. */
export function fingerprint(args: Readonly<Record<string, unknown>>): string {
  const { approval_id: _a, tab_id: _t, timeout_ms: _m, ...rest } = args;
  const keys = Object.keys(rest).sort();
  return createHash('sha256').update(JSON.stringify(keys.map((k) => [k, rest[k]]))).digest('hex').slice(0, 32);
}
