/**
 * The side panel's MCP session token (issue 19 item 2, contract A): the panel cannot prove the
 * pairing itself — the secret stays in the worker — so it asks the worker, which asks the server
 * over the paired WebSocket (`panel_token` frame) and hands back the token with the full /mcp URL.
 *
 * Every request is answered exactly once: the server's reply, a timeout (5 s), `not_connected`
 * when there is no proven connection to ask on or it drops while we wait, or
 * `unknown_frame_type` when the server is a gasoline from before panel tokens (it answers our
 * frame with that error and no id, so the oldest waiting request takes it). Platform-free: the
 * frame sender and the clock come in, so Node tests drive it.
 */

export type PanelTokenAnswer = { ok: true; token: string; expires_at: number; url: string } | { ok: false; error: string; message: string };

export interface PanelTokenFrame {
  t: 'panel_token';
  id: string;
}

export interface PanelTokenDeps {
  /** sends over the proven connection; false when there is none */
  send(frame: PanelTokenFrame): boolean;
  /** the http URL of a server path on the port the worker talks to */
  url(path: string): string;
  newId(): string;
  timeoutMs?: number;
}

/** bounds what a page that keeps asking can pile up in the worker */
const MAX_WAITING = 8;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const PATH = /^\/[A-Za-z0-9/_-]{0,63}$/;

interface Waiting {
  resolve(a: PanelTokenAnswer): void;
  timer: ReturnType<typeof setTimeout>;
}

export class PanelTokens {
  private readonly waiting = new Map<string, Waiting>();

  constructor(private readonly deps: PanelTokenDeps) {}

  request(): Promise<PanelTokenAnswer> {
    if (this.waiting.size >= MAX_WAITING) return Promise.resolve(fail('busy', `${MAX_WAITING} panel token requests are already waiting for the server`));
    const id = this.deps.newId();
    if (!this.deps.send({ t: 'panel_token', id })) return Promise.resolve(fail('not_connected', 'the extension is not connected to a paired gasoline; see the connection line'));
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(id, fail('timeout', 'the server did not answer the panel token request within 5 s')), this.deps.timeoutMs ?? 5000);
      this.waiting.set(id, { resolve, timer });
    });
  }

  /**
   * A frame the transport does not handle itself. True when it was ours: a `panel_token` reply,
   * or the `unknown_frame_type` error an older server sends for our request.
   */
  onFrame(f: Record<string, unknown>): boolean {
    if (f.t === 'panel_token') {
      const id = typeof f.id === 'string' ? f.id : '';
      if (!this.waiting.has(id)) return true;
      this.settle(id, read(f, this.deps.url));
      return true;
    }
    if (f.t === 'error' && f.code === 'unknown_frame_type' && String(f.message ?? '').includes('panel_token')) {
      const oldest = this.waiting.keys().next();
      if (!oldest.done) this.settle(oldest.value, fail('unknown_frame_type', 'this gasoline server does not hand out panel sessions: update it (gasoline ≥ the version with the side panel)'));
      return true;
    }
    return false;
  }

  /** The connection we asked on is gone: its tokens die with it, so nothing it could answer is any use. */
  disconnected(): void {
    for (const id of [...this.waiting.keys()]) this.settle(id, fail('not_connected', 'the connection to gasoline dropped while waiting for the panel token'));
  }

  private settle(id: string, a: PanelTokenAnswer): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    w.resolve(a);
  }
}

function fail(error: string, message: string): PanelTokenAnswer {
  return { ok: false, error, message };
}

/** The server's reply, checked field by field: a malformed one is an error, never a half token. */
function read(f: Record<string, unknown>, url: (path: string) => string): PanelTokenAnswer {
  if (f.ok === true) {
    if (typeof f.token !== 'string' || !TOKEN.test(f.token)) return fail('invalid_reply', 'the server sent a malformed panel token');
    if (typeof f.expires_at !== 'number' || !Number.isFinite(f.expires_at)) return fail('invalid_reply', 'the server sent no token expiry');
    const path = typeof f.path === 'string' && PATH.test(f.path) ? f.path : null;
    if (!path) return fail('invalid_reply', 'the server sent no usable /mcp path');
    return { ok: true, token: f.token, expires_at: f.expires_at, url: url(path) };
  }
  const error = typeof f.error === 'string' && /^[a-z_]{1,64}$/.test(f.error) ? f.error : 'panel_token_refused';
  const message = typeof f.message === 'string' ? f.message.slice(0, 500) : 'the server refused a panel token';
  return fail(error, message);
}
