/**
 * A bench MCP client over real stdio: spawns `bin/gasoline`, speaks line-delimited JSON-RPC,
 * times each call, and timestamps every `notifications/message` the moment its chunk arrives.
 *
 * Two modes, as a user runs them:
 *   bridge      the default `bin/gasoline` (what agents' MCP configs run): it answers initialize
 *               itself and forwards tool calls to the daemon on the port, starting one (detached)
 *               when none runs. The SERVER whose CPU and memory count is that daemon (its pid
 *               from /health), not the bridge; the bridge's own RSS is read apart.
 *   standalone  `--standalone`: MCP on stdio and ingest in one process (the default of builds
 *               before the bridge existed).
 *
 * `root` selects which build is driven (head, or a base worktree in `--compare`), so the same
 * client measures both. The stdout read here must carry nothing but JSON-RPC: a line that does not
 * parse is counted (and fails the run's stdout_clean check) instead of being skipped silently.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildModes, NO_BRIDGE } from './build-modes.js';
import { installCleanup, pidsUsingStateDir, scratchStateDir, terminate, trackChild } from './procs.js';

export interface RpcReply {
  msg: Record<string, unknown>;
  /** call → reply, microseconds */
  us: number;
}

export type NotificationListener = (msg: Record<string, unknown>, arrivedAt: number, line: string) => void;

export type ProcMode = 'bridge' | 'standalone';

export interface McpProcOptions {
  root: string;
  port: number;
  mode: ProcMode;
  threads?: number;
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
  /** bridge: share a daemon's state dir (more bridges on one daemon); default a fresh scratch dir */
  stateDir?: string;
  /** bridge: --client-id (bridges started from one directory would otherwise be one client) */
  clientId?: string;
  /** bridge: stop() also stops the daemon (the bridge that started it); default true */
  ownsDaemon?: boolean;
}

const INIT_PARAMS = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gasoline-bench', version: '1' } };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The argv that runs `mode` on this build; throws when the build has no such mode. */
export function gasolineArgs(o: Pick<McpProcOptions, 'root' | 'port' | 'mode' | 'clientId'>, stateDir: string): string[] {
  const modes = buildModes(o.root);
  const bin = join(o.root, 'bin/gasoline');
  if (o.mode === 'standalone') return modes.standaloneFlag ? [bin, '--standalone'] : [bin];
  if (!modes.bridge) throw new Error(NO_BRIDGE);
  return [bin, '--port', String(o.port), '--state-dir', stateDir, ...(o.clientId ? ['--client-id', o.clientId] : [])];
}

export class McpProc {
  readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (r: RpcReply) => void; t0: number }>();
  private readonly listeners = new Set<NotificationListener>();
  private nextId = 1;
  private buf = '';
  private err = '';
  notifications = 0;
  /** stdout lines that were not JSON-RPC (must stay 0) */
  badLines = 0;
  readonly exited: Promise<number | null>;
  readonly stateDir: string;
  /** bridge: the daemon's pid, from its /health once it answers */
  daemonPid: number | undefined;

  constructor(readonly o: McpProcOptions) {
    installCleanup();
    this.stateDir = o.stateDir ?? scratchStateDir();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...o.env,
      GASOLINE_PORT: String(o.port),
      GASOLINE_LOG_LEVEL: 'info',
      GASOLINE_STATE_DIR: this.stateDir,
    };
    // the daemon a bridge starts inherits the bridge's environment: threads reach it this way
    if (o.threads !== undefined) env.GASOLINE_THREADS = String(o.threads);
    this.child = spawn(process.execPath, gasolineArgs(o, this.stateDir), { cwd: o.root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    trackChild(this.child);
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (d: string) => {
      this.err = (this.err + d).slice(-16_000);
    });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => this.onData(d));
  }

  /** the server process: the daemon behind a bridge, else the process itself */
  get pid(): number {
    return this.o.mode === 'bridge' ? this.daemonPid! : this.child.pid!;
  }

  /** the process the bench spawned (the bridge, or the standalone server) */
  get clientPid(): number {
    return this.child.pid!;
  }

  stderr(): string {
    return this.err;
  }

  private onData(d: string): void {
    const arrivedAt = performance.now();
    this.buf += d;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (!line) continue;
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        this.badLines++;
        continue;
      }
      if (msg.jsonrpc !== '2.0') this.badLines++;
      if (typeof msg.id === 'number' && !('method' in msg)) {
        const w = this.waiting.get(msg.id);
        if (w) {
          this.waiting.delete(msg.id);
          w.resolve({ msg, us: Math.max(1, Math.round((arrivedAt - w.t0) * 1000)) });
        }
      } else if (msg.method === 'notifications/message') {
        this.notifications++;
        for (const l of this.listeners) l(msg, arrivedAt, line);
      }
    }
  }

  onNotification(l: NotificationListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  rpc(method: string, params: unknown, timeoutMs = 10_000): Promise<RpcReply> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        t0: performance.now(),
      });
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  callTool(name: string, args: Record<string, unknown>, timeoutMs?: number): Promise<RpcReply> {
    return this.rpc('tools/call', { name, arguments: args }, timeoutMs);
  }

  /**
   * standalone: waits for the ingest side to say "listening", then does the MCP handshake.
   * bridge: the handshake first (the bridge answers it alone), then the daemon's /health, then a
   * tools/call that must reach the daemon and come back without error.
   */
  async start(): Promise<void> {
    const limit = this.o.startTimeoutMs ?? 30_000;
    const t0 = Date.now();
    let code: number | null | undefined;
    void this.exited.then((c) => (code = c));
    const check = (what: string): void => {
      if (code !== undefined) throw new Error(`gasoline (${this.o.mode}) exited with ${code} before ${what}; stderr:\n${this.err.slice(-2000)}`);
      if (Date.now() - t0 > limit) throw new Error(`gasoline (${this.o.mode}) not ${what} within ${limit} ms; stderr:\n${this.err.slice(-2000)}${this.daemonLogTail()}`);
    };
    if (this.o.mode === 'standalone') {
      while (!/listening/i.test(this.err)) {
        check('listening');
        await sleep(25);
      }
    }
    await this.rpc('initialize', INIT_PARAMS);
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    if (this.o.mode === 'standalone') return;
    for (;;) {
      check('with a daemon answering /health');
      const pid = await healthPid(this.o.port);
      if (pid !== undefined) {
        this.daemonPid = pid;
        break;
      }
      await sleep(50);
    }
    for (;;) {
      check('forwarding a tool call to its daemon');
      // a call made before the bridge's session is up waits for it (bounded), so this is quick
      const r = await this.callTool('configure', { action: 'health' }, limit);
      if (!toolText(r).isError) return;
      await sleep(100);
    }
  }

  private daemonLogTail(): string {
    if (this.o.mode !== 'bridge') return '';
    try {
      return `\ndaemon output:\n${readFileSync(join(this.stateDir, `daemon-${this.o.port}.out`), 'utf8').slice(-1500)}`;
    } catch {
      return '';
    }
  }

  async tools(): Promise<Array<{ name: string; inputSchema?: Record<string, unknown> }>> {
    const r = await this.rpc('tools/list', {});
    return ((r.msg.result as { tools?: unknown[] } | undefined)?.tools ?? []) as Array<{ name: string; inputSchema?: Record<string, unknown> }>;
  }

  /**
   * Ends stdin (how an agent ends its server), SIGKILL only if it hangs. A bridge that owns its
   * daemon then stops the daemon too: SIGTERM, wait until the pid is gone, SIGKILL past a bound.
   */
  async stop(): Promise<number | null> {
    let code: number | null = this.child.exitCode;
    if (code === null && this.child.signalCode === null) {
      this.child.stdin!.end();
      const t = setTimeout(() => this.child.kill('SIGKILL'), 8000);
      code = await this.exited;
      clearTimeout(t);
    }
    if (this.o.mode === 'bridge' && this.o.ownsDaemon !== false) await stopDaemonOf(this.stateDir, this.daemonPid);
    return code;
  }

  /** VmRSS and VmHWM (MB) of the process the bench spawned */
  clientRss(): { rss_mb: number; hwm_mb: number } {
    return rssOf(this.clientPid);
  }
}

/** The daemon's pid from /health, undefined while nothing answers. */
export async function healthPid(port: number): Promise<number | undefined> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
    const h = (await r.json()) as { status?: unknown; pid?: unknown };
    return h.status === 'ok' && Number.isInteger(h.pid) ? (h.pid as number) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops the daemon running from `stateDir` (its argv: --server … --state-dir <dir>; the dirs are
 * the bench's own scratch dirs, so this never reaches a process the bench did not start).
 */
export async function stopDaemonOf(stateDir: string, knownPid: number | undefined): Promise<void> {
  const pids = new Set(pidsUsingStateDir(stateDir, true));
  // no /proc to read (not Linux): the pid /health named is all there is
  if (pids.size === 0 && knownPid !== undefined && process.platform !== 'linux') pids.add(knownPid);
  await Promise.all([...pids].map((p) => terminate(p, 10_000)));
}

/** VmRSS (now) and VmHWM (peak) of a process, in MB. */
export function rssOf(pid: number): { rss_mb: number; hwm_mb: number } {
  const st = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? NaN);
  return { rss_mb: Math.round(kb('VmRSS') / 1024), hwm_mb: Math.round(kb('VmHWM') / 1024) };
}

/** The text of a tool result's first content block, parsed as JSON when it is JSON. */
export function toolText(r: RpcReply): { isError: boolean; text: string; json: unknown } {
  const res = r.msg.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
  const text = res?.content?.[0]?.text ?? JSON.stringify(r.msg.error ?? null);
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // plain text result
  }
  return { isError: Boolean(res?.isError) || 'error' in r.msg, text, json };
}
