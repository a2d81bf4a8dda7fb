/**
 * Context streaming through the real process over stdio: alerts pushed as
 * notifications/message the moment they happen, through the one stdout writer, never
 * interleaved with responses; reset by a new initialize; timers gone when stdin closes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
const env = (port: number): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: '/tmp/gasoline-test-home', GASOLINE_STATE_DIR: tempStateDir(), GASOLINE_THREADS: '1', GASOLINE_PORT: String(port), GASOLINE_LOG_LEVEL: 'warn' });
const text = (r: unknown): string => (r as { content: Array<{ text: string }> }).content[0]!.text;

async function producer(port: number, session: string): Promise<Producer> {
  const p = await waitFor('the server to accept a producer', () => Producer.connect(port).catch(() => undefined), 10_000, 100);
  await p.hello(session);
  return p;
}

/**
 * Resolves once the main thread has handed `path`'s alert to this session (observe's alert block
 * shows it). The same hub callback offers it to the stream, and stdout is one ordered writer, so a
 * notification for it would have reached the client before this response: checking `got` after
 * this proves absence without sleeping.
 */
const seenByMain = (client: Client, path: string): Promise<string> =>
  waitFor(`${path} in observe's alert block`, async () => {
    const block = (await client.callTool({ name: 'observe', arguments: { what: 'errors' } })) as { content: Array<{ text: string }> };
    return block.content.map((c) => c.text).find((t) => t.startsWith('--- ALERTS') && t.includes(path));
  });

const serverError = (path: string, status = 500) => ({ ts: Date.now(), method: 'GET', url: `https://api.test${path}`, status, duration: 5 });

describe('context streaming over stdio', () => {
  it('is off by default, pushes a 5xx as notifications/message once enabled, reports latency, and stops on disable', async () => {
    const port = await freePort();
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--standalone'], env: env(port), stderr: 'pipe' });
    const client = new Client({ name: 'stream', version: '1' });
    const got: Array<{ level: string; logger?: string; data: any; at: number }> = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void got.push({ ...(n.params as any), at: Date.now() }));
    await client.connect(transport);
    const p = await producer(port, 'stream-1');
    let seq = 0;

    const off = JSON.parse(text(await client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'status' } })));
    expect(off).toMatchObject({ status: 'disabled', config: { events: ['all'], throttle_seconds: 5, severity_min: 'warning' } });
    p.send(batch(seq, { network: [serverError('/before-enable')] }));
    await p.ackFor(seq++);
    await seenByMain(client, '/before-enable');
    expect(got).toHaveLength(0);

    const on = JSON.parse(text(await client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', throttle_seconds: 1 } })));
    expect(on).toMatchObject({ status: 'enabled', config: { throttle_seconds: 1 } });
    const bad = await client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', throttle_seconds: 0 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('throttle_seconds');

    p.send(batch(seq, { network: [serverError('/api/users')] }));
    await p.ackFor(seq++);
    await waitFor('the first push', () => got.length > 0);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ level: 'error', logger: 'gasoline' });
    expect(got[0]!.data).toMatchObject({ category: 'anomaly', source: 'anomaly_detector', title: 'Server error: GET /api/users → 500', url: 'https://api.test/api/users' });

    // a burst inside the throttle window is batched and flushed when the window ends
    p.send(batch(seq, { network: [serverError('/a'), serverError('/b'), serverError('/c')] }));
    await p.ackFor(seq++);
    await waitFor('the batched push', () => got.length > 1);
    expect(got).toHaveLength(2);
    expect(got[1]!.data).toMatchObject({ batch: true, count: 3 });

    const status = JSON.parse(text(await client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'status' } })));
    expect(status.status).toBe('enabled');
    expect(status.notify_count).toBe(2);
    expect(status.latency_ms.samples).toBeGreaterThanOrEqual(1);
    expect(status.latency_ms.p50).toBeGreaterThan(0);
    // the real path stamps every hand-off: worker → ring → main → stdout
    for (const stage of ['queue', 'worker', 'wake', 'emit']) expect(status.latency_stages_ms[stage].samples).toBe(status.latency_ms.samples);
    expect(status.latency_stages_ms.queue.max + status.latency_stages_ms.worker.max + status.latency_stages_ms.wake.max + status.latency_stages_ms.emit.max).toBeGreaterThanOrEqual(status.latency_ms.max - 0.05);

    const disabled = JSON.parse(text(await client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'disable' } })));
    expect(disabled.status).toBe('disabled');
    p.send(batch(seq, { network: [serverError('/after-disable')] }));
    await p.ackFor(seq++);
    await seenByMain(client, '/after-disable');
    expect(got).toHaveLength(2);
    // Nothing was held back either: enabling again flushes whatever waits at once, so the next
    // push must be the new alert alone.
    await client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', throttle_seconds: 1 } });
    p.send(batch(seq, { network: [serverError('/after-reenable')] }));
    await p.ackFor(seq++);
    await waitFor('the push after enabling again', () => got.length > 2);
    expect(got).toHaveLength(3);
    expect(got[2]!.data).toMatchObject({ url: 'https://api.test/after-reenable' });
    p.close();
    await client.close();
  }, 30_000);

  it('notifications and responses share stdout as whole lines; a new initialize turns streaming off; stdin closing ends everything', async () => {
    const port = await freePort();
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, '--standalone'], { env: env(port), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    const rpc = (id: number, method: string, params: unknown): void => void child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const init = (id: number) => {
      rpc(id, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    };
    const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
    init(1);
    rpc(2, 'tools/call', { name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', throttle_seconds: 1, severity_min: 'info' } });
    await waitFor('the enable answer', () => lines().some((l) => l.id === 2));
    const p = await producer(port, 'stream-2');
    // alerts and tool calls at the same time
    let seq = 0;
    for (let i = 0; i < 20; i++) {
      p.send(batch(seq++, { network: [serverError(`/x${i}`)], logs: [logRecord(i, { level: 'error', type: 'exception', message: `boom ${String.fromCharCode(97 + i)}` })] }));
      rpc(100 + i, 'tools/call', { name: 'observe', arguments: { what: 'errors', limit: 5 } });
    }
    await waitFor('20 observe answers', () => lines().filter((l) => typeof l.id === 'number' && l.id >= 100).length === 20);
    await waitFor('a notification', () => lines().some((l) => l.method === 'notifications/message'));
    const all = lines();
    expect(all.every((l) => l.jsonrpc === '2.0')).toBe(true);
    expect(out.endsWith('\n')).toBe(true);

    // OI-3: initialize again → streaming is off
    init(3);
    await waitFor('the second initialize answer', () => lines().some((l) => l.id === 3));
    rpc(4, 'tools/call', { name: 'configure', arguments: { action: 'streaming', streaming_action: 'status' } });
    await waitFor('the status answer', () => lines().some((l) => l.id === 4));
    expect(JSON.parse(lines().find((l) => l.id === 4)!.result.content[0].text).status).toBe('disabled');

    p.close();
    const t0 = Date.now();
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(3000);
  }, 40_000);

  it('survives stdout going away in the middle of a notification stream', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, '--standalone'], { env: env(port), stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const rpc = (id: number, method: string, params: unknown): void => void child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    rpc(2, 'tools/call', { name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', throttle_seconds: 1, severity_min: 'info' } });
    const p = await producer(port, 'stream-3');
    let seq = 0;
    let nacksSeen = 0;
    const pump = setInterval(() => {
      // a nack (a batch that waited behind this session's previous one over max_queue_delay_ms, on a
      // loaded machine) means resend from where it says, as a producer must: every later batch
      // would be refused out of order, and the ack awaited below would never come
      const nacks = p.frames.filter((f) => f.t === 'nack');
      if (nacks.length > nacksSeen) {
        nacksSeen = nacks.length;
        seq = nacks[nacks.length - 1]!.resume_from_seq as number;
      }
      p.send(batch(seq++, { network: [serverError(`/y${seq}`)] }));
    }, 10);
    await waitFor('the stream to be flowing', () => out.includes('notifications/message'));
    child.stdout.destroy();
    // the server keeps ingesting alerts with nobody reading: 30 more batches acked after the cut
    const cut = seq;
    await p.ackFor(cut + 30, 10_000);
    clearInterval(pump);
    p.close();
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(err).not.toMatch(/Unhandled|TypeError|RangeError/);
  }, 30_000);
});
