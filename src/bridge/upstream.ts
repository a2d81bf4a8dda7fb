/**
 * The bridge's one MCP session with the daemon (./mcp-session.ts), kept alive across faults: a
 * daemon that dies is noticed (its push stream breaks, or a request fails), found again or started
 * anew, and what the agent set on the session (streaming, log level) is applied to the new one.
 * Requests made meanwhile wait a bounded time, then answer with what is wrong and what to do.
 */
import { randomBytes } from 'node:crypto';
import { deriveClientId } from '../clients/client-id.js';
import { readDaemonToken, tokenPath } from '../daemon/contract.js';
import { log } from '../log.js';
import { VERSION } from '../version.js';
import { daemonOutputPath, type DaemonInfo } from './daemon.js';
import { findOrStart, type Found } from './find.js';
import { HopError, McpSession, type Msg, SessionGone } from './mcp-session.js';

/** a request made while no daemon answers waits this long for one */
export const GAP_WAIT_MS = 5000;
/** the daemon bounds its own tools (accessibility: 30 s); this only catches a daemon that hangs */
const CALL_TIMEOUT_MS = 5 * 60_000;
const OPEN_TIMEOUT_MS = 5000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 2000;
/** JSON-RPC "server error" range: the hop to the daemon failed, the request was not answered */
const HOP_ERROR = -32000;

export interface UpstreamOptions {
  stateDir: string;
  port: number;
  clientId: string;
  /** argv of a daemon this bridge starts; with `start: false` (--connect) it never starts one */
  daemonArgs: string[];
  start: boolean;
  replace: boolean;
  /** a message the daemon pushed (a notification, or a request of its own), to relay to the agent as is */
  relay: (m: Msg) => void;
}

interface Session {
  mcp: McpSession;
  info: DaemonInfo;
  /** the push stream failed before the session was in use */
  dead?: string;
}

/** --client-id, else this directory's id (a restarted agent finds its state), else random */
export function resolveClientId(explicit: string | undefined): string {
  try {
    return deriveClientId(explicit);
  } catch {
    // the working directory was deleted under us: no stable id to derive
    return `rnd-${randomBytes(6).toString('hex')}`;
  }
}

export class Upstream {
  private session: Session | null = null;
  /** what is wrong while there is no session: the text a waiting request answers with */
  private problem = 'connecting to the gasoline daemon';
  private loop: Promise<void> | null = null;
  private waiters = new Set<() => void>();
  private closed = false;
  private connectedOnce = false;
  private opened = 0;
  /** the agent's initialize params, sent again on every session this bridge opens */
  private init: Record<string, unknown> | null = null;
  private initWaiters = new Set<() => void>();
  /** the last streaming enable the agent made (null: off), applied again to every new session */
  private streaming: Record<string, unknown> | null = null;
  /** the agent's last logging/setLevel, likewise */
  private logLevel: Msg | null = null;
  /** the daemon of the session that was lost, and when: the next answer says what that cost */
  private lostFrom: { pid: number | undefined; at: number } | null = null;
  /** said once, on the next tool answer: pushes may have been missed, or the daemon restarted */
  private pendingNote = '';

  constructor(private readonly o: UpstreamOptions) {}

  /** Starts finding (or starting) the daemon in the background; the agent's initialize does not wait for it. */
  start(): void {
    this.ensureLoop();
  }

  /** The agent's initialize: the session with the daemon is opened with the same params. */
  initialized(params: Record<string, unknown>): void {
    this.init = params;
    for (const w of [...this.initWaiters]) w();
  }

  /** One discovery without starting anything: for --connect's check at start. */
  static async probeOnce(o: Pick<UpstreamOptions, 'stateDir' | 'port'>): Promise<Found> {
    return findOrStart({ stateDir: o.stateDir, port: o.port, daemonArgs: [], start: false, replace: false });
  }

  /** Forwards a request of the agent's and resolves with the answer to write back (never rejects, unless aborted). */
  async request(m: Msg, signal: AbortSignal, onRelated: (m: Msg) => void): Promise<Msg> {
    let s = this.session ?? (await this.waitUp(GAP_WAIT_MS, signal));
    if (signal.aborted) throw signal.reason;
    if (!s) return this.failure(m, `${this.problem}.`);
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await s.mcp.request(m, { signal, onRelated, timeoutMs: CALL_TIMEOUT_MS });
        this.remember(m, r);
        return this.withNote(m, r);
      } catch (e) {
        if (signal.aborted) throw e;
        // 404: the daemon does not know our session (it restarted): the request never ran, so it
        // is safe to send again on a new session
        if (e instanceof SessionGone && attempt === 0) {
          this.lost(s, 'the daemon no longer knows this session (it restarted)');
          s = await this.waitUp(GAP_WAIT_MS, signal);
          if (signal.aborted) throw signal.reason;
          if (!s) return this.failure(m, `${this.problem}.`);
          continue;
        }
        if (e instanceof HopError) return this.failure(m, `The gasoline daemon on port ${this.o.port} could not take this request: ${e.message}.`);
        this.lost(s, `connection failed: ${(e as Error).message}`);
        // the request may have run before the daemon went: sending it again could act twice
        return this.failure(m, `The gasoline daemon on port ${this.o.port} stopped while this call ran, so its answer is lost. ${this.o.start ? 'A new daemon is being started' : 'Waiting for a daemon to come back'}; call again in a moment.`);
      }
    }
  }

  /** Forwards a notification (or an answer to a request of the daemon's); without a session it has nowhere to go. */
  notify(m: Msg): void {
    const s = this.session;
    if (!s) return;
    s.mcp.notify(m).catch((e: unknown) => {
      if (e instanceof SessionGone) this.lost(s, 'the daemon no longer knows this session (it restarted)');
      else log.debug('a notification to the daemon was not delivered', { method: m.method, error: String(e) });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const s = this.session;
    this.session = null;
    for (const w of [...this.waiters, ...this.initWaiters]) w();
    if (!s) return;
    // DELETE the session, so the daemon frees it now rather than at its idle timeout
    await s.mcp.close();
  }

  /** What a request answers when the hop failed: a tool call gets a tool error the agent reads; anything else a JSON-RPC error. */
  private failure(m: Msg, text: string): Msg {
    if (m.method === 'tools/call') return { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text }], isError: true } };
    return { jsonrpc: '2.0', id: m.id, error: { code: HOP_ERROR, message: text } };
  }

  private waitUp(ms: number, signal: AbortSignal): Promise<Session | null> {
    if (this.session || this.closed) return Promise.resolve(this.session);
    this.ensureLoop();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve(this.session);
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.waiters.add(done);
    });
  }

  private ensureLoop(): void {
    if (this.loop || this.closed || this.session) return;
    this.loop = this.connectLoop().finally(() => {
      this.loop = null;
    });
  }

  private async connectLoop(): Promise<void> {
    let delay = RETRY_MIN_MS;
    while (!this.closed && !this.session) {
      // a fault of this attempt (an unwritable state dir, say) is a problem to report and retry,
      // never a crash of the agent's MCP server
      const problem = await this.tryConnect().catch((e: unknown) => `The gasoline daemon on port ${this.o.port} could not be reached or started: ${(e as Error).message}`);
      if (!problem) break;
      this.setProblem(problem);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(RETRY_MAX_MS, delay * 2);
    }
  }

  private initParams(): Promise<Record<string, unknown> | null> {
    if (this.init || this.closed) return Promise.resolve(this.init);
    return new Promise((resolve) => {
      const done = (): void => {
        this.initWaiters.delete(done);
        resolve(this.init);
      };
      this.initWaiters.add(done);
    });
  }

  /** null when connected, else what is wrong (and what to do about it) */
  private async tryConnect(): Promise<string | null> {
    const { port, stateDir } = this.o;
    const found = await findOrStart({ stateDir, port, daemonArgs: this.o.daemonArgs, start: this.o.start, replace: this.o.replace });
    if (found.kind !== 'ready') return describe(found, port, stateDir);
    const token = readDaemonToken(stateDir, port);
    if (!token) return `The gasoline daemon on port ${port} answers, but its token file ${tokenPath(stateDir, port)} is missing or unreadable: it runs with another --state-dir or as another user. Stop it (gasoline --stop --port ${port}) and let this bridge start one`;
    // the daemon is found (or started) at once; the session opens with the agent's own initialize
    const params = await this.initParams();
    if (!params || this.closed) return null;
    const s = { info: found.info } as Session;
    try {
      s.mcp = await McpSession.open(
        {
          port,
          token,
          clientId: this.o.clientId,
          onPush: (n) => this.o.relay(n),
          onStreamLost: (why) => {
            s.dead = why;
            this.lost(s, `the notification stream failed: ${why}`);
          },
        },
        { jsonrpc: '2.0', id: `gasoline-bridge-init-${++this.opened}`, method: 'initialize', params },
        OPEN_TIMEOUT_MS,
      );
    } catch (e) {
      return `The gasoline daemon on port ${port} did not accept a session: ${(e as Error).message}`;
    }
    if (s.dead) {
      await s.mcp.close();
      return `The gasoline daemon on port ${port} accepted a session but its notification stream failed: ${s.dead}`;
    }
    if (this.closed) {
      await s.mcp.close();
      return null;
    }
    this.session = s;
    const again = this.connectedOnce;
    this.connectedOnce = true;
    log.info(again ? 'bridge reconnected to the daemon' : 'bridge connected to the daemon', { port, daemon_pid: found.info.pid, client_id: this.o.clientId });
    this.problem = '';
    if (again && this.lostFrom) this.pendingNote = gapNote(this.lostFrom, found.info.pid, this.streaming !== null);
    this.lostFrom = null;
    if (again) await this.reapply(s);
    for (const w of [...this.waiters]) w();
    return null;
  }

  /** What the agent set on the lost session, set again on this one. */
  private async reapply(s: Session): Promise<void> {
    if (this.logLevel) {
      await s.mcp.request({ ...this.logLevel, id: `gasoline-bridge-level-${this.opened}` }, { timeoutMs: 5000 }).catch(() => undefined);
    }
    if (!this.streaming) return;
    const m = { jsonrpc: '2.0', id: `gasoline-bridge-streaming-${this.opened}`, method: 'tools/call', params: { name: 'configure', arguments: this.streaming } };
    try {
      const r = await s.mcp.request(m, { timeoutMs: 5000 });
      const result = r.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
      if (!result || result.isError) log.warn('streaming config could not be applied on the new session', { answer: JSON.stringify(r.error ?? result?.content ?? '').slice(0, 300) });
      else log.info('streaming config applied again on the new session', { events: this.streaming.events ?? ['all'] });
    } catch (e) {
      log.warn('streaming config could not be applied on the new session', { error: String(e) });
    }
  }

  /** Keeps what must survive a new session: the streaming config and the log level the agent set. */
  private remember(m: Msg, r: Msg): void {
    if (m.method === 'logging/setLevel' && 'result' in r) {
      this.logLevel = { jsonrpc: '2.0', method: m.method, params: m.params };
      return;
    }
    if (m.method !== 'tools/call') return;
    const p = m.params as { name?: unknown; arguments?: Record<string, unknown> } | undefined;
    const args = p?.arguments;
    if (p?.name !== 'configure' || !args || args.action !== 'streaming') return;
    const result = r.result as { isError?: boolean } | undefined;
    if (!result || result.isError) return;
    if (args.streaming_action === 'enable') this.streaming = { ...args };
    else if (args.streaming_action === 'disable') this.streaming = null;
  }

  /** Pushes are never lost silently: what a gap cost rides on the next tool answer, once. */
  private withNote(m: Msg, r: Msg): Msg {
    if (!this.pendingNote || m.method !== 'tools/call') return r;
    const result = r.result as { content?: unknown } | undefined;
    if (!result || !Array.isArray(result.content)) return r;
    const note = this.pendingNote;
    this.pendingNote = '';
    return { ...r, result: { ...result, content: [...result.content, { type: 'text', text: note }] } };
  }

  /** the session is gone (the daemon died, restarted, or its stream failed): find or start one again */
  private lost(s: Session, why: string): void {
    if (this.session !== s) return;
    this.session = null;
    this.lostFrom ??= { pid: s.info.pid, at: Date.now() };
    log.warn(`bridge lost the daemon on port ${this.o.port}: ${why}; ${this.o.start ? 'reconnecting, or starting a new one' : 'waiting for it to come back (--connect starts none)'}`, { daemon_pid: s.info.pid });
    this.problem = `The gasoline daemon on port ${this.o.port} is not answering (${why}); the bridge is reconnecting`;
    void s.mcp.close();
    this.ensureLoop();
  }

  private setProblem(p: string): void {
    if (p !== this.problem) log.warn(p);
    this.problem = p;
  }
}

export function describe(found: Exclude<Found, { kind: 'ready' }>, port: number, stateDir: string): string {
  switch (found.kind) {
    case 'none':
      return `No gasoline daemon answers on port ${port}. Start one with: gasoline --server --port ${port} (or run the bridge without --connect, which starts it)`;
    case 'mismatch':
      return `The gasoline daemon on port ${port} is version ${found.info.version}${found.info.pid ? ` (pid ${found.info.pid})` : ''}; this bridge is ${VERSION}. It was left running. To replace it with ${VERSION}, run: gasoline --replace --port ${port} (it stops the old daemon gracefully and starts the new one); or stop it with: gasoline --stop --port ${port}`;
    case 'standalone':
      return `Port ${port} is held by a gasoline --standalone process${found.info.pid ? ` (pid ${found.info.pid})` : ''}, which serves one agent only. Stop it, or give bridges another port (--port)`;
    case 'foreign':
      return `Port ${port} is used by something that is not a gasoline daemon (${found.detail}). Free the port, or run gasoline with another --port`;
    case 'failed':
      return `The gasoline daemon on port ${port} could not be started: ${found.detail}. Its output is in ${daemonOutputPath(stateDir, port)}`;
  }
}

/** What the agent is told after the bridge lost its session and found one again. */
export function gapNote(from: { pid: number | undefined; at: number }, pid: number | undefined, streaming: boolean): string {
  const since = new Date(from.at).toISOString();
  if (from.pid !== undefined && pid !== undefined && from.pid === pid) {
    // the same daemon: a new MCP session of the same client, which keeps what is the client's
    return `Note: the bridge's connection to the gasoline daemon broke at ${since} and a new session was opened (re-initialised)${streaming ? '; pushed alerts of the gap may be missing' : ''}. observe shows everything captured; query ids and approval ids you hold still work.`;
  }
  return `Note: the gasoline daemon restarted (pid ${from.pid ?? '?'} → ${pid ?? '?'}) at ${since}: telemetry and alerts captured before are gone, so observe starts from the new daemon's data. Your checkpoints, noise rules, tab filter and store were restored${streaming ? ', and streaming is on again' : ''}; query ids and approval ids from before are gone: make those calls again.`;
}
