/**
 * The worker's side of contract A (extension/src/sw/panel-token.ts): every panel_token request is
 * answered exactly once — the server's reply, checked; a timeout; not_connected; or an older
 * server's unknown_frame_type — and a malformed reply never becomes a token.
 */
import { describe, expect, it } from 'vitest';
import { PanelTokens, type PanelTokenFrame } from '../../../extension/src/sw/panel-token.js';

const TOKEN = 'A'.repeat(42) + '_';

function tokens(opts: { connected?: boolean; timeoutMs?: number } = {}): { p: PanelTokens; sent: PanelTokenFrame[] } {
  const sent: PanelTokenFrame[] = [];
  let n = 0;
  const p = new PanelTokens({
    send: (f) => (opts.connected === false ? false : (sent.push(f), true)),
    url: (path) => `http://127.0.0.1:7890${path}`,
    newId: () => `id${++n}`,
    timeoutMs: opts.timeoutMs ?? 5000,
  });
  return { p, sent };
}

describe('panel tokens in the worker', () => {
  it('sends one frame per request and answers with the token and the full /mcp URL', async () => {
    const { p, sent } = tokens();
    const a = p.request();
    expect(sent).toEqual([{ t: 'panel_token', id: 'id1' }]);
    expect(p.onFrame({ t: 'panel_token', id: 'id1', ok: true, token: TOKEN, expires_at: 1_900_000_000_000, path: '/mcp' })).toBe(true);
    expect(await a).toEqual({ ok: true, token: TOKEN, expires_at: 1_900_000_000_000, url: 'http://127.0.0.1:7890/mcp' });
  });

  it('passes the server refusal through (panel_unverified) and matches replies by id, not order', async () => {
    const { p } = tokens();
    const first = p.request();
    const second = p.request();
    p.onFrame({ t: 'panel_token', id: 'id2', ok: false, error: 'panel_unverified', message: 'prove the pairing first' });
    p.onFrame({ t: 'panel_token', id: 'id1', ok: true, token: TOKEN, expires_at: 1, path: '/mcp' });
    expect(await second).toEqual({ ok: false, error: 'panel_unverified', message: 'prove the pairing first' });
    expect((await first).ok).toBe(true);
  });

  it('a malformed reply is an error, never a half token', async () => {
    const bad: Array<Record<string, unknown>> = [
      { token: 'short', expires_at: 1, path: '/mcp' },
      { token: `${TOKEN}x`, expires_at: 1, path: '/mcp' },
      { token: 'A'.repeat(42) + '=', expires_at: 1, path: '/mcp' },
      { token: TOKEN, path: '/mcp' },
      { token: TOKEN, expires_at: 1, path: 'http://evil.example/mcp' },
      { token: TOKEN, expires_at: 1 },
    ];
    for (const b of bad) {
      const { p } = tokens();
      const a = p.request();
      p.onFrame({ t: 'panel_token', id: 'id1', ok: true, ...b });
      expect(await a).toMatchObject({ ok: false, error: 'invalid_reply' });
    }
    // an unknown error code shape is replaced, a long message bounded
    const { p } = tokens();
    const a = p.request();
    p.onFrame({ t: 'panel_token', id: 'id1', ok: false, error: 'NOT A CODE <b>', message: 'x'.repeat(5000) });
    const r = await a;
    expect(r).toMatchObject({ ok: false, error: 'panel_token_refused' });
    expect((r as { message: string }).message).toHaveLength(500);
  });

  it('times out after timeoutMs; a late reply is then ignored', async () => {
    const { p } = tokens({ timeoutMs: 30 });
    const t0 = Date.now();
    expect(await p.request()).toMatchObject({ ok: false, error: 'timeout' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    expect(p.onFrame({ t: 'panel_token', id: 'id1', ok: true, token: TOKEN, expires_at: 1, path: '/mcp' })).toBe(true);
  });

  it('not connected: answered at once; a drop answers everyone waiting', async () => {
    expect(await tokens({ connected: false }).p.request()).toMatchObject({ ok: false, error: 'not_connected' });
    const { p } = tokens();
    const waiting = [p.request(), p.request()];
    p.disconnected();
    for (const w of waiting) expect(await w).toMatchObject({ ok: false, error: 'not_connected' });
  });

  it("an older server's unknown_frame_type answers the oldest request; other errors are not ours", async () => {
    const { p } = tokens();
    const first = p.request();
    const second = p.request();
    expect(p.onFrame({ t: 'error', code: 'overloaded', message: 'x' })).toBe(false);
    expect(p.onFrame({ t: 'error', code: 'unknown_frame_type', message: 'unknown frame type t="panel_token"' })).toBe(true);
    expect(await first).toMatchObject({ ok: false, error: 'unknown_frame_type' });
    p.disconnected();
    expect(await second).toMatchObject({ ok: false, error: 'not_connected' });
  });

  it('bounds how many requests may wait', async () => {
    const { p } = tokens();
    const waiting = Array.from({ length: 8 }, () => p.request());
    expect(await p.request()).toMatchObject({ ok: false, error: 'busy' });
    p.disconnected();
    await Promise.all(waiting);
  });
});
