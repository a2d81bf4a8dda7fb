/**
 * What a bridge answers itself (src/bridge/relay.ts, from the answers the build recorded) is what
 * the daemon's server answers, byte for byte: held side by side with a `--standalone` process,
 * whose SDK server is the same dispatcher a daemon runs per session. The bridge here never reaches
 * a daemon (something else holds its port), so every answer compared is its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAnswers } from '../../src/mcp/recorded-answers.js';
import { BIN, testEnv } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { waitFor } from '../helpers/wait-for.js';

type Line = Record<string, unknown>;

interface Proc {
  child: ChildProcess;
  lines: () => Line[];
  raw: () => string;
  send(m: Line | string): void;
  answer(id: number | string): Promise<Line>;
}

const init = (id: number | string, protocolVersion: string): Line => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'answers-test', version: '1' } } });

describe("a bridge's own answers are the daemon's server's", () => {
  let holder: Server;
  let holderPort: number;
  let dir: string;
  const procs: ChildProcess[] = [];

  beforeAll(async () => {
    holder = createServer((_q, r) => r.writeHead(404).end());
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    holderPort = (holder.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'gasoline-answers-'));
  });
  afterAll(async () => {
    for (const c of procs) c.kill('SIGKILL');
    await new Promise<void>((r) => holder.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (args: string[]): Proc => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...testEnv(), GASOLINE_THREADS: '1', GASOLINE_LOG_LEVEL: 'warn' }, stdio: ['pipe', 'pipe', 'ignore'] });
    procs.push(child);
    let buf = '';
    let all = '';
    const out: Line[] = [];
    child.stdout!.on('data', (d: Buffer) => {
      all += d.toString();
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        out.push(JSON.parse(buf.slice(0, nl)) as Line);
        buf = buf.slice(nl + 1);
      }
    });
    const answer = async (id: number | string): Promise<Line> => {
      await waitFor(`the answer to ${id}`, () => out.some((l) => l.id === id), 20_000, 10);
      return out.find((l) => l.id === id)!;
    };
    return { child, lines: () => out, raw: () => all, send: (m) => child.stdin!.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`), answer };
  };

  const bridge = (): Proc => start(['--port', String(holderPort), '--state-dir', join(dir, 'bridge-state')]);
  const standalone = async (): Promise<Proc> => start(['--standalone', '--port', String(await freePort()), '--state-dir', join(dir, `solo-${Math.random().toString(36).slice(2)}`)]);

  /** the same conversation with both; every answer of each, by id */
  const both = async (conversation: Array<Line | string>, ids: Array<number | string>): Promise<[Line[], Line[]]> => {
    const b = bridge();
    const s = await standalone();
    // a first line that is not an initialize: the standalone's SDK server answers the initialize
    // itself (a first-line initialize it answers early, from the same recorded answers)
    s.send({ jsonrpc: '2.0', id: 'first', method: 'ping' });
    for (const m of conversation) {
      b.send(m);
      s.send(m);
    }
    const answers = await Promise.all([Promise.all(ids.map((id) => b.answer(id))), Promise.all(ids.map((id) => s.answer(id)))]);
    b.child.kill('SIGKILL');
    s.child.kill('SIGKILL');
    return answers;
  };

  it.each(['2025-06-18', '2024-11-05', '1999-01-01'])('protocolVersion %s: initialize, ping, tools/list, resources/*, the guide: equal', async (version) => {
    const [b, s] = await both(
      [
        init(1, version),
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 'three', method: 'resources/list', params: {} },
        { jsonrpc: '2.0', id: 4, method: 'resources/templates/list' },
        { jsonrpc: '2.0', id: 5, method: 'resources/read', params: { uri: 'gasoline://guide' } },
        { jsonrpc: '2.0', id: 6, method: 'ping' },
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'nope', arguments: {} } },
      ],
      [1, 2, 'three', 4, 5, 6, 7],
    );
    expect(b).toEqual(s);
    const negotiated = (b[0]!.result as { protocolVersion: string }).protocolVersion;
    expect(negotiated).toBe(version === '1999-01-01' ? loadAnswers(new URL('../../dist/bridge-answers.json', import.meta.url)).latest : version);
  }, 60_000);

  it('bad lines: not JSON, not JSON-RPC, a bad initialize: errors with the id, and the session goes on', async () => {
    const [b, s] = await both(
      [
        init(1, '2025-06-18'),
        '{"jsonrpc":"2.0","id":2,',
        { jsonrpc: '1.0', id: 3, method: 'ping' },
        { jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: 5 } },
        { jsonrpc: '2.0', id: 5, method: 'ping' },
      ],
      [3, 4, 5],
    );
    const codes = (ls: Line[]): unknown[] => ls.map((l) => (l.error as { code?: number } | undefined)?.code ?? 'ok');
    // a bad initialize: the SDK says -32603 (its params schema threw); the bridge names it, -32602
    expect(codes(s)).toEqual([-32600, -32603, 'ok']);
    expect(codes(b)).toEqual([-32600, -32602, 'ok']);
    expect((b[1]!.error as { message: string }).message).toContain('protocolVersion');
  }, 60_000);

  it('a request it cannot answer itself waits for a daemon, then says what is wrong', async () => {
    const b = bridge();
    b.send(init(1, '2025-06-18'));
    b.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'observe', arguments: {} } });
    b.send({ jsonrpc: '2.0', id: 3, method: 'prompts/list' });
    const call = await b.answer(2);
    expect(call.result).toMatchObject({ isError: true });
    expect(JSON.stringify(call.result)).toContain('not a gasoline daemon');
    const other = await b.answer(3);
    expect(other.error).toMatchObject({ code: -32000 });
    b.child.kill('SIGKILL');
    // every line on stdout was JSON-RPC
    for (const line of b.raw().trim().split('\n')) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
  }, 30_000);

  it('options only a daemon reads are its to judge: a refused start is quoted in the answer, and nothing is left running', async () => {
    const cfg = join(dir, 'bad-rings.json');
    writeFileSync(cfg, JSON.stringify({ rings: { logs: 5 } }));
    const port = await freePort();
    const b = start(['--port', String(port), '--state-dir', join(dir, 'bad-state'), '--config', cfg]);
    b.send(init(1, '2025-06-18'));
    b.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'observe', arguments: {} } });
    const call = await b.answer(2);
    b.child.kill('SIGKILL');
    const text = JSON.stringify(call.result);
    expect(call.result).toMatchObject({ isError: true });
    expect(text).toContain('invalid configuration');
    expect(text).toContain('rings.logs');
  }, 30_000);

  it('a standalone answers a first-line initialize before its engine loads: once, as its SDK server would, and the session goes on', async () => {
    const early = await standalone();
    const late = await standalone();
    late.send({ jsonrpc: '2.0', id: 'first', method: 'ping' });
    for (const p of [early, late]) {
      p.send(init(1, '2024-11-05'));
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      p.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      p.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'configure', arguments: { action: 'health' } } });
    }
    const [e, l] = await Promise.all([Promise.all([1, 2, 3].map((id) => early.answer(id))), Promise.all([1, 2, 3].map((id) => late.answer(id)))]);
    // a second answer to 1 would have come before the answer to 3: none did
    expect(early.lines().filter((x) => x.id === 1)).toHaveLength(1);
    expect(e[0]).toEqual(l[0]);
    expect(e[1]).toEqual(l[1]);
    expect(e[2]!.result).toMatchObject({ content: [{ type: 'text' }] });
    expect(e[2]!.result).not.toMatchObject({ isError: true });
    early.child.kill('SIGKILL');
    late.child.kill('SIGKILL');
  }, 60_000);
});
