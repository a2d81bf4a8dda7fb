/**
 * A plain bridge answers initialize before the SDK loads (src/bridge/fast-start.ts), from answers
 * the build recorded from the bridge's own server. Held here against the SDK answering the same
 * request at run time (a `--connect` bridge, which never answers early), byte for byte, for the
 * version negotiation too; and the server's own second answer never reaches the agent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeAnswer, isPlainBridge, loadAnswers } from '../../src/bridge/fast-start.js';
import { BIN, testEnv } from '../helpers/bridge.js';
import { waitFor } from '../helpers/wait-for.js';

interface Proc {
  child: ChildProcess;
  lines: () => Array<Record<string, unknown>>;
  send(m: Record<string, unknown>): void;
}

/** what `pnpm build` recorded (the tests run the sources; the bridges run dist/) */
const recorded = () => loadAnswers(new URL('../../dist/bridge-answers.json', import.meta.url));

const init = (id: number | string, protocolVersion: string): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'fast-start-test', version: '1' } } });

describe('a plain bridge answers initialize at once, as the SDK would', () => {
  let holder: Server;
  let port: number;
  let dir: string;
  const procs: ChildProcess[] = [];

  beforeAll(async () => {
    // not a gasoline daemon on the port: the bridges find it, start none, and still answer initialize
    holder = createServer((_q, r) => r.writeHead(404).end());
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    port = (holder.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'gasoline-fast-'));
  });
  afterAll(async () => {
    for (const c of procs) c.kill('SIGKILL');
    await new Promise<void>((r) => holder.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (extra: string[] = []): Proc => {
    const child = spawn(process.execPath, [BIN, '--port', String(port), '--state-dir', join(dir, 'state'), ...extra], { env: testEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
    procs.push(child);
    let buf = '';
    const out: Array<Record<string, unknown>> = [];
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        out.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
        buf = buf.slice(nl + 1);
      }
    });
    return { child, lines: () => out, send: (m) => child.stdin!.write(`${JSON.stringify(m)}\n`) };
  };

  /** initialize, initialized, tools/list: every answer the agent gets, once the last one is in */
  const session = async (p: Proc, version: string): Promise<Array<Record<string, unknown>>> => {
    p.send(init(1, version));
    p.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    p.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await waitFor('the tools/list answer', () => p.lines().some((l) => l.id === 2), 15_000, 20);
    // a late second answer to id 1 would come before the answer to id 2: none did
    p.child.kill('SIGKILL');
    return p.lines();
  };

  it.each(['2025-06-18', '2024-11-05', '1999-01-01'])('protocolVersion %s: one answer, equal to the SDK\'s, and the session goes on', async (version) => {
    const fast = await session(start(), version);
    const sdk = await session(start(['--connect']), version);
    expect(fast.filter((l) => l.id === 1)).toHaveLength(1);
    expect(sdk.filter((l) => l.id === 1)).toHaveLength(1);
    expect(fast.find((l) => l.id === 1)).toEqual(sdk.find((l) => l.id === 1));
    expect(fast.find((l) => l.id === 2)).toEqual(sdk.find((l) => l.id === 2));
    const negotiated = (fast.find((l) => l.id === 1)!.result as { protocolVersion: string }).protocolVersion;
    expect(negotiated).toBe(version === '1999-01-01' ? recorded()!.latest : version);
  }, 40_000);

  it('a first line that is not a plain initialize is left to the server: its one answer', async () => {
    const p = start();
    p.send({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: 5 } });
    p.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    await waitFor('both answers', () => p.lines().some((l) => l.id === 8), 15_000, 20);
    p.child.kill('SIGKILL');
    const seven = p.lines().filter((l) => l.id === 7);
    expect(seven).toHaveLength(1);
    expect(seven[0]!.error).toBeDefined();
  }, 30_000);
});

describe('what counts as a plain bridge', () => {
  it('no mode flag, no mode variable, no config file naming another mode', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gasoline-fast-'));
    try {
      const cfg = (c: unknown): string => {
        const f = join(dir, `${Math.random().toString(36).slice(2)}.json`);
        writeFileSync(f, typeof c === 'string' ? c : JSON.stringify(c));
        return f;
      };
      expect(isPlainBridge([], {})).toBe(true);
      expect(isPlainBridge(['--port', '7000', '--replace', '--client-id', 'x'], {})).toBe(true);
      for (const f of ['--server', '--standalone', '--connect', '--stop', '--status', '--help', '-v']) expect(isPlainBridge([f], {}), f).toBe(false);
      expect(isPlainBridge([], { GASOLINE_MODE: 'server' })).toBe(false);
      expect(isPlainBridge([], { GASOLINE_MODE: 'bridge' })).toBe(true);
      expect(isPlainBridge([], { GASOLINE_SERVER: 'true' })).toBe(false);
      expect(isPlainBridge(['--config', cfg({ pool: { threads: 1 } })], {})).toBe(true);
      expect(isPlainBridge([`--config=${cfg({ mode: 'standalone' })}`], {})).toBe(false);
      expect(isPlainBridge([], { GASOLINE_CONFIG: cfg({ mode: 'server' }) })).toBe(false);
      expect(isPlainBridge(['--config', cfg('{not json')], {})).toBe(false);
      expect(isPlainBridge(['--config', join(dir, 'missing.json')], {})).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('negotiates as the SDK does, and declines what the SDK would refuse', () => {
    const a = recorded()!;
    expect(a).not.toBeNull();
    expect((initializeAnswer(a, JSON.stringify(init('x', a.supported[1]!)))!.response.result as { protocolVersion: string }).protocolVersion).toBe(a.supported[1]);
    for (const bad of ['', '{', '[]', JSON.stringify({ ...init(1, a.latest), jsonrpc: '1.0' }), JSON.stringify({ jsonrpc: '2.0', method: 'initialize', params: (init(1, a.latest) as { params: unknown }).params }), JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'initialize', params: (init(1, a.latest) as { params: unknown }).params }), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: a.latest, capabilities: {} } })]) {
      expect(initializeAnswer(a, bad), bad).toBeNull();
    }
  });
});
