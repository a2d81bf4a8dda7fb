/**
 * Issue #18 item 3: secrets that survived redaction in the attack pass, each sent through a real
 * producer socket and read back through the real MCP SDK client (and the rings themselves).
 * A secret counts as leaked when any 10-character window of it is readable.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { readAll } from '../helpers/accounting.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { batch, Producer } from '../helpers/producer.js';
import { waitFor } from '../helpers/wait-for.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';

let server: App;
let agent: Client;
let seq = 0;
beforeAll(async () => {
  server = await startTestServer();
  agent = await connectAgent(server, tempStateDir('gasoline-bypass-'), 'bypass');
});
afterAll(async () => {
  await agent.close();
  await server.close();
});

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const b64url = (s: string): string => Buffer.from(s).toString('base64url');

function expectGone(where: string, text: string, secret: string, window = 10): void {
  for (let i = 0; i + window <= secret.length; i++) expect(text, `${where} holds "${secret.slice(i, i + window)}" of ${secret}`).not.toContain(secret.slice(i, i + window));
}

async function send(session: string, records: Record<string, unknown[]>, extra: Record<string, unknown> = {}): Promise<void> {
  const p = await Producer.connect(server.port);
  await p.hello(session, extra);
  const s = seq++;
  p.send(batch(s, records));
  await p.ackFor(s);
  p.close();
}

async function observe(args: Record<string, unknown>): Promise<string> {
  return (await callTool(agent, 'observe', { from: 'start', ...args })).text;
}

const stored = (): string => JSON.stringify([...readAll(server, 'logs'), ...readAll(server, 'network_bodies')]);

describe('(a) base64 and base64url of a secret', () => {
  const GHP = 'ghp_Qw7eR9tY2uI4oP6aS8dF1gH3jK5lZ0xC7vB9';
  const PASSWORD = 'hunter2-Sup3rSecret';
  const USER_PW = 'alice:Tr0ub4dor&3xyz';
  const cases = [
    ['password=', b64(`password=${PASSWORD}`), PASSWORD],
    ['ghp token', b64(GHP), GHP],
    ['user:pw', b64(USER_PW), USER_PW],
    ['base64url ghp', b64url(`{"token":"${GHP}"}`), GHP],
  ] as const;

  it('a run whose decoding holds a secret is redacted in logs, args and bodies', async () => {
    const ts = Date.now();
    await send('bypass-b64', {
      logs: cases.map(([name, enc]) => ({ ts, level: 'error', type: 'console', message: `b64 case ${name}: ${enc} end`, args: [`blob ${enc}`] })),
      network_bodies: [{ ts, method: 'POST', url: 'https://app.test/b64', status: 200, request_body: `{"blob":"${cases[0][1]}"}`, response_body: `x=${cases[2][1]}` }],
    });
    const answered = (await observe({ what: 'logs' })) + (await observe({ what: 'network_bodies' }));
    expect(answered).toContain('b64 case ghp token');
    const rings = stored();
    for (const [name, enc, secret] of cases) {
      expect(answered, name).not.toContain(enc.slice(0, 16));
      expect(rings, name).not.toContain(enc.slice(0, 16));
      expectGone('answer', answered, secret);
      expectGone('ring', rings, secret);
    }
  });

  it('ordinary base64 (no secret inside) is kept', async () => {
    const plain = b64('just an ordinary payload of text, nothing to hide here');
    await send('bypass-b64-plain', { logs: [{ ts: Date.now(), level: 'log', type: 'console', message: `plain ${plain}` }] });
    expect(await observe({ what: 'logs', contains: 'plain ' })).toContain(plain);
  });
});

describe('(b) console argument lists', () => {
  it('the argument after a label argument is redacted, in args and message', async () => {
    const ts = Date.now();
    const pairs = [
      ['password:', 'Tr1cky-Passw0rd'],
      ['api key:', 'k3yV4lue-9f8e7d6c'],
      ['pass', 'plainword-hunter'],
    ] as const;
    await send('bypass-args', {
      logs: pairs.map(([label, value]) => ({ ts, level: 'log', type: 'console', message: `${label} ${value}`, args: [label, value] })),
    });
    const answered = await observe({ what: 'logs', fold: false });
    for (const [label, value] of pairs) {
      expect(answered).toContain(JSON.stringify(label).slice(1, -1));
      expectGone('answer', answered, value, 8);
    }
    expectGone('ring', stored(), pairs[0][1], 8);
    // egress no longer redacts the `","` between a label and its value
    expect(answered).not.toContain('password:[REDACTED');
  });

  it('a ghp_ token split across two adjacent arguments is caught', async () => {
    const token = 'ghp_Zx9cV8bN7mL6kJ5hG4fD3sA2qW1eR0tY9uI8';
    const [a, b] = [token.slice(0, 14), token.slice(14)];
    await send('bypass-split', { logs: [{ ts: Date.now(), level: 'log', type: 'console', message: `${a} ${b}`, args: [a, b] }] });
    const answered = await observe({ what: 'logs', fold: false });
    expectGone('answer', answered, b, 10);
    expectGone('ring', stored(), b, 10);
    expect(answered).toContain('[REDACTED:github_token]');
  });
});

describe('(b2) a secret as an object key', () => {
  it('a map keyed by tokens in a console argument is stored and answered with its keys redacted', async () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.Qm9yZWQgdG9rZW4gc2ln';
    const ghp = 'ghp_Kx8cV7bN6mL5kJ4hG3fD2sA1qW0eR9tY8uI7';
    await send('bypass-key', { logs: [{ ts: Date.now(), level: 'log', type: 'console', message: 'sessions', args: ['sessions', { [jwt]: { user: 1 }, [ghp]: { user: 2 }, plain_name: 3 }] }] });
    const answered = await observe({ what: 'logs', fold: false });
    for (const secret of [jwt, ghp]) {
      expectGone('answer', answered, secret, 12);
      expectGone('ring', stored(), secret, 12);
    }
    expect(stored()).toContain('[REDACTED:jwt]');
    expect(stored()).toContain('[REDACTED:github_token]');
    expect(stored()).toContain('plain_name');
  });
});

describe('(c) session headers and the contains oracle', () => {
  const SESSION = 'q8Zr2LmX0vTn5KpW7sYd3Hf';
  it('X-Session-Id is redacted at ingest; contains with a prefix of it finds nothing', async () => {
    const ts = Date.now();
    await send('bypass-session', {
      network_bodies: [{ ts, method: 'GET', url: 'https://app.test/me', status: 200, request_headers: { 'X-Session-Id': SESSION, 'X-Request-Id': 'req-1234' }, response_body: 'ok' }],
      logs: [{ ts, level: 'error', type: 'network', message: 'GET /me 500', method: 'GET', request_url: 'https://app.test/me', status: 500, headers: { 'x-session-token': SESSION } }],
    });
    expectGone('ring', stored(), SESSION, 8);
    for (const what of ['network_bodies', 'logs', 'errors']) {
      const r = await observe({ what, contains: SESSION.slice(0, 4) });
      expect(r, what).toMatch(/: 0 matched/);
    }
    // the header is still there, its value gone
    expect(JSON.stringify(readAll(server, 'network_bodies'))).toContain('"X-Request-Id":"req-1234"');
  });
});

describe('(d) comma-joined Set-Cookie', () => {
  it('every cookie value is redacted, not just the first', async () => {
    const second = 'sEcOnDcOoKiEvAlUe42';
    const third = 'tHiRdCoOkIeVaLuE77';
    const header = `a=firstvalue1234; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT, sid=${second}; HttpOnly, theme=${third}`;
    await send('bypass-cookie', { network_bodies: [{ ts: Date.now(), method: 'GET', url: 'https://app.test/c', status: 200, response_headers: { 'Set-Cookie': header } }] });
    const rings = JSON.stringify(readAll(server, 'network_bodies'));
    for (const v of ['firstvalue1234', second, third]) expectGone('ring', rings, v, 8);
    expect(rings).toContain('Expires=Wed, 21 Oct 2037');
    expect(rings).toContain('sid=[REDACTED:cookie]');
  });
});

describe('(e) truncation after redaction', () => {
  it('the "Extension connected" alert does not show a prefix of a token in the session id', async () => {
    const token = 'ghp_Lk8jH7gF6dS5aP4oI3uY2tR1eW0qM9nB8vC7';
    const session = `sess-x-ab ${token}`;
    const p = await Producer.connect(server.port);
    await p.hello(session, { client: 'extension', version: '1.0.0' });
    let block = '';
    await waitFor('Extension connected', async () => {
      const r = await agent.callTool({ name: 'observe', arguments: { what: 'logs' } });
      block += (r.content as Array<{ text: string }>).map((c) => c.text).join('\n');
      return block.includes('Extension connected');
    }, 5000);
    p.close();
    expect(block).toContain('Extension connected');
    expectGone('alert', block, token, 8);
  });
});
