/**
 * The modes, as a user meets them: the real bin/gasoline (compiled by `pnpm build`) as bridge,
 * --connect, --server, --status, --stop and --replace, each on its own port and state dir.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPath } from '../../src/daemon/contract.js';
import { BIN, cleanup, health, processesWith, runGasoline, runGasolineAsync, sandbox, type Sandbox, startBridge, startServer, testEnv, textOf } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('gasoline modes', () => {
  const boxes: Sandbox[] = [];
  const servers: Server[] = [];
  const box = async (): Promise<Sandbox> => {
    const sb = sandbox(await freePort());
    boxes.push(sb);
    return sb;
  };
  afterEach(async () => {
    for (const s of servers.splice(0)) s.close();
    for (const sb of boxes.splice(0)) await cleanup(sb);
  });

  it('--help lists every mode and option, on stderr', () => {
    const r = runGasoline(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    for (const s of ['--server', '--connect', '--standalone', '--stop', '--status', '--replace', '--client-id', '--client-ttl', 'bridge', 'GASOLINE_MODE']) expect(r.stderr).toContain(s);
  });

  it('refuses two modes at once, and a bad --client-id or --client-ttl, with exit 2', () => {
    expect(runGasoline(['--server', '--connect']).stderr).toContain('--server and --connect exclude each other');
    const bad = runGasoline(['--client-id', 'a/b', '--client-ttl', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('client_id');
    expect(bad.stderr).toContain('--client-ttl');
  });

  it('--connect with no daemon says which command starts one and exits 5', async () => {
    const sb = await box();
    const r = await runGasolineAsync(['--connect', ...sb.args]);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`gasoline --server --port ${sb.port}`);
  });

  it('answers initialize, tools/list and the guide before any daemon is up, then says in the tool answer why none is', async () => {
    const sb = await box();
    // a port held by something that is not gasoline: no daemon can ever come up there
    const squatter = createServer((s) => {
      s.on('error', () => undefined);
      s.end('not http\r\n\r\n');
    });
    servers.push(squatter);
    await new Promise<void>((r) => squatter.listen(sb.port, '127.0.0.1', () => r()));
    const t0 = Date.now();
    const b = await startBridge(sb);
    const tools = await b.client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['analyze', 'configure', 'interact', 'observe']);
    expect(b.client.getInstructions()).toContain('gasoline://guide');
    const guide = await b.client.readResource({ uri: 'gasoline://guide' });
    expect(JSON.stringify(guide)).toContain('# Gasoline guide');
    expect(Date.now() - t0).toBeLessThan(10_000);
    const r = await b.client.callTool({ name: 'observe', arguments: { what: 'summary' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`Port ${sb.port} is used by something that is not a gasoline daemon`);
    expect(processesWith(sb.stateDir, '--server')).toEqual([]);
    await b.client.close();
  }, 30_000);

  it('two bridges started at the same moment start exactly one daemon; the lock is gone afterwards', async () => {
    const sb = await box();
    const [a, b] = await Promise.all([startBridge(sb, [], { name: 'a' }), startBridge(sb, [], { name: 'b' })]);
    const [ra, rb] = await Promise.all([a.client.callTool({ name: 'configure', arguments: { action: 'health' } }), b.client.callTool({ name: 'configure', arguments: { action: 'health' } })]);
    expect(ra.isError).not.toBe(true);
    expect(rb.isError).not.toBe(true);
    const h = await health(sb.port);
    expect(h?.pid).toBeTypeOf('number');
    expect(processesWith(sb.stateDir, '--server')).toEqual([h!.pid]);
    expect(existsSync(lockPath(sb.stateDir, sb.port))).toBe(false);
    // the daemon's output file is ours alone
    const { statSync } = await import('node:fs');
    expect(statSync(join(sb.stateDir, `daemon-${sb.port}.out`)).mode & 0o777).toBe(0o600);
    await Promise.all([a.client.close(), b.client.close()]);
  }, 60_000);

  it('a stale lock (its holder dead) is reclaimed', async () => {
    const sb = await box();
    mkdirSync(sb.stateDir, { recursive: true, mode: 0o700 });
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    writeFileSync(lockPath(sb.stateDir, sb.port), JSON.stringify({ pid: dead.pid, time: Date.now() }), { mode: 0o600 });
    const b = await startBridge(sb);
    const r = await b.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    expect(r.isError).not.toBe(true);
    expect(processesWith(sb.stateDir, '--server')).toHaveLength(1);
    await b.client.close();
  }, 60_000);

  it('--status and --stop work against a --server daemon; --stop with none says so', async () => {
    const sb = await box();
    startServer(sb);
    const h = await waitFor('the daemon', () => health(sb.port), 30_000, 100);
    const st = await runGasolineAsync(['--status', ...sb.args]);
    expect(st.code).toBe(0);
    expect(st.stdout).toBe('');
    expect(st.stderr).toContain(`on 127.0.0.1:${sb.port} — server, pid ${String(h.pid)}`);
    expect(st.stderr).toContain('extension: not connected');
    // issue 19 item 7: the side panel's door and the redaction policy, checked from outside
    expect(st.stderr).toMatch(/browser transport: ok — \/mcp initialize answered in \d+ ms \(protocol [\d-]+\).*; 0 panel tokens live/);
    expect(st.stderr).toMatch(/redaction policy: loaded: \d+ built-in \+ 0 rules of yours, rules version 0/);
    const stop = await runGasolineAsync(['--stop', ...sb.args]);
    expect(stop.code).toBe(0);
    expect(stop.stderr).toContain(`stopped the daemon on port ${sb.port} (pid ${String(h.pid)}`);
    // the port is free: nothing answers, or (test files run side by side and pick free ports) a
    // process of another test took it since, which is not our daemon
    const after = await health(sb.port);
    expect(after === null || after.pid !== h.pid).toBe(true);
    expect(processesWith(sb.stateDir, '--server')).toEqual([]);
    const again = await runGasolineAsync(['--stop', ...sb.args]);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain(`no daemon runs on port ${sb.port}`);
  }, 60_000);

  it('a daemon of another version is reported, not killed; --replace replaces it', async () => {
    const sb = await box();
    // another version, honestly: a copy of this build whose package.json says so
    const other = join(sb.dir, 'other');
    // the whole bin/ folder: its package.json makes bin/gasoline CommonJS
    cpSync(dirname(BIN), join(other, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'dist/src'), join(other, 'dist/src'), { recursive: true });
    cpSync(join(ROOT, 'dist/workers'), join(other, 'dist/workers'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(other, 'node_modules'));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    writeFileSync(join(other, 'package.json'), JSON.stringify({ ...pkg, version: '0.0.1-other' }));
    startServer(sb, join(other, 'bin/gasoline'));
    const old = await waitFor('the other version', () => health(sb.port), 30_000, 100);
    expect(old.version).toBe('0.0.1-other');

    const b = await startBridge(sb);
    const r = await b.client.callTool({ name: 'observe', arguments: { what: 'summary' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('is version 0.0.1-other');
    expect(textOf(r)).toContain(`gasoline --replace --port ${sb.port}`);
    await waitFor('the bridge to say it on stderr', () => b.stderr().includes('gasoline --replace'));
    // the old daemon still answers (its /health can take over the helper's 1 s under the whole
    // suite on two cores: one run read null there while the process was alive)
    expect((await waitFor('the other version still answers', () => health(sb.port), 10_000, 100)).pid).toBe(old.pid);
    expect(processesWith(join(other, 'bin/gasoline'))).toEqual([old.pid]);
    await b.client.close();

    const rb = await startBridge(sb, ['--replace']);
    const ok = await rb.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    expect(ok.isError).not.toBe(true);
    const now = await health(sb.port);
    expect(now?.version).toBe(pkg.version);
    expect(now?.pid).not.toBe(old.pid);
    // no process runs the other version's binary any more (a bare pid as a substring matched 9
    // unrelated command lines in one CI-form run: Chromium's switches, from e2e files running
    // beside this one, carry long digit strings, and pids here are 4 digits)
    expect(processesWith(join(other, 'bin/gasoline'))).toEqual([]);
    await rb.client.close();
  }, 90_000);

  it("a bridge's stdout carries only JSON-RPC lines", async () => {
    const sb = await box();
    const c = spawn(process.execPath, [BIN, ...sb.args], { env: testEnv(), stdio: ['pipe', 'pipe', 'pipe'], cwd: sb.dir });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const send = (m: unknown): void => void c.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'configure', arguments: { action: 'health' } } });
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope', arguments: {} } });
    await waitFor('four answers', () => out.split('\n').filter(Boolean).length >= 4, 30_000);
    c.stdin.end();
    await new Promise((r) => c.on('exit', r));
    const lines = out.split('\n').filter(Boolean);
    for (const l of lines) expect((JSON.parse(l) as { jsonrpc: string }).jsonrpc).toBe('2.0');
    const byId = new Map(lines.map((l) => JSON.parse(l) as { id: number; error?: { code: number }; result?: { isError?: boolean } }).map((m) => [m.id, m]));
    expect(byId.get(3)?.result?.isError).not.toBe(true);
    expect(byId.get(4)?.error?.code).toBe(-32602);
  }, 60_000);
});
