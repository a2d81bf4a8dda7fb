/**
 * Real `bin/gasoline` processes for the bridge tests: bridges through the SDK's stdio client,
 * daemons as the bridges start them (detached), and a cleanup that finds every process of a
 * test's state dir by its command line, so a detached daemon never outlives its test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
const KiB = 1024;

export interface Sandbox {
  dir: string;
  stateDir: string;
  configFile: string;
  port: number;
  /** the flags every process of this sandbox gets */
  args: string[];
}

export function sandbox(port: number): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'gasoline-bridge-'));
  const stateDir = join(dir, 'state');
  const configFile = join(dir, 'config.json');
  // small rings, one worker: several daemons may run on a loaded machine
  writeFileSync(
    configFile,
    JSON.stringify({
      rings: { logs: 256 * KiB, network: 256 * KiB, network_bodies: 256 * KiB, ws_events: 128 * KiB, actions: 128 * KiB, perf: 64 * KiB, ext_logs: 64 * KiB },
      pool: { threads: 1, warmup_batches: 4, input_bytes: 4 * 1024 * KiB, shutdown_drain_ms: 2000 },
    }),
  );
  return { dir, stateDir, configFile, port, args: ['--port', String(port), '--state-dir', stateDir, '--config', configFile] };
}

export const testEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', GASOLINE_LOG_LEVEL: 'info' });

export interface Bridge {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  pid: number;
}

/** A bridge (or any stdio mode) with the SDK client connected: initialize is done. */
export async function startBridge(sb: Sandbox, extra: string[] = [], opts: { cwd?: string; name?: string } = {}): Promise<Bridge> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, ...sb.args, ...extra], env: testEnv(), stderr: 'pipe', cwd: opts.cwd ?? sb.dir });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: opts.name ?? 'bridge-test', version: '1' });
  await client.connect(transport);
  return { client, transport, stderr: () => err, pid: transport.pid! };
}

/** A process run to its end: its exit code and what it wrote. */
export function runGasoline(args: string[], timeoutMs = 30_000): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: testEnv(), encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without blocking the test's event loop (it may serve a fake port meanwhile). */
export function runGasolineAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, ...args], { env: testEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('exit', (code) => resolve({ code, stdout: out, stderr: err }));
  });
}

/** `gasoline --server` detached (its own process group, as a bridge starts it). */
export function startServer(sb: Sandbox, bin = BIN): ChildProcess {
  const c = spawn(process.execPath, [bin, '--server', ...sb.args], { env: testEnv(), stdio: 'ignore', detached: true });
  c.unref();
  return c;
}

export async function health(port: number): Promise<Record<string, unknown> | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return (await r.json()) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** pids of live processes whose command line contains every one of these strings */
export function processesWith(...parts: string[]): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    // a zombie has an empty command line: it is gone in all but name
    if (cmd && parts.every((p) => cmd.includes(p))) out.push(Number(name));
  }
  return out;
}

/** Every process started for this sandbox (bridges, daemons, their groups), then its files. */
export async function cleanup(sb: Sandbox): Promise<void> {
  for (const pid of processesWith(sb.stateDir)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // not a group leader, or gone already
      }
    }
  }
  rmSync(sb.dir, { recursive: true, force: true });
}

export function textOf(r: unknown): string {
  return (((r as { content?: unknown }).content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}
