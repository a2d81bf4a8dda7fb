/**
 * The side panel's state machine (extension/src/panel/state.ts) and its answer reading
 * (answer.ts): the six states from the three inputs, approvals winning, a lost session's notice,
 * and the redaction footer read only where it belongs.
 */
import { describe, expect, it } from 'vitest';
import { INITIAL, reconnectOnLink, reduce, view, type PanelEvent, type PanelModel } from '../../../extension/src/panel/state.js';
import { badgeText, bound, headLines, readAnswer } from '../../../extension/src/panel/answer.js';

const run = (...events: PanelEvent[]): PanelModel => events.reduce(reduce, INITIAL);
const connected: PanelEvent = { t: 'link', link: { kind: 'connected' } };

describe('panel state', () => {
  it('idle → connecting → ready; nothing can be asked before the session is up', () => {
    expect(view(INITIAL)).toMatchObject({ kind: 'idle', canAsk: false });
    expect(view(run({ t: 'start' }))).toMatchObject({ kind: 'connecting', canAsk: false });
    expect(view(run(connected, { t: 'start' }, { t: 'session_up' }))).toMatchObject({ kind: 'ready', canAsk: true });
  });

  it('degraded while the extension is not streaming to a paired server, and says why', () => {
    expect(view(run({ t: 'start' }, { t: 'session_up' }))).toMatchObject({ kind: 'degraded', canAsk: true });
    const refused = view(run({ t: 'start' }, { t: 'session_up' }, { t: 'link', link: { kind: 'refused', why: 'impostor' } }));
    expect(refused.kind).toBe('degraded');
    expect(refused.detail).toContain('not the gasoline the extension is paired with');
    expect(view(run({ t: 'session_up' }, { t: 'link', link: { kind: 'backoff' } })).detail).toContain('cannot reach');
  });

  it('needs approval wins over ready and degraded, and goes when the count does', () => {
    const m = run(connected, { t: 'session_up' }, { t: 'approvals', count: 2 });
    expect(view(m)).toMatchObject({ kind: 'needs_approval', detail: '2 agent actions wait for your decision below.' });
    expect(view(reduce(m, { t: 'link', link: null })).kind).toBe('needs_approval');
    expect(view(reduce(m, { t: 'approvals', count: 0 })).kind).toBe('ready');
    expect(view(run({ t: 'approvals', count: -3 })).kind).toBe('idle');
  });

  it('a failed session reconnects once when the link comes back to connected, not on every tick', () => {
    const step = (m: PanelModel, e: PanelEvent): [PanelModel, boolean] => {
      const next = reduce(m, e);
      return [next, reconnectOnLink(m, e, next)];
    };
    const failed = run({ t: 'link', link: { kind: 'backoff' } }, { t: 'start' }, { t: 'session_failed', code: 'not_connected', message: 'no link' });
    const [back, again] = step(failed, connected);
    expect(again).toBe(true);
    // the same link again, or another event: no second attempt
    expect(step(back, connected)[1]).toBe(false);
    expect(step(back, { t: 'approvals', count: 1 })[1]).toBe(false);
    // a change to something else than connected asks nothing; back to connected asks once more
    const [down, d] = step(back, { t: 'link', link: { kind: 'backoff' } });
    expect(d).toBe(false);
    expect(step(down, connected)[1]).toBe(true);
    // a session that is up, or starting, is left alone when the link returns
    expect(step(run({ t: 'link', link: { kind: 'backoff' } }, { t: 'session_up' }), connected)[1]).toBe(false);
    expect(step(run({ t: 'link', link: null }, { t: 'start' }), connected)[1]).toBe(false);
  });

  it('error wins over everything and carries the code; start clears it', () => {
    const m = run(connected, { t: 'approvals', count: 1 }, { t: 'session_failed', code: 'panel_unverified', message: 'pair first' });
    expect(view(m)).toEqual({ kind: 'error', label: 'error', detail: 'panel_unverified: pair first', canAsk: true });
    expect(view(reduce(m, { t: 'start' })).kind).toBe('connecting');
  });

  it('a lost session reconnects with a notice that stays until seen', () => {
    const m = run(connected, { t: 'session_up' }, { t: 'session_lost' });
    expect(view(m).kind).toBe('connecting');
    expect(m.notice).toContain('new session was started');
    const up = reduce(m, { t: 'session_up' });
    expect(up.notice).not.toBeNull();
    expect(reduce(up, { t: 'notice_seen' }).notice).toBeNull();
  });
});

describe('panel answers', () => {
  const FOOT = 'redaction: policy 3 · redacted 2 · blocked 0 · model offline';

  it('takes the footer off the answer into a badge', () => {
    const r = readAnswer(`Checkout fails: POST /api/cart 500.\nnext: observe network\n${FOOT}\n`);
    expect(r.body).toBe('Checkout fails: POST /api/cart 500.\nnext: observe network');
    expect(r.redaction).toEqual({ policy: '3', redacted: 2, blocked: 0, model: 'offline' });
    expect(badgeText(r.redaction!)).toBe(FOOT);
    expect(r.egressBlocked).toBe(false);
  });

  it('a footer-like line that is not last stays text; no footer, no badge; egress blocked is seen', () => {
    const r = readAnswer(`${FOOT}\nthe rest`);
    expect(r.redaction).toBeNull();
    expect(r.body).toContain(FOOT);
    expect(readAnswer('model_egress_blocked: a secret could not be redacted').egressBlocked).toBe(true);
    expect(readAnswer('redaction: policy 1 · redacted x · blocked 0').redaction).toBeNull();
  });

  it('bounds text and heads cards', () => {
    expect(bound('abc', 2)).toBe('ab\n… (1 more characters not shown)');
    expect(readAnswer('x'.repeat(30_000)).body.length).toBeLessThan(20_100);
    expect(headLines('a\n\nb\nc\nd', 2)).toEqual({ head: 'a\nb', more: 2 });
  });
});
