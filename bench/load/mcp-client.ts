/**
 * A bench MCP client over real stdio: spawns `bin/gasoline` in its --standalone mode (MCP on
 * stdio and the ingest server on 127.0.0.1:<port>, one process), speaks line-delimited JSON-RPC,
 * times each call, and timestamps every `notifications/message` the moment its chunk arrives.
 *
 * `root` selects which build is driven (head, or a base worktree in `--compare`), so the same
 * client measures both. The server's stdout must carry nothing but JSON-RPC: a line that does not
 * parse is counted (and fails the run's stdout_clean check) instead of being skipped silently.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export interface RpcReply {
  msg: Record<string, unknown>;
  /** call → reply, microseconds */
  us: number;
}

export type NotificationListener = (msg: Record<string, unknown>, arrivedAt: number, line: string) => void;

export interface McpProcOptions {
  root: string;
  port: number;
  threads?: number;
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
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

  constructor(readonly o: McpProcOptions) {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...o.env,
      GASOLINE_PORT: String(o.port),
      GASOLINE_LOG_LEVEL: 'info',
      GASOLINE_STATE_DIR: mkdtempSync(join(tmpdir(), 'gasoline-bench-')),
    };
    if (o.threads !== undefined) env.GASOLINE_THREADS = String(o.threads);
    this.child = spawn(process.execPath, [join(o.root, 'bin/gasoline'), '--standalone'], { cwd: o.root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (d: string) => {
      this.err = (this.err + d).slice(-16_000);
    });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => this.onData(d));
  }

  get pid(): number {
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

  /** Waits for the ingest side to listen, then does the MCP handshake. */
  async start(): Promise<void> {
    const limit = this.o.startTimeoutMs ?? 30_000;
    const t0 = Date.now();
    let code: number | null | undefined;
    void this.exited.then((c) => (code = c));
    while (!/listening/i.test(this.err)) {
      if (code !== undefined) throw new Error(`gasoline exited with ${code} before listening; stderr:\n${this.err.slice(-2000)}`);
      if (Date.now() - t0 > limit) throw new Error(`gasoline did not say "listening" within ${limit} ms; stderr:\n${this.err.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await this.rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gasoline-bench', version: '1' } });
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }

  async tools(): Promise<Array<{ name: string; inputSchema?: Record<string, unknown> }>> {
    const r = await this.rpc('tools/list', {});
    return ((r.msg.result as { tools?: unknown[] } | undefined)?.tools ?? []) as Array<{ name: string; inputSchema?: Record<string, unknown> }>;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    // closing stdin is how an agent ends an embedded server; SIGKILL only if it hangs
    this.child.stdin!.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 8000);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
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
