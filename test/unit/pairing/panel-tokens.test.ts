/** Panel tokens (issue 19 item 2): shape, lifetime, the per-connection cap, revocation. */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { PanelTokens, type PanelGrant, type RevokeReason } from '../../../src/pairing/panel-tokens.js';

function book(now = { t: 1_000 }): { tokens: PanelTokens; now: { t: number }; revoked: Array<[PanelGrant, RevokeReason]> } {
  const tokens = new PanelTokens({ ttlMs: 60_000, perConnection: 4, now: () => now.t });
  const revoked: Array<[PanelGrant, RevokeReason]> = [];
  tokens.onRevoke((g, why) => revoked.push([g, why]));
  return { tokens, now, revoked };
}

describe('panel tokens', () => {
  it('are 43 base64url characters (32 random bytes), each different, and checked as a bearer', () => {
    const { tokens } = book();
    const a = tokens.issue(1);
    const b = tokens.issue(1);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.token, 'base64url')).toHaveLength(32);
    expect(a.token).not.toBe(b.token);
    expect(a.expiresAt).toBe(61_000);
    expect(tokens.check(`Bearer ${a.token}`)).toMatchObject({ connId: 1, expiresAt: 61_000, live: true });
    // not a bearer, a token one character off, or the right length of nonsense: nothing
    expect(tokens.check(a.token)).toBeNull();
    expect(tokens.check(`Bearer ${a.token.slice(0, -1)}${a.token.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(tokens.check(`Bearer ${'x'.repeat(43)}`)).toBeNull();
    expect(tokens.check(`Bearer ${a.token} `)).toBeNull();
    expect(tokens.check('')).toBeNull();
  });

  it('expire on their own timer: the listeners hear of it at the expiry, with nothing else asked; close stops it', async () => {
    const tokens = new PanelTokens({ ttlMs: 80 });
    const heard: RevokeReason[] = [];
    tokens.onRevoke((_, why) => heard.push(why));
    tokens.issue(1);
    const t0 = Date.now();
    await waitFor('the expiry swept', () => heard.length > 0, 3000);
    expect(heard).toEqual(['expired']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(70);
    expect(tokens.stats.expired).toBe(1);
    // closed: a token issued after is not swept by a timer (no timer holds the process either)
    tokens.close();
    tokens.issue(2);
    await new Promise((r) => setTimeout(r, 150));
    expect(heard).toEqual(['expired']);
  });

  it('expire after their lifetime, and say so once', () => {
    const { tokens, now, revoked } = book();
    const a = tokens.issue(1);
    const g = tokens.check(`Bearer ${a.token}`)!;
    now.t = 60_999;
    expect(tokens.check(`Bearer ${a.token}`)).not.toBeNull();
    now.t = 61_000;
    expect(g.live).toBe(false);
    expect(tokens.check(`Bearer ${a.token}`)).toBeNull();
    expect(tokens.check(`Bearer ${a.token}`)).toBeNull();
    expect(revoked.map(([, why]) => why)).toEqual(['expired']);
    expect(tokens.live).toBe(0);
    expect(tokens.stats).toMatchObject({ issued: 1, expired: 1 });
  });

  it('hold at most four per connection: the fifth revokes the oldest, other connections untouched', () => {
    const { tokens, revoked } = book();
    const other = tokens.issue(2);
    const five = [1, 2, 3, 4, 5].map(() => tokens.issue(1));
    expect(tokens.check(`Bearer ${five[0]!.token}`)).toBeNull();
    for (const t of five.slice(1)) expect(tokens.check(`Bearer ${t.token}`)).not.toBeNull();
    expect(tokens.check(`Bearer ${other.token}`)).not.toBeNull();
    expect(revoked.map(([g, why]) => [g.connId, why])).toEqual([[1, 'replaced']]);
    expect(tokens.live).toBe(5);
  });

  it('die with their connection, and all of them with a pairing reset', () => {
    const { tokens, revoked } = book();
    const a = tokens.issue(1);
    const b = tokens.issue(2);
    const ga = tokens.check(`Bearer ${a.token}`)!;
    tokens.revokeConnection(1);
    expect(ga.live).toBe(false);
    expect(tokens.check(`Bearer ${a.token}`)).toBeNull();
    expect(tokens.check(`Bearer ${b.token}`)).not.toBeNull();
    tokens.revokeConnection(1);
    tokens.revokeAll();
    expect(tokens.check(`Bearer ${b.token}`)).toBeNull();
    expect(revoked.map(([g, why]) => [g.connId, why])).toEqual([
      [1, 'connection_closed'],
      [2, 'reset'],
    ]);
    expect(tokens.health()).toMatchObject({ live: 0, issued: 2, revoked: 2, ttl_s: 60, per_connection: 4 });
  });
});
