/**
 * Issue #18 item 7, against the real process (dist/, `pnpm build` first): store keys that name
 * Object.prototype members, tool arguments far beyond the stdin line limit, and the close code
 * producers see when an embedded process gets SIGTERM.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { waitFor } from '../helpers/wait-for.js';
import { startTestServer } from '../helpers/server.js';
import type { App } from '../../src/app.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
const MiB = 1024 * 1024;

const env = (port: number, stateDir: string, level = 'warn'): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: '/tmp/gasoline-test-home',
  GASOLINE_STATE_DIR: stateDir,
  GASOLINE_THREADS: '1',
  GASOLINE_PORT: String(port),
  GASOLINE_LOG_LEVEL: level,
});

function text(r: Awaited<ReturnType<Client['callTool']>>): string {
  return (r.content as Array<{ text: string }>).map((c) => c.text).join('\n');
}

describe('over stdio with the SDK client', () => {
  let stateDir: string;
  let transport: StdioClientTransport;
  let client: Client;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'gasoline-robust-'));
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--standalone'], env: env(await freePort(), stateDir), stderr: 'pipe' });
    client = new Client({ name: 'robust', version: '1' });
    await client.connect(transport);
  }, 30_000);

  afterAll(async () => {
    const pid = transport.pid;
    await client.close().catch(() => undefined);
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(stateDir, { recursive: true, force: true });
  });

  const store = (args: Record<string, unknown>) => client.callTool({ name: 'configure', arguments: { action: 'store', ...args } });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])('store key %j is a key like any other', async (key) => {
    const missing = await store({ store_action: 'get', key });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^unknown_name/);
    expect(text(await store({ store_action: 'set', key, value: `v-${key}` }))).toBe(`stored "${key}"`);
    const got = await store({ store_action: 'get', key });
    expect(got.isError).toBeFalsy();
    expect(text(got)).toBe(`v-${key}`);
    expect(text(await store({ store_action: 'list' }))).toContain(key);
    expect(text(await store({ store_action: 'delete', key }))).toBe(`deleted "${key}"`);
    expect((await store({ store_action: 'get', key })).isError).toBe(true);
  });

  it('a 10 MB tool argument is answered with the request id and a clear error; the next call works', async () => {
    const t0 = Date.now();
    const err = await store({ store_action: 'set', key: 'big', value: 'x'.repeat(10 * MiB) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // the SDK matched the answer to its request by id: a JSON-RPC error, not a timeout
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32600);
    expect((err as McpError).message).toMatch(/line limit/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(text(await store({ store_action: 'set', key: 'small', value: 'ok' }))).toBe('stored "small"');
  }, 30_000);
});

describe('raw stdin', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  let stateDir: string | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
    child = undefined;
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  async function start(level = 'warn', init = true): Promise<{ lines: () => Array<Record<string, any>>; until: (pred: (l: Record<string, any>) => boolean, ms?: number) => Promise<Record<string, any>>; port: number; stderr: () => string }> {
    stateDir = mkdtempSync(join(tmpdir(), 'gasoline-robust-'));
    const port = await freePort();
    const c = spawn(process.execPath, [BIN, '--standalone'], { env: env(port, stateDir, level), stdio: ['pipe', 'pipe', 'pipe'] });
    child = c;
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const lines = (): Array<Record<string, any>> => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
    const until = (pred: (l: Record<string, any>) => boolean, ms = 15_000): Promise<Record<string, any>> =>
      waitFor(() => `such a line; stdout: ${out.slice(0, 2000)}`, () => lines().find(pred), ms);
    if (!init) return { lines, until, port, stderr: () => err };
    c.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    c.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await until((l) => l.id === 1);
    return { lines, until, port, stderr: () => err };
  }

  /** Writes one line of `mib` MiB in 1 MiB chunks, honouring backpressure, so neither side holds it whole. */
  async function writeHuge(head: string, mib: number, tail: string): Promise<void> {
    const c = child!;
    const chunk = Buffer.alloc(MiB, 'x');
    const write = (b: Buffer | string): Promise<void> => (c.stdin.write(b) ? Promise.resolve() : new Promise((r) => c.stdin.once('drain', () => r())));
    await write(head);
    for (let i = 0; i < mib; i++) await write(chunk);
    await write(tail);
  }

  it('a 100 MB tool argument (id last, as the SDK writes it) gets an answer with its id; later requests work', async () => {
    const { until } = await start();
    const t0 = Date.now();
    // "id" inside the arguments must not be taken for the request's id
    await writeHuge('{"method":"tools/call","params":{"name":"configure","arguments":{"action":"noise_rule","id":"n1","value":"', 100, '"}},"jsonrpc":"2.0","id":77}\n');
    child!.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 78, method: 'ping' })}\n`);
    const answer = await until((l) => l.id === 77, 30_000);
    const ms = Date.now() - t0;
    expect(answer.error.code).toBe(-32600);
    expect(answer.error.message).toMatch(/line limit/);
    expect((await until((l) => l.id === 78)).result).toEqual({});
    console.info(`100 MB line answered in ${ms} ms`);
    expect(ms).toBeLessThan(20_000);
  }, 60_000);

  it('an oversize line with its id first is answered with that id, exactly once', async () => {
    const { until, lines } = await start();
    await writeHuge('{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"configure","arguments":{"id":"n1","value":"', 10, '"}}}\n');
    child!.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
    const answer = await until((l) => l.id === 'first');
    expect(answer.error.code).toBe(-32600);
    await until((l) => l.id === 2);
    // initialize, the refusal, the ping: nothing else (no parse error for the rest of the line)
    expect(lines().map((l) => l.id)).toEqual([1, 'first', 2]);
  }, 60_000);

  it('embedded mode closes producer sockets with 1001 on SIGTERM, like --server, even right after start', async () => {
    const { port, stderr } = await start('info', false);
    await waitFor('the server listening', () => stderr().includes('listening'), 15_000, 5);
    // at once: the signal lands while the process is still bringing up its MCP side
    const p = await Producer.connect(port);
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child!.kill('SIGTERM');
    await p.closed();
    expect(p.closeCode).toBe(1001);
    expect(await exited).toBe(0);
  }, 30_000);

  it('embedded mode: a producer mid-session gets 1001 on SIGTERM', async () => {
    const { port, stderr } = await start('info');
    await waitFor('the server listening', () => stderr().includes('listening'), 15_000);
    const p = await Producer.connect(port);
    await p.hello('sigterm-embedded');
    p.send(batch(0, { logs: [logRecord(1)] }));
    await p.ackFor(0);
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child!.kill('SIGTERM');
    await p.closed();
    expect(p.closeCode).toBe(1001);
    expect(await exited).toBe(0);
  }, 30_000);
});

describe('user-named rules in counters', () => {
  let server: App | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('redaction rules named "constructor" and "__proto__" are counted in health like any other', async () => {
    server = await startTestServer();
    const stateDir = mkdtempSync(join(tmpdir(), 'gasoline-robust-'));
    const c = await connectAgent(server, stateDir, 'proto-rules');
    try {
      // a plainly named rule beside them shows the counts do arrive
      for (const [name, prefix] of [['constructor', 'ctor'], ['__proto__', 'proto'], ['plain_rule', 'plain']]) {
        const r = await callTool(c, 'configure', { action: 'redaction', redaction_action: 'add', name, pattern: `${prefix}-[0-9]{4}` });
        expect(r.isError).toBe(false);
      }
      const p = await Producer.connect(server.port);
      await p.hello('proto-rules');
      p.send(batch(0, { logs: [logRecord(1, { message: 'ids ctor-1234 and proto-5678 and plain-9012' })] }));
      await p.ackFor(0);
      p.close();
      // the worker reports its counts with its next task; health adds them up
      const redacted = await waitFor('the rules counted in health', async () => {
        // the first block is the answer; alerts may ride along in further blocks
        const h = JSON.parse(text(await c.callTool({ name: 'configure', arguments: { action: 'health' } })).split('\n')[0]!) as { redaction: { redacted: Record<string, unknown> } };
        return Object.hasOwn(h.redaction.redacted, 'plain_rule') && h.redaction.redacted;
      }, 5000);
      const own = (k: string): unknown => Object.getOwnPropertyDescriptor(redacted, k)?.value;
      expect(own('plain_rule')).toBe(1);
      expect(own('constructor')).toBe(1);
      expect(own('__proto__')).toBe(1);
    } finally {
      await c.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 30_000);
});
