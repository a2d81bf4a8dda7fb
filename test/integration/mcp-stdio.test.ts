/** The real process over stdio with the SDK's own client: what an agent's MCP config runs. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));

const env = (port: number): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: '/tmp/gasoline-test-home', GASOLINE_STATE_DIR: tempStateDir(), GASOLINE_THREADS: '1', GASOLINE_PORT: String(port), GASOLINE_LOG_LEVEL: 'warn' });

describe('gasoline over stdio', () => {
  it('initializes, lists the tools, answers observe from real ingested data, and exits when stdin closes', async () => {
    const port = await freePort();
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--standalone'], env: env(port), stderr: 'pipe' });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(transport);
    expect(client.getInstructions()).toContain('observe');
    await client.setLoggingLevel('warning'); // logging capability: setLevel is answered
    const guide = await client.readResource({ uri: 'gasoline://guide' });
    expect((guide.contents[0] as { text: string }).text).toContain('observe');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['analyze', 'configure', 'interact', 'observe']);
    // every schema character is paid on every agent turn: all four tools together stay small
    const schemaChars = JSON.stringify(tools.tools).length;
    expect(schemaChars).toBeLessThan(10_000);

    const p = await Producer.connect(port);
    await p.hello('stdio-test');
    p.send(batch(0, { logs: [logRecord(1, { message: 'TypeError: cannot read x of undefined', type: 'exception' })] }));
    await p.ackFor(0);
    const r = await client.callTool({ name: 'observe', arguments: { what: 'errors' } });
    const text = (r.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain('1 matched (1 distinct), showing 1');
    expect(text).toContain('TypeError: cannot read x of undefined');
    const again = await client.callTool({ name: 'observe', arguments: { what: 'errors' } });
    expect((again.content as Array<{ text: string }>)[0]!.text).toContain('0 matched');
    p.close();

    const pid = transport.pid!;
    const t0 = Date.now();
    await client.close(); // closes stdin
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        try {
          process.kill(pid, 0);
          if (Date.now() - t0 > 8000) reject(new Error('still running 8 s after stdin closed'));
        } catch {
          clearInterval(check);
          resolve();
        }
      }, 50);
    });
    // nothing is in flight, so no drain bound is waited out; a loaded CI machine adds to the exit itself
    expect(Date.now() - t0).toBeLessThan(5000);
  }, 30_000);

  it('answers a malformed line with a JSON-RPC error and keeps serving; every stdout line is JSON-RPC', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, '--standalone'], { env: env(port), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    child.stdin.write('{not json\n');
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope', arguments: {} } })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'observe', arguments: { what: 'bogus' } } })}\n`);
    try {
      await waitFor('four answers', () => out.split('\n').filter(Boolean).length >= 4, 15_000);
    } finally {
      child.stdin.end();
    }
    expect(await exited).toBe(0);
    const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines.every((l) => l.jsonrpc === '2.0')).toBe(true);
    expect(lines.find((l) => l.id === null)?.error.code).toBe(-32700);
    expect(lines.find((l) => l.id === 1)?.result.serverInfo.name).toBe('gasoline');
    expect(lines.find((l) => l.id === 2)!.error.code).toBe(-32602);
    const bad = lines.find((l) => l.id === 3)!;
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0].text).toContain('what');
  }, 30_000);

  it('hammered: ingest running while 200 tool calls are in flight, every stdout line is one whole JSON-RPC message', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, '--standalone'], { env: env(port), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    const rpc = (id: number, method: string, params: unknown): void => void child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const p = await waitFor('the server to accept a producer', () => Producer.connect(port).catch(() => undefined), 10_000, 100);
    await p.hello('hammer');
    let seq = 0;
    const pump = setInterval(() => {
      for (let i = 0; i < 5; i++) p.send(batch(seq++, { logs: Array.from({ length: 50 }, (_, j) => logRecord(j, { message: `noise ${j} ${'z'.repeat(100)}` })) }));
    }, 5);
    for (let i = 0; i < 200; i++) rpc(100 + i, 'tools/call', { name: 'observe', arguments: { what: i % 2 ? 'logs' : 'timeline', limit: 100, from: 'start' } });
    try {
      await waitFor('201 answers', () => out.split('\n').filter((l) => l.includes('"id":')).length >= 201, 30_000, 50);
    } finally {
      clearInterval(pump);
      p.close();
      child.stdin.end();
    }
    expect(await exited).toBe(0);
    const lines = out.split('\n');
    expect(lines.pop()).toBe('');
    const msgs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(msgs.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(new Set(msgs.map((m) => m.id)).size).toBe(201);
  }, 60_000);

  it('exits when stdout breaks (EPIPE)', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, '--standalone'], { env: env(port), stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // The server closes its end of stdin as it exits, which Node can tell us before the exit itself:
    // a write of ours in between fails EPIPE (uncaught, it failed the whole run once). That is the
    // exit under way, not an error of the test.
    child.stdin.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
    });
    child.stdout.destroy();
    const t0 = Date.now();
    // keep writing: the server learns stdout is gone when it next writes an answer
    let id = 0;
    await waitFor(
      'an exit after EPIPE',
      () => {
        if (child.exitCode !== null) return true;
        if (!child.stdin.destroyed) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'ping' })}\n`);
        return false;
      },
      8000,
      100,
    );
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(8000);
  }, 30_000);
});
