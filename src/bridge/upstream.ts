/**
 * The bridge's one MCP session with the daemon: an SDK Client over streamable HTTP, with the
 * daemon's token and this agent's client id on every request. It keeps the session alive across
 * faults: a daemon that dies is noticed (its SSE stream breaks, or a call fails), found again or
 * started anew, and the streaming config the agent last set is applied to the new session. Tool
 * calls made meanwhile wait a bounded time, then answer with what is wrong and what to do.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Notification } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_HEADER, MCP_PATH, readDaemonToken, tokenPath } from '../daemon/contract.js';
import { log } from '../log.js';
import { VERSION } from '../version.js';
import { daemonOutputPath, type DaemonInfo } from './daemon.js';
import { findOrStart, type Found } from './find.js';

/** a tool call made while no daemon answers waits this long for one */
export const GAP_WAIT_MS = 5000;
/** the daemon bounds its own tools (accessibility: 30 s); this only catches a daemon that hangs */
const CALL_TIMEOUT_MS = 5 * 60_000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 2000;

export interface UpstreamOptions {
  stateDir: string;
  port: number;
  clientId: string;
  /** argv of a daemon this bridge starts; with `start: false` (--connect) it never starts one */
  daemonArgs: string[];
  start: boolean;
  replace: boolean;
  /** a notification from the daemon, to relay to the agent as is */
  relay: (n: Notification) => void;
}

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
  info: DaemonInfo;
}

type StreamingArgs = Record<string, unknown>;

export class Upstream {
  private session: Session | null = null;
  /** what is wrong while there is no session: the text a waiting tool call answers with */
  private problem = 'connecting to the gasoline daemon';
  private loop: Promise<void> | null = null;
  private waiters = new Set<() => void>();
  private closed = false;
  private connectedOnce = false;
  /** the last streaming enable the agent made (null: off), applied again to every new session */
  private streaming: StreamingArgs | null = null;
  /** the daemon of the session that was lost, and when: the next answer says what that cost */
  private lostFrom: { pid: number | undefined; at: number } | null = null;
  /** said once, on the next tool answer: pushes may have been missed, or the daemon restarted */
  private pendingNote = '';

  constructor(private readonly o: UpstreamOptions) {}

  /** Starts finding the daemon in the background; initialize does not wait for it. */
  start(): void {
    this.ensureLoop();
  }

  /** One discovery without starting anything: for --connect's check at start. */
  static async probeOnce(o: Pick<UpstreamOptions, 'stateDir' | 'port'>): Promise<Found> {
    return findOrStart({ stateDir: o.stateDir, port: o.port, daemonArgs: [], start: false, replace: false });
  }

  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    let s = this.session ?? (await this.waitUp(GAP_WAIT_MS, signal));
    if (!s) return this.gapError();
    for (let attempt = 0; ; attempt++) {
      try {
        const r = (await s.client.callTool({ name, arguments: args }, undefined, { signal, timeout: CALL_TIMEOUT_MS })) as CallToolResult;
        if (name === 'configure') this.noteStreaming(args, r);
        return this.withNote(r);
      } catch (e) {
        if (signal.aborted) throw e;
        // 404: the daemon does not know our session (it restarted): the call never ran, so it
        // is safe to send again on a new session
        if (e instanceof StreamableHTTPError && e.code === 404 && attempt === 0) {
          this.lost(s, 'the daemon no longer knows this session (it restarted)');
          s = await this.waitUp(GAP_WAIT_MS, signal);
          if (!s) return this.gapError();
          continue;
        }
        if (isConnectionError(e)) {
          this.lost(s, `connection failed: ${(e as Error).message}`);
          // the call may have run before the daemon went: sending it again could act twice
          return errorResult(`The gasoline daemon on port ${this.o.port} stopped while this call ran, so its answer is lost. ${this.o.start ? 'A new daemon is being started' : 'Waiting for a daemon to come back'}; call again in a moment.`);
        }
        throw e;
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const s = this.session;
    this.session = null;
    for (const w of this.waiters) w();
    if (!s) return;
    // DELETE the session, so the daemon frees it now rather than at its idle timeout
    await Promise.race([s.transport.terminateSession().catch(() => undefined), new Promise((r) => setTimeout(r, 500))]);
    await s.client.close().catch(() => undefined);
  }

  private gapError(): CallToolResult {
    return errorResult(`${this.problem}.`);
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

  /** null when connected, else what is wrong (and what to do about it) */
  private async tryConnect(): Promise<string | null> {
    const { port, stateDir } = this.o;
    const found = await findOrStart({ stateDir, port, daemonArgs: this.o.daemonArgs, start: this.o.start, replace: this.o.replace });
    if (found.kind !== 'ready') return describe(found, port, stateDir);
    const token = readDaemonToken(stateDir, port);
    if (!token) return `The gasoline daemon on port ${port} answers, but its token file ${tokenPath(stateDir, port)} is missing or unreadable: it runs with another --state-dir or as another user. Stop it (gasoline --stop --port ${port}) and let this bridge start one`;
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}${MCP_PATH}`), {
      requestInit: { headers: { authorization: `Bearer ${token}`, [CLIENT_HEADER]: this.o.clientId } },
      // the SSE stream resumes with Last-Event-ID on a blip; a daemon that is gone is ours to handle
      reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 3 },
    });
    const client = new Client({ name: 'gasoline-bridge', version: VERSION }, { capabilities: {} });
    client.fallbackNotificationHandler = async (n) => {
      // progress and cancellation belong to requests of this hop, not to the agent
      if (n.method !== 'notifications/progress' && n.method !== 'notifications/cancelled') this.o.relay(n);
    };
    const s: Session = { client, transport, info: found.info };
    client.onerror = (e) => void this.suspect(s, e);
    try {
      await client.connect(transport, { timeout: 5000 });
    } catch (e) {
      await client.close().catch(() => undefined);
      return `The gasoline daemon on port ${port} did not accept a session: ${(e as Error).message}`;
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      return null;
    }
    this.session = s;
    const again = this.connectedOnce;
    this.connectedOnce = true;
    log.info(again ? 'bridge reconnected to the daemon' : 'bridge connected to the daemon', { port, daemon_pid: found.info.pid, client_id: this.o.clientId });
    this.problem = '';
    if (again && this.lostFrom) this.pendingNote = gapNote(this.lostFrom, found.info.pid, this.streaming !== null);
    this.lostFrom = null;
    if (again && this.streaming) await this.reapplyStreaming(s);
    for (const w of [...this.waiters]) w();
    return null;
  }

  private async reapplyStreaming(s: Session): Promise<void> {
    try {
      const r = (await s.client.callTool({ name: 'configure', arguments: this.streaming! }, undefined, { timeout: 5000 })) as CallToolResult;
      if (r.isError) log.warn('streaming config could not be applied on the new session', { answer: textOf(r).slice(0, 300) });
      else log.info('streaming config applied again on the new session', { events: this.streaming!.events ?? ['all'] });
    } catch (e) {
      log.warn('streaming config could not be applied on the new session', { error: String(e) });
    }
  }

  private noteStreaming(args: Record<string, unknown>, r: CallToolResult): void {
    if (args.action !== 'streaming' || r.isError) return;
    if (args.streaming_action === 'enable') this.streaming = { ...args };
    else if (args.streaming_action === 'disable') this.streaming = null;
  }

  /** an error on the session: the daemon is gone (or restarted) or it was a blip */
  private async suspect(s: Session, e: Error): Promise<void> {
    if (this.session !== s || this.closed) return;
    const found = await findOrStart({ stateDir: this.o.stateDir, port: this.o.port, daemonArgs: [], start: false, replace: false });
    if (this.session !== s) return;
    const same = found.kind === 'ready' && found.info.pid === s.info.pid;
    // the SDK gave up resuming the SSE stream: notifications would stop silently on this session
    if (same && !/Maximum reconnection|Failed to open SSE stream/.test(e.message)) return;
    this.lost(s, same ? `the notification stream failed: ${e.message}` : found.kind === 'none' ? 'the daemon stopped answering' : `the daemon changed (${e.message})`);
  }

  private lost(s: Session, why: string): void {
    if (this.session !== s) return;
    this.session = null;
    this.lostFrom ??= { pid: s.info.pid, at: Date.now() };
    log.warn(`bridge lost the daemon on port ${this.o.port}: ${why}; ${this.o.start ? 'reconnecting, or starting a new one' : 'waiting for it to come back (--connect starts none)'}`, { daemon_pid: s.info.pid });
    this.problem = `The gasoline daemon on port ${this.o.port} is not answering (${why}); the bridge is reconnecting`;
    void s.client.close().catch(() => undefined);
    this.ensureLoop();
  }

  /** Pushes are never lost silently: what a gap cost rides on the next answer, once. */
  private withNote(r: CallToolResult): CallToolResult {
    if (!this.pendingNote) return r;
    const note = this.pendingNote;
    this.pendingNote = '';
    return { ...r, content: [...r.content, { type: 'text', text: note }] };
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
    return `Note: the bridge's connection to the gasoline daemon broke at ${since} and was restored${streaming ? '; pushed alerts of the gap may be missing' : ''}. observe shows everything captured.`;
  }
  return `Note: the gasoline daemon restarted (pid ${from.pid ?? '?'} → ${pid ?? '?'}) at ${since}: telemetry and alerts captured before are gone, so observe starts from the new daemon's data. Your checkpoints, noise rules, tab filter and store were restored${streaming ? ', and streaming is on again' : ''}.`;
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** fetch failures (refused, reset, aborted socket) as the SDK passes them on */
function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e instanceof StreamableHTTPError) return e.code === undefined || e.code >= 500;
  const cause = (e as { cause?: { code?: string } }).cause;
  return e.name === 'TypeError' || /ECONNREFUSED|ECONNRESET|socket|fetch failed|terminated|Connection closed/i.test(`${e.message} ${cause?.code ?? ''}`);
}
