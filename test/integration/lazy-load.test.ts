/**
 * An idle daemon holds no code it has not needed (issue 17's idle RSS): prom-client is loaded by
 * the first GET /metrics, the MCP SDK's HTTP server transport (and the tool dispatcher behind it)
 * by the first /mcp request, and neither by start-up or /health. Observed on a real `--server`
 * process through a module resolve hook that appends every URL the main thread resolves to a file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, MCP_PATH, readDaemonToken } from '../../src/daemon/contract.js';
import { BIN, cleanup, health, sandbox, testEnv, type Sandbox } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { waitFor } from '../helpers/wait-for.js';

const PROM = '/prom-client/';
const SDK_TRANSPORT = '/server/webStandardStreamableHttp.js';

describe('what a --server daemon loads before first use', () => {
  let sb: Sandbox | undefined;
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    if (sb) await cleanup(sb);
    sb = undefined;
    child = undefined;
  });

  it('prom-client waits for the first scrape, the SDK transport for the first /mcp request', async () => {
    sb = sandbox(await freePort());
    const loadLog = join(sb.dir, 'loaded.txt');
    const hooks = join(sb.dir, 'hooks.mjs');
    const register = join(sb.dir, 'register.mjs');
    writeFileSync(loadLog, '');
    writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(spec, ctx, next) {\n  const r = await next(spec, ctx);\n  appendFileSync(${JSON.stringify(loadLog)}, r.url + '\\n');\n  return r;\n}\n`);
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    child = spawn(process.execPath, ['--import', pathToFileURL(register).href, BIN, '--server', ...sb.args], { env: testEnv(), stdio: 'ignore' });
    const port = sb.port;
    await waitFor('the daemon answers /health', () => health(port), 20_000);
    const loaded = (): string => readFileSync(loadLog, 'utf8');

    // the hook sees the app's own modules, so an absence below means something
    expect(loaded()).toContain('/dist/src/app.js');
    expect(loaded()).toContain('/dist/src/metrics.js');
    expect(loaded()).not.toContain(PROM);
    expect(loaded()).not.toContain(SDK_TRANSPORT);

    const m = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(m.status).toBe(200);
    expect(await m.text()).toContain('gasoline_records_received_total');
    expect(loaded()).toContain(PROM);
    expect(loaded()).not.toContain(SDK_TRANSPORT);

    // /health before any bridge: the door reports no sessions without loading them
    const h = (await health(port)) as { mcp_http?: { sessions: number; max_sessions: number } };
    expect(h.mcp_http).toMatchObject({ sessions: 0, max_sessions: 64 });
    expect(loaded()).not.toContain(SDK_TRANSPORT);

    const stateDir = sb.stateDir;
    const token = await waitFor('the token file', () => readDaemonToken(stateDir, port));
    const init = await fetch(`http://127.0.0.1:${port}${MCP_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, [CLIENT_HEADER]: 'lazy-test', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lazy-test', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeTruthy();
    await init.body?.cancel();
    expect(loaded()).toContain(SDK_TRANSPORT);
  });
});
