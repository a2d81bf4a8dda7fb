/**
 * Bridges against one daemon, with a real producer, and the faults a user meets: a bridge killed,
 * an agent restarted in its directory, the daemon killed under running bridges.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, MCP_PATH, readDaemonToken } from '../../src/daemon/contract.js';
import { cleanup, health, processesWith, sandbox, type Sandbox, startBridge, textOf } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { waitFor } from '../helpers/wait-for.js';

describe('bridges and one daemon', () => {
  const boxes: Sandbox[] = [];
  afterEach(async () => {
    for (const sb of boxes.splice(0)) await cleanup(sb);
  });
  const box = async (): Promise<Sandbox> => {
    const sb = sandbox(await freePort());
    boxes.push(sb);
    return sb;
  };
  const dirOf = (sb: Sandbox, name: string): string => {
    const d = join(sb.dir, name);
    mkdirSync(d, { recursive: true });
    return d;
  };

  it("three bridges see a producer's telemetry; the bridge's tools/list is the daemon's, byte for byte; SIGKILL of A leaves B working; A restarted in its directory finds its checkpoint", async () => {
    const sb = await box();
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => startBridge(sb, [], { cwd: dirOf(sb, n), name: n })));
    await a!.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    const p = await Producer.connect(sb.port);
    await p.hello('bridge-test');
    p.send(batch(0, { logs: [logRecord(1, { message: 'TypeError: boom in checkout', type: 'exception' })] }));
    await p.ackFor(0);
    for (const x of [a!, b!, c!]) {
      const r = await x.client.callTool({ name: 'observe', arguments: { what: 'errors' } });
      expect(textOf(r)).toContain('TypeError: boom in checkout');
    }
    p.close();

    // what the daemon serves on /mcp, asked directly
    const token = readDaemonToken(sb.stateDir, sb.port)!;
    const direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${sb.port}${MCP_PATH}`), { requestInit: { headers: { authorization: `Bearer ${token}`, [CLIENT_HEADER]: 'direct' } } }));
    expect(JSON.stringify(await a!.client.listTools())).toBe(JSON.stringify(await direct.listTools()));
    expect(JSON.stringify(await a!.client.listResources())).toBe(JSON.stringify(await direct.listResources()));
    expect(a!.client.getInstructions()).toBe(direct.getInstructions());
    await direct.close();

    const made = await a!.client.callTool({ name: 'configure', arguments: { action: 'checkpoint', checkpoint_action: 'create', name: 'before-fix' } });
    expect(made.isError).not.toBe(true);
    process.kill(a!.pid, 'SIGKILL');
    const rb = await b!.client.callTool({ name: 'configure', arguments: { action: 'checkpoint', checkpoint_action: 'list' } });
    expect(rb.isError).not.toBe(true);
    // checkpoints are A's own
    expect(textOf(rb)).not.toContain('before-fix');

    const a2 = await startBridge(sb, [], { cwd: join(sb.dir, 'a'), name: 'a2' });
    const ra = await a2.client.callTool({ name: 'configure', arguments: { action: 'checkpoint', checkpoint_action: 'list' } });
    expect(textOf(ra)).toContain('before-fix');
    await Promise.all([a2.client.close(), b!.client.close(), c!.client.close()]);
  }, 90_000);

  it('SIGKILL of the daemon: the bridges say so, a new daemon comes up, tools work again, streaming is set again', async () => {
    const sb = await box();
    const [a, b] = await Promise.all(['a', 'b'].map((n) => startBridge(sb, [], { cwd: dirOf(sb, n), name: n })));
    await a!.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    await b!.client.callTool({ name: 'configure', arguments: { action: 'health' } });
    const on = await a!.client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', events: ['errors'], throttle_seconds: 1 } });
    expect(on.isError).not.toBe(true);
    const first = (await health(sb.port))!;
    process.kill(-(first.pid as number), 'SIGKILL');
    await waitFor('both bridges to say the daemon is gone', () => a!.stderr().includes('lost the daemon') && b!.stderr().includes('lost the daemon'), 15_000);
    const second = await waitFor('a new daemon', async () => {
      const h = await health(sb.port);
      return h && h.pid !== first.pid ? h : null;
    }, 40_000, 100);
    expect(processesWith(sb.stateDir, '--server')).toEqual([second.pid]);
    // the first answer after the gap says what it cost, once: nothing of the old daemon is lost silently
    const firstOk: Array<string | undefined> = [undefined, undefined];
    await waitFor('tools to work again on both', async () => {
      const rs = await Promise.all([a!, b!].map((br) => br.client.callTool({ name: 'configure', arguments: { action: 'health' } })));
      rs.forEach((r, i) => {
        if (r.isError !== true && firstOk[i] === undefined) firstOk[i] = textOf(r);
      });
      return firstOk.every((t) => t !== undefined);
    }, 20_000, 200);
    for (const t of firstOk) expect(t).toContain(`the gasoline daemon restarted (pid ${first.pid} → ${second.pid})`);
    expect(firstOk[0]).toContain('streaming is on again');
    expect(textOf(await b!.client.callTool({ name: 'configure', arguments: { action: 'health' } }))).not.toContain('daemon restarted');
    await waitFor("A's streaming config to be set again", () => a!.stderr().includes('streaming config applied again'), 10_000);
    const st = await a!.client.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'status' } });
    expect(textOf(st)).toMatch(/enabled|"enabled":\s*true/);
    await Promise.all([a!.client.close(), b!.client.close()]);
  }, 120_000);
});
