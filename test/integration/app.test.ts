/**
 * The composition root: one app serves many tool sessions, a client's sessions share its state,
 * a taken port leaves nothing running, and shutdown is one idempotent path.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { PortInUseError } from '../../src/transport/edge.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';

let app: App;
const stateDir = tempStateDir('gasoline-app-');

beforeAll(async () => {
  app = await startTestServer();
}, 30_000);

afterAll(async () => {
  await app.close();
});

describe('tool sessions over one app', () => {
  it("two sessions of one client share its state; another client's is its own", async () => {
    const first = await connectAgent(app, stateDir, 'shared');
    const second = await connectAgent(app, stateDir, 'shared');
    const other = await connectAgent(app, stateDir, 'someone-else');
    expect((await callTool(first, 'configure', { action: 'checkpoint', checkpoint_action: 'create', name: 'before-fix' })).isError).toBe(false);
    expect((await callTool(second, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('before-fix');
    expect((await callTool(other, 'configure', { action: 'checkpoint', checkpoint_action: 'list' })).text).toContain('no checkpoints');
    expect(app.clients.get('shared').checkpoints.has('before-fix')).toBe(true);
  });

  it('health through the port is the app health', async () => {
    const c = await connectAgent(app, stateDir, 'health');
    const h = JSON.parse((await callTool(c, 'configure', { action: 'health' })).text) as { status: string; port: number; mcp: unknown };
    expect(h.status).toBe('ok');
    expect(h.port).toBe(app.port);
    expect(h.mcp).toEqual({ client_id: 'health' });
  });
});

describe('start and stop', () => {
  it('refuses a taken port with PortInUseError before building anything', async () => {
    const squatter: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const port = (squatter.address() as { port: number }).port;
    try {
      await expect(startTestServer({ port })).rejects.toBeInstanceOf(PortInUseError);
    } finally {
      await new Promise<void>((r) => squatter.close(() => r()));
    }
  });

  it('close is idempotent: a second call returns the same shutdown', async () => {
    const other = await startTestServer();
    const a = other.close();
    const b = other.close();
    expect(b).toBe(a);
    await a;
    await expect(fetch(`http://127.0.0.1:${other.port}/health`)).rejects.toThrow();
  }, 30_000);
});
