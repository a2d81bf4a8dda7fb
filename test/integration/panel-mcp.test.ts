/**
 * The side panel's two halves that run outside the page, in Node against the real server:
 *
 * 1. The worker's token request (contract A) over the extension's real, paired Transport.
 * 2. The panel's MCP session (extension/src/panel/mcp.ts, the SDK's client) over the daemon's
 *    /mcp with the tokens that request returns: calls, and the explicit re-initialise when the
 *    server forgets the session (a real 404, made by ending the session from outside) or refuses
 *    the token.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { handshakeProofs, newNonce, sameHex } from '../../extension/src/sw/pairing.js';
import { PanelTokens } from '../../extension/src/sw/panel-token.js';
import { Transport, type SocketLike } from '../../extension/src/sw/transport.js';
import { PanelMcp, PanelSessionError, type TokenAnswer } from '../../extension/src/panel/mcp.js';
import { startTestServer, TEST_PAIRING_KEY } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const socket = (url: string): SocketLike => new WebSocket(url, { origin: EXTENSION_ORIGIN }) as unknown as SocketLike;

let server: App;
let transport: Transport;
let tokens: PanelTokens;
beforeAll(async () => {
  server = await startTestServer({ state_dir: tempStateDir() }, { mcpHttp: true });
  // the extension's own worker half, paired: its PanelTokens asks the server over this socket
  let t: Transport | undefined;
  tokens = new PanelTokens({ send: (f) => t!.send(f), url: (p) => `http://127.0.0.1:${server.port}${p}`, newId: () => crypto.randomUUID() });
  t = new Transport({
    url: `ws://127.0.0.1:${server.port}/ws`,
    version: 'test',
    session: 'panel-token-transport',
    createSocket: socket,
    auth: { key: () => TEST_PAIRING_KEY, nonce: newNonce, proofs: handshakeProofs, same: sameHex },
    onOther: (f) => tokens.onFrame(f),
    onStatus: (s) => {
      if (s.state.kind !== 'connected') tokens.disconnected();
    },
  });
  transport = t;
  t.start();
  await waitFor('verified', () => server.ws.producers().find((p) => p.session === 'panel-token-transport')?.verified === true);
});
afterAll(async () => {
  transport?.stop();
  await server.close();
});

describe("the worker's panel_token request over the paired transport", () => {
  it('is answered per the contract and the connection stays up', async () => {
    const a = await tokens.request();
    if (!a.ok) throw new Error(`no token: ${a.error}`);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
    expect(a.expires_at).toBeGreaterThan(Date.now());
    expect(transport.status().state.kind).toBe('connected');
  });
});

describe("the panel's MCP session (the SDK client) against the daemon's /mcp, with real panel tokens", () => {
  /** the last token handed to a PanelMcp: what ends its session from outside */
  let last = '';
  const tokenOf = async (): Promise<TokenAnswer> => {
    const a = await tokens.request();
    if (a.ok) last = a.token;
    return a;
  };

  it('calls tools; a forgotten session (404) is re-initialised once, with the notice, and the call still answers', async () => {
    let asked = 0;
    let lost = 0;
    const mcp = new PanelMcp({ version: 't', token: async () => (asked++, tokenOf()), onLost: () => lost++ });
    try {
      const r = await mcp.call('observe', { what: 'summary' });
      expect(r.isError).toBe(false);
      expect(r.text.length).toBeGreaterThan(0);
      const first = mcp.sessionId!;
      expect(first).toBeTruthy();
      // the daemon forgets the session (as after a restart): end it from outside
      const del = await fetch(`http://127.0.0.1:${server.port}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${last}`, 'mcp-session-id': first } });
      expect(del.status).toBeLessThan(300);
      const again = await mcp.call('configure', { action: 'health' });
      expect(again.isError).toBe(false);
      expect(lost).toBe(1);
      expect(asked).toBe(2);
      expect(mcp.sessionId).not.toBe(first);
    } finally {
      await mcp.close();
    }
  });

  it('a refused token is a typed session error; a worker refusal passes its code through', async () => {
    const wrong = new PanelMcp({ version: 't', token: async () => ({ ...(await tokenOf()), token: 'B'.repeat(43) }) as TokenAnswer });
    const e = await wrong.open().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PanelSessionError);
    expect((e as PanelSessionError).code).toBe('panel_token_refused');
    const unverified = new PanelMcp({ version: 't', token: async () => ({ ok: false, error: 'panel_unverified', message: 'prove the pairing' }) });
    await expect(unverified.open()).rejects.toMatchObject({ code: 'panel_unverified' });
  });

  it('a token about to lapse is renewed before the call, in place: the same session', async () => {
    let asked = 0;
    const mcp = new PanelMcp({ version: 't', refreshBeforeMs: 60_000, token: async () => (asked++, { ...(await tokenOf()), expires_at: Date.now() + 30_000 }) as TokenAnswer });
    try {
      await mcp.call('observe', { what: 'summary' });
      const first = mcp.sessionId;
      await mcp.call('observe', { what: 'summary' });
      expect(asked).toBe(2);
      expect(mcp.sessionId).toBe(first);
    } finally {
      await mcp.close();
    }
  });
});

describe('renewal against tokens that really expire (the daemon closes a panel session when its token does)', () => {
  const TTL = 4000;
  let short: App;
  let ext: Transport;
  let shortTokens: PanelTokens;
  /** commands the extension holds: a tool call stays in flight until the test answers it */
  const held: Array<{ id: string; type: string }> = [];
  beforeAll(async () => {
    short = await startTestServer({ state_dir: tempStateDir(), commands: { wait_ms: 20_000 } }, { mcpHttp: true, panelTokenTtlMs: TTL });
    let t: Transport | undefined;
    shortTokens = new PanelTokens({ send: (f) => t!.send(f), url: (p) => `http://127.0.0.1:${short.port}${p}`, newId: () => crypto.randomUUID() });
    t = new Transport({
      url: `ws://127.0.0.1:${short.port}/ws`,
      version: 'test',
      session: 'panel-renewal-transport',
      createSocket: socket,
      auth: { key: () => TEST_PAIRING_KEY, nonce: newNonce, proofs: handshakeProofs, same: sameHex },
      onCommand: (f) => void held.push({ id: f.id, type: f.type }),
      onOther: (f) => shortTokens.onFrame(f),
      onStatus: (s) => {
        if (s.state.kind !== 'connected') shortTokens.disconnected();
      },
    });
    ext = t;
    t.start();
    await waitFor('verified', () => short.ws.producers().find((p) => p.session === 'panel-renewal-transport')?.verified === true);
  });
  let closed = false;
  afterAll(async () => {
    ext?.stop();
    if (!closed) await short?.close();
  });

  it('a call in flight while the token is renewed still answers, and the session outlives the first token', async () => {
    const expiries: number[] = [];
    let lost = 0;
    const mcp = new PanelMcp({
      version: 't',
      callTimeoutMs: 2500,
      refreshBeforeMs: 3000,
      onLost: () => lost++,
      token: async () => {
        const a = await shortTokens.request();
        if (a.ok) expiries.push(a.expires_at);
        return a;
      },
    });
    try {
      await mcp.open();
      const session = mcp.sessionId;
      // a call the extension holds: in flight across the renewal below
      const inFlight = mcp.call('analyze', { target: 'dom', selector: '#save' });
      await waitFor('the command reaches the extension', () => held.length === 1);
      // the first token now has less left than a call may take: the next call renews it
      await waitFor('renewal is due', () => Date.now() > expiries[0]! - 3000);
      expect((await mcp.call('observe', { what: 'summary' })).isError).toBe(false);
      expect(expiries.length).toBe(2);
      expect(mcp.sessionId).toBe(session);
      ext.sendResult({ t: 'result', id: held[0]!.id, status: 'complete', result: { url: 'http://127.0.0.1:3000/', title: 'App', match_count: 1, matches: [{ tag: 'button', id: 'save', text: 'Save', bbox: { x: 1, y: 2, width: 30, height: 10 }, visible: true }] } });
      const r = await inFlight;
      expect(r.isError, r.text).toBe(false);
      expect(r.text).toContain('dom: 1 matched');
      // past the first token's expiry the daemon still knows the session: it holds the renewed token
      await waitFor('the first token expired', () => Date.now() > expiries[0]! + 200);
      expect((await mcp.call('configure', { action: 'health' })).isError).toBe(false);
      expect(mcp.sessionId).toBe(session);
      expect(lost).toBe(0);
    } finally {
      await mcp.close();
    }
  }, 20_000);

  // last in this block: it stops the server
  it('a network failure forgets the session: the next open() asks the daemon again instead of claiming ready', async () => {
    let asked = 0;
    const mcp = new PanelMcp({ version: 't', callTimeoutMs: 2500, refreshBeforeMs: 3000, token: async () => (asked++, shortTokens.request()) });
    try {
      await mcp.call('observe', { what: 'summary' });
      expect(asked).toBe(1);
      ext.stop();
      await short.close();
      closed = true;
      // the socket refused, or the edge's last answer on its way down: either way no tool answer
      await expect(mcp.call('observe', { what: 'summary' })).rejects.toThrow(/fetch failed|shutting_down|ECONNREFUSED/);
      expect(mcp.sessionId).toBeUndefined();
      await expect(mcp.open()).rejects.toMatchObject({ code: 'not_connected' });
      expect(asked).toBe(2);
    } finally {
      await mcp.close();
    }
  });
});
