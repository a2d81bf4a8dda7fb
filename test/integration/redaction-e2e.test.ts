/** Secrets through the real path: WebSocket ingest → worker redaction → ring → MCP tool result. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createToolServer } from '../../src/mcp/server.js';
import type { App } from '../../src/app.js';
import { readAll } from '../helpers/accounting.js';
import { batch, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';

let server: App;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const SECRETS = ['tK9f2LmQ8xZ4vB7nR1wE', 'ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2', 'correct horse battery', 'S3cr3tPassw0rd', '4111 1111 1111 1111', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlaGVyZQ'];

it('no secret or 12-character window of one is stored or returned', async () => {
  const p = await Producer.connect(server.port);
  await p.hello('redaction-e2e');
  const ts = Date.now();
  p.send(
    batch(0, {
      logs: [
        { ts, level: 'error', type: 'console', message: `login failed for token ${SECRETS[1]}`, args: [{ card: SECRETS[4] }] },
        { ts, level: 'error', type: 'network', message: 'POST /login 401', method: 'POST', request_url: `postgres://admin:${SECRETS[3]}@db/app`, status: 401, headers: { Authorization: `Bearer ${SECRETS[0]}` } },
      ],
      network_bodies: [{ ts, method: 'POST', url: 'https://app.test/login', status: 401, request_body: `{"user":"bo","password":"${SECRETS[2]}"}`, response_body: `{"jwt":"${SECRETS[5]}"}` }],
      ws_events: [{ ts, event: 'message', id: 'w', direction: 'outgoing', data: `{"auth":"Bearer ${SECRETS[0]}"}` }],
    }),
  );
  await p.ackFor(0);
  p.close();
  const stored = JSON.stringify([...readAll(server, 'logs'), ...readAll(server, 'network_bodies'), ...readAll(server, 'ws_events')]);
  const config = loadConfig({ env: {}, flags: { state_dir: tempStateDir('gasoline-red-'), port: server.port } });
  const mcp = createToolServer({ config, port: server.mcp, clientId: 'red' }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const c = new Client({ name: 'red', version: '1' });
  await c.connect(b);
  let answered = '';
  for (const what of ['errors', 'network_bodies', 'websocket_events', 'timeline']) {
    const r = await c.callTool({ name: 'observe', arguments: { what, from: 'start' } });
    answered += (r.content as Array<{ text: string }>)[0]!.text;
  }
  expect(answered).toContain('[REDACTED:');
  const h = server.health() as { redaction: { redacted: Record<string, number> } };
  expect(h.redaction.redacted.github_token).toBeGreaterThanOrEqual(1);
  expect(h.redaction.redacted.bearer).toBeGreaterThanOrEqual(1);
  expect(JSON.stringify(h)).not.toContain(SECRETS[1]!.slice(0, 12));
  expect(answered).toContain('POST');
  for (const s of SECRETS) {
    for (let i = 0; i + 12 <= s.length; i++) {
      expect(stored, `stored: ${s}`).not.toContain(s.slice(i, i + 12));
      expect(answered, `answered: ${s}`).not.toContain(s.slice(i, i + 12));
    }
  }
});

it('configure redaction: rules added at run time apply at ingest (every worker) and egress; bad ones are refused', async () => {
  const config = loadConfig({ env: {}, flags: { state_dir: tempStateDir('gasoline-red-'), port: server.port } });
  const mcp = createToolServer({ config, port: server.mcp, clientId: 'red2' }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const c = new Client({ name: 'red2', version: '1' });
  await c.connect(b);
  const call = async (args: Record<string, unknown>) => {
    const r = await c.callTool({ name: 'configure', arguments: { action: 'redaction', ...args } });
    return { text: (r.content as Array<{ text: string }>)[0]!.text, isError: r.isError === true };
  };
  const bad = await call({ redaction_action: 'add', name: 'evil', pattern: '(a+)\\1$' });
  expect(bad.isError).toBe(true);
  expect(bad.text).toContain('unchanged');
  expect((await call({ redaction_action: 'add', name: 'employee_id', pattern: 'EMP-[0-9]{6}', replacement: '[REDACTED:employee]' })).isError).toBe(false);
  expect((await call({ redaction_action: 'test', text: 'hello EMP-123456' })).text).toContain('hello [REDACTED:employee]');
  expect((await call({ redaction_action: 'list' })).text).toContain('employee_id (yours)');
  const p = await Producer.connect(server.port);
  await p.hello('redaction-live');
  p.send(batch(0, { logs: [{ ts: Date.now(), level: 'error', type: 'console', message: 'badge EMP-654321 rejected' }] }));
  await p.ackFor(0);
  p.close();
  expect(JSON.stringify(readAll(server, 'logs'))).not.toContain('EMP-654321');
  expect(JSON.stringify(readAll(server, 'logs'))).toContain('badge [REDACTED:employee] rejected');
  expect((await call({ redaction_action: 'remove', name: 'employee_id' })).isError).toBe(false);
  expect((await call({ redaction_action: 'remove', name: 'bearer' })).isError).toBe(true);
});
