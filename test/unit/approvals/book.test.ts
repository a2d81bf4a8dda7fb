/**
 * The approval book on its edges (issue 19 item 4): missing, expired, mismatched, replayed and
 * denied approvals are refused with their own codes; a window covers only its client, action and
 * tab for its minutes; watch mode and a deny policy refuse even an approved action.
 */
import { describe, expect, it } from 'vitest';
import { ApprovalBook, fingerprint, type ApprovalScope, type ApprovalSettings } from '../../../src/domain/approvals/book.js';
import type { GasolineError } from '../../../src/errors.js';

function setup(over: Partial<ApprovalSettings> = {}) {
  let t = 1_000_000;
  const book = new ApprovalBook({ policy: { mutating: 'ask', destructive: 'ask' }, watch: false, tokenTtlMs: 60_000, requestTtlMs: 120_000, ...over }, () => t);
  return { book, advance: (ms: number) => (t += ms) };
}
const scope = (over: Partial<ApprovalScope> = {}): ApprovalScope => ({ clientId: 'a', label: 'interact click', tab: 7, target: fingerprint({ action: 'click', selector: '#save' }), ...over });
const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return (e as GasolineError).code;
  }
  return 'no error';
};

describe('approval book', () => {
  it('read-only runs, allow runs, ask asks, deny refuses', () => {
    const { book } = setup({ policy: { mutating: 'allow', destructive: 'deny' } });
    expect(book.admit('read_only', scope())).toMatchObject({ kind: 'run', via: 'read_only' });
    expect(book.admit('mutating', scope())).toMatchObject({ kind: 'run', via: 'policy' });
    expect(code(() => book.admit('destructive', scope({ label: 'configure clear scope:all' })))).toBe('action_blocked');
    expect(setup().book.admit('mutating', scope())).toEqual({ kind: 'ask' });
  });

  it('an approval runs exactly one call: a second use is a replay', () => {
    const { book } = setup();
    const r = book.open(scope());
    expect(book.admit('mutating', scope(), r.id)).toEqual({ kind: 'wait', id: r.id });
    book.decide(r.id, { kind: 'approve' });
    expect(book.admit('mutating', scope(), r.id)).toMatchObject({ kind: 'run', via: 'token', tab: 7 });
    expect(code(() => book.admit('mutating', scope(), r.id))).toBe('approval_replayed');
  });

  it('missing, denied and expired approvals are refused with their own codes', () => {
    const { book, advance } = setup();
    expect(code(() => book.admit('mutating', scope(), 'ap0000000000000000'))).toBe('approval_unknown');
    const denied = book.open(scope());
    book.decide(denied.id, { kind: 'deny' });
    expect(code(() => book.admit('mutating', scope(), denied.id))).toBe('approval_denied');
    const late = book.open(scope({ target: 'other' }));
    book.decide(late.id, { kind: 'approve' });
    advance(60_000);
    expect(code(() => book.admit('mutating', scope({ target: 'other' }), late.id))).toBe('approval_expired');
    // and stays expired
    expect(code(() => book.admit('mutating', scope({ target: 'other' }), late.id))).toBe('approval_expired');
    const lapsed = book.open(scope({ target: 'x' }));
    book.fail(lapsed.id, { code: 'approval_expired', message: 'nobody decided' });
    expect(code(() => book.admit('mutating', scope({ target: 'x' }), lapsed.id))).toBe('approval_expired');
  });

  it('a token is good just under its 60 s', () => {
    const { book, advance } = setup();
    const r = book.open(scope());
    book.decide(r.id, { kind: 'approve' });
    advance(59_999);
    expect(book.admit('mutating', scope(), r.id).kind).toBe('run');
  });

  it('an approval covers only its action, target, tab and client', () => {
    const { book } = setup();
    const r = book.open(scope());
    book.decide(r.id, { kind: 'approve' });
    expect(code(() => book.admit('mutating', scope({ label: 'interact type' }), r.id))).toBe('approval_scope');
    expect(code(() => book.admit('mutating', scope({ target: fingerprint({ action: 'click', selector: '#delete' }) }), r.id))).toBe('approval_scope');
    expect(code(() => book.admit('mutating', scope({ tab: 8 }), r.id))).toBe('approval_scope');
    expect(code(() => book.admit('mutating', scope({ clientId: 'b' }), r.id))).toBe('approval_scope');
    // the mismatches did not burn it: the exact call still runs, on the tab approved
    expect(book.admit('mutating', scope({ tab: null }), r.id)).toMatchObject({ kind: 'run', tab: 7 });
  });

  it('a call that named no tab is pinned to the tab the user approved on', () => {
    const { book } = setup();
    const r = book.open(scope({ tab: null }));
    book.decide(r.id, { kind: 'approve' }, 12);
    expect(book.admit('mutating', scope({ tab: null }), r.id)).toMatchObject({ kind: 'run', tab: 12 });
  });

  it('approve for N minutes: this client, this action, this tab, until the window ends', () => {
    const { book, advance } = setup();
    const r = book.open(scope());
    book.decide(r.id, { kind: 'approve_window', minutes: 5 });
    const other = { target: fingerprint({ action: 'click', selector: '#other' }) };
    expect(book.admit('mutating', scope(other))).toMatchObject({ kind: 'run', via: 'window', tab: 7 });
    expect(book.admit('mutating', scope({ ...other, tab: null }))).toMatchObject({ kind: 'run', via: 'window', tab: 7 });
    expect(book.admit('mutating', scope({ ...other, tab: 8 }))).toEqual({ kind: 'ask' });
    expect(book.admit('mutating', scope({ ...other, label: 'interact type' }))).toEqual({ kind: 'ask' });
    expect(book.admit('mutating', scope({ ...other, clientId: 'b' }))).toEqual({ kind: 'ask' });
    advance(5 * 60_000 - 1);
    expect(book.admit('mutating', scope(other)).kind).toBe('run');
    advance(1);
    expect(book.admit('mutating', scope(other))).toEqual({ kind: 'ask' });
    expect(book.activeWindows()).toEqual([]);
  });

  it('watch mode refuses a mutating action even with an approval or a window', () => {
    const s: ApprovalSettings = { policy: { mutating: 'ask', destructive: 'ask' }, watch: false, tokenTtlMs: 60_000, requestTtlMs: 120_000 };
    const book = new ApprovalBook(s);
    const r = book.open(scope());
    book.decide(r.id, { kind: 'approve_window', minutes: 60 });
    s.watch = true;
    expect(code(() => book.admit('mutating', scope(), r.id))).toBe('action_blocked');
    expect(code(() => book.admit('mutating', scope()))).toBe('action_blocked');
    expect(code(() => setup({ watch: true, policy: { mutating: 'allow', destructive: 'allow' } }).book.admit('destructive', scope()))).toBe('action_blocked');
    // reading is what watch mode is for
    expect(setup({ watch: true }).book.admit('read_only', scope()).kind).toBe('run');
  });

  it('the same call while its request waits does not ask the user twice; the bound holds per client', async () => {
    const { book } = setup({ maxOpenPerClient: 2 });
    const r = book.open(scope());
    expect(book.admit('mutating', scope())).toEqual({ kind: 'wait', id: r.id });
    book.open(scope({ target: 'b' }));
    expect(code(() => book.open(scope({ target: 'c' })))).toBe('too_many_pending');
    expect(book.open(scope({ clientId: 'other' })).state).toBe('pending');
    let woke = false;
    void r.settled.then(() => (woke = true));
    book.decide(r.id, { kind: 'deny' });
    await r.settled;
    expect(woke).toBe(true);
  });

  it('keeps at most maxKept requests, settled ones dropped first', () => {
    const { book } = setup({ maxKept: 3, maxOpenPerClient: 10 });
    const a = book.open(scope({ target: '1' }));
    book.decide(a.id, { kind: 'deny' });
    const b = book.open(scope({ target: '2' }));
    book.open(scope({ target: '3' }));
    book.open(scope({ target: '4' }));
    expect(book.get(a.id)).toBeUndefined();
    expect(book.get(b.id)?.state).toBe('pending');
  });

  it('the fingerprint covers the typed text without keeping it, and ignores tab, timeout and approval id', () => {
    const f = fingerprint({ action: 'type', selector: '#pw', text: 'hunter2' });
    expect(f).not.toContain('hunter2');
    expect(f).not.toBe(fingerprint({ action: 'type', selector: '#pw', text: 'hunter3' }));
    expect(f).toBe(fingerprint({ selector: '#pw', text: 'hunter2', action: 'type', tab_id: 3, timeout_ms: 500, approval_id: 'ap1' }));
  });
});
