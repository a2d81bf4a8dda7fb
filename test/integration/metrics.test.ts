/**
 * GET /metrics (#16 observability): Prometheus text that a strict reader accepts, ingest counters
 * equal to what a real producer sent and to what /health says, tool-call and push histograms fed by
 * calls through the real SDK client, the Host/Origin guard, and the per-client trail those calls
 * leave (redacted arguments, 0600).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { KINDS } from '../../src/domain/kinds.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

const SECRET = 'ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2';

let server: App;
let stateDir: string;

function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method: 'GET', path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reader of text exposition 0.0.4: every line is a HELP, a TYPE, a sample or empty; every sample
 * belongs to a family announced by TYPE before it; names and labels have the allowed shapes; values
 * are numbers. Anything else fails with the line.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sampleRe = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
  const labelRe = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(?:,|$)/;
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    // the format ignores empty lines (prom-client puts one between families)
    if (line === '') continue;
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) {
      expect(helps.has(m[1]!), `HELP twice: ${line}`).toBe(false);
      helps.add(m[1]!);
      continue;
    }
    if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      expect(types.has(m[1]!), `TYPE twice: ${line}`).toBe(false);
      types.set(m[1]!, m[2]!);
      continue;
    }
    m = sampleRe.exec(line);
    expect(m, `not an exposition line: ${JSON.stringify(line)}`).not.toBeNull();
    const [, name, rawLabels = '', rawValue] = m!;
    const family = name!.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(name!) || types.get(family) === 'histogram' || types.get(family) === 'summary', `sample before its TYPE: ${line}`).toBe(true);
    const labels: Record<string, string> = {};
    let rest = rawLabels;
    while (rest) {
      const l = labelRe.exec(rest);
      expect(l, `bad labels in ${line}`).not.toBeNull();
      labels[l![1]!] = l![2]!;
      rest = rest.slice(l![0].length);
    }
    expect(rawValue, line).toMatch(/^(?:[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+)|[+-]?Inf|NaN)$/i);
    samples.push({ name: name!, labels, value: Number(rawValue!.replace(/^\+?Inf$/i, 'Infinity')) });
  }
  return { types, samples };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

async function scrape(): Promise<{ types: Map<string, string>; samples: Sample[] }> {
  const r = await get('/metrics');
  expect(r.status).toBe(200);
  expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(r.text);
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'gasoline-metrics-'));
  server = await startTestServer({ state_dir: stateDir });
});
afterAll(async () => {
  await server?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('GET /metrics', () => {
  it('is exposition text a strict reader accepts, with our families named by convention', async () => {
    const { types, samples } = await scrape();
    expect(types.get('gasoline_records_received_total')).toBe('counter');
    expect(types.get('gasoline_records_dropped_total')).toBe('counter');
    expect(types.get('gasoline_ring_capacity_bytes')).toBe('gauge');
    expect(types.get('gasoline_push_latency_seconds')).toBe('histogram');
    expect(types.get('gasoline_tool_call_duration_seconds')).toBe('histogram');
    expect(types.get('gasoline_mcp_sessions')).toBe('gauge');
    expect(types.get('gasoline_clients_connected')).toBe('gauge');
    // process metrics, prefixed
    expect(types.has('gasoline_process_cpu_user_seconds_total')).toBe(true);
    expect(types.has('gasoline_nodejs_eventloop_lag_seconds')).toBe(true);
    for (const [name, type] of types) {
      if (type === 'counter') expect(name).toMatch(/_total$/);
      expect(name).toMatch(/^gasoline_/);
    }
    // a ring's capacity is the configured size
    expect(value(samples, 'gasoline_ring_capacity_bytes', { kind: 'logs' })).toBe(256 * 1024);
    expect(value(samples, 'gasoline_mcp_sessions')).toBe(0);
  });

  it('counts what a real producer sent, per kind and reason, as /health does', async () => {
    const before = (await scrape()).samples;
    const p = await Producer.connect(server.port);
    await p.hello('metrics-1');
    p.send(batch(0, { logs: [logRecord(1), logRecord(2), logRecord(3), { ts: Date.now(), level: 'nope' }] }));
    await p.ackFor(0);
    // the same batch again: its records are dropped as duplicates
    p.send(batch(0, { logs: [logRecord(1), logRecord(2), logRecord(3)] }));
    await waitFor('the duplicate to be counted', async () => value((await scrape()).samples, 'gasoline_records_dropped_total', { kind: 'logs', reason: 'duplicate' })! > (value(before, 'gasoline_records_dropped_total', { kind: 'logs', reason: 'duplicate' }) ?? 0));
    p.close();
    await p.closed();

    const { samples } = await scrape();
    const health = (JSON.parse((await get('/health')).text) as { kinds: Record<string, { received: number; stored: number; rejected: number; dropped: Record<string, number>; ring: { used_bytes: number; capacity_bytes: number; records: number } }> }).kinds;
    const delta = (name: string, labels: Record<string, string>): number => value(samples, name, labels)! - (value(before, name, labels) ?? 0);
    expect(delta('gasoline_records_received_total', { kind: 'logs' })).toBe(7);
    expect(delta('gasoline_records_stored_total', { kind: 'logs' })).toBe(3);
    expect(delta('gasoline_records_rejected_total', { kind: 'logs' })).toBe(1);
    expect(delta('gasoline_records_dropped_total', { kind: 'logs', reason: 'duplicate' })).toBe(3);
    for (const kind of KINDS) {
      const h = health[kind]!;
      expect(value(samples, 'gasoline_records_received_total', { kind })).toBe(h.received);
      expect(value(samples, 'gasoline_records_stored_total', { kind })).toBe(h.stored);
      expect(value(samples, 'gasoline_records_rejected_total', { kind })).toBe(h.rejected);
      for (const [reason, n] of Object.entries(h.dropped)) expect(value(samples, 'gasoline_records_dropped_total', { kind, reason })).toBe(n);
      expect(value(samples, 'gasoline_ring_records', { kind })).toBe(h.ring.records);
      expect(value(samples, 'gasoline_ring_used_bytes', { kind })).toBe(h.ring.used_bytes);
      expect(value(samples, 'gasoline_ring_capacity_bytes', { kind })).toBe(h.ring.capacity_bytes);
    }
    expect(value(samples, 'gasoline_frames_received_total')).toBeGreaterThanOrEqual(3);
  });

  it('times tool calls per tool and outcome, and streamed pushes, through the real SDK client; each call leaves a redacted trail line', async () => {
    const client: Client = await connectAgent(server, stateDir, 'metrics-agent');
    const pushes: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void pushes.push(n.params));
    const count = async (tool: string, outcome: string): Promise<number> => value((await scrape()).samples, 'gasoline_tool_call_duration_seconds_count', { tool, outcome }) ?? 0;
    const obsBefore = await count('observe', 'ok');
    const errBefore = await count('configure', 'error');

    await callTool(client, 'observe', { what: 'summary' });
    await callTool(client, 'observe', { what: 'errors' });
    const tested = await callTool(client, 'configure', { action: 'redaction', redaction_action: 'test', text: `my token ${SECRET}` });
    expect(tested.text).not.toContain(SECRET);
    const bad = await callTool(client, 'configure', { action: 'checkpoint', checkpoint_action: 'delete' });
    expect(bad.isError).toBe(true);

    expect((await count('observe', 'ok')) - obsBefore).toBe(2);
    expect((await count('configure', 'error')) - errBefore).toBe(1);
    const { samples } = await scrape();
    // +Inf holds every observation: the buckets are cumulative
    expect(value(samples, 'gasoline_tool_call_duration_seconds_bucket', { tool: 'observe', outcome: 'ok', le: '+Inf' })).toBe(value(samples, 'gasoline_tool_call_duration_seconds_count', { tool: 'observe', outcome: 'ok' }));

    // a push: streaming on, a 5xx from a producer, the notification arrives; the histogram counts it
    const pushBefore = value(samples, 'gasoline_push_latency_seconds_count') ?? 0;
    await callTool(client, 'configure', { action: 'streaming', streaming_action: 'enable', throttle_seconds: 1 });
    const p = await Producer.connect(server.port);
    await p.hello('metrics-push');
    p.send(batch(0, { network: [{ ts: Date.now(), method: 'GET', url: 'https://api.test/metrics-push', status: 500, duration: 5 }] }));
    await p.ackFor(0);
    await waitFor('the push', () => pushes.length > 0);
    await waitFor('the push latency observed', async () => (value((await scrape()).samples, 'gasoline_push_latency_seconds_count') ?? 0) > pushBefore);
    p.close();
    await p.closed();

    // the trail: one line per call, arguments redacted, 0600
    await server.trails.flush();
    const file = join(stateDir, 'clients', 'metrics-agent.jsonl');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'clients')).mode & 0o777).toBe(0o700);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET.slice(0, 12));
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(lines[0]).toMatchObject({ tool: 'observe', args: { what: 'summary' } });
    expect(lines[0]!.result_chars).toBeGreaterThan(0);
    expect(typeof lines[0]!.ms).toBe('number');
    expect(Date.parse(lines[0]!.ts as string)).not.toBeNaN();
    expect(lines[2]).toMatchObject({ tool: 'configure', args: { action: 'redaction', redaction_action: 'test' } });
    expect(String((lines[2]!.args as { text: string }).text)).toContain('my token');
    expect(lines[3]).toMatchObject({ tool: 'configure', error: 'invalid_argument' });
    await client.close();
  });

  it('refuses a foreign Origin or Host like /health, and a POST', async () => {
    const foreign = await get('/metrics', { origin: 'https://evil.test' });
    expect(foreign.status).toBe(403);
    expect(foreign.text).not.toContain('gasoline_records');
    expect(JSON.parse(foreign.text)).toMatchObject({ error: 'origin_refused' });
    const rebound = await get('/metrics', { host: `evil.test:${server.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.text).not.toContain('gasoline_records');
    const post = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/metrics' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(post).toBe(405);
  });

  it('lets a part built later feed a hook gauge (the /mcp sessions)', async () => {
    let sessions = 3;
    server.metrics.gauge('gasoline_mcp_sessions', 'ignored: the family exists', () => sessions);
    expect(value((await scrape()).samples, 'gasoline_mcp_sessions')).toBe(3);
    sessions = 1;
    expect(value((await scrape()).samples, 'gasoline_mcp_sessions')).toBe(1);
  });
});
