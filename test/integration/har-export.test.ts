/**
 * Issue 21 item 5: HAR 1.2 export end to end. A real server (uWS edge → ingest worker → rings)
 * fed by a WebSocket producer; configure({action:"export_har"}) through the SDK's MCP client; and
 * `gasoline export har` against a real `gasoline --server` daemon. Every file written is checked
 * against the HAR 1.2 schema by @har-sdk/validator.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HarValidator } from '@har-sdk/validator';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { cleanup, health, runGasolineAsync, sandbox, startServer } from '../helpers/bridge.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { freePort } from '../helpers/net.js';
import { batch, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const validator = new HarValidator();
const SECRETS = ['eyJhbGciOiJIUzI1NiJ9', 'sessionSecretValue42', 'hunter2hunter2'];

type Har = { log: { version: string; comment?: string; entries: Array<Record<string, any>> } };

async function validHar(path: string): Promise<Har> {
  const text = readFileSync(path, 'utf8');
  for (const s of SECRETS) expect(text).not.toContain(s);
  const har = JSON.parse(text) as Har;
  expect(await validator.verify(har as never)).toEqual([]);
  return har;
}

/** One fetch as the extension reports it: a network record and its bodies record. */
function request(i: number, path: string, extra: Record<string, unknown> = {}): Record<string, unknown[]> {
  const ts = Date.now();
  const url = `http://127.0.0.1:3000${path}?n=${i}`;
  return {
    network: [{ ts, method: 'POST', url, status: 200, duration: 40 + i, initiator_type: 'fetch', encoded_body_size: 20, decoded_body_size: 20 }],
    network_bodies: [
      {
        ts,
        method: 'POST',
        url,
        status: 200,
        content_type: 'application/json',
        duration: 40 + i,
        request_headers: { 'content-type': 'application/json', authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln' },
        response_headers: { 'content-type': 'application/json' },
        request_body: '{"user":"a","password":"hunter2hunter2"}',
        response_body: `{"ok":true,"i":${i}}`,
        cookies: [{ name: 'sid', secure: true, http_only: true, expiry: 'session' }],
        ...extra,
      },
    ],
  };
}

describe('configure({action:"export_har"}) through the MCP client', () => {
  let server: App;
  let producer: Producer;
  let agent: Client;
  let seq = 0;
  const stateDir = tempStateDir('gasoline-har-');
  const out = mkdtempSync(join(tmpdir(), 'gasoline-har-out-'));
  const send = async (records: Record<string, unknown[]>): Promise<void> => {
    const s = seq++;
    producer.send(batch(s, records));
    await producer.ackFor(s);
  };

  beforeAll(async () => {
    server = await startTestServer({ state_dir: stateDir });
    producer = await Producer.connect(server.port);
    await producer.hello('har-export');
    agent = await connectAgent(server, stateDir, 'har-agent');
  });
  afterAll(async () => {
    await agent.close();
    producer.close();
    await server.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('writes every captured request to a 0600 HAR that validates, redacted, and answers path, entries, bytes, truncated', async () => {
    for (let i = 0; i < 3; i++) await send(request(i, '/api/orders'));
    await send(request(3, '/api/users'));
    const path = join(out, 'all.har');
    const r = await callTool(agent, 'configure', { action: 'export_har', path });
    expect(r.isError, r.text).toBe(false);
    const answer = JSON.parse(r.text.split('\n')[0]!) as Record<string, unknown>;
    expect(answer).toMatchObject({ path, entries: 4, truncated: false });
    expect(answer.bytes).toBe(statSync(path).size);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const har = await validHar(path);
    const e = har.log.entries[0]!;
    expect(e.request).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:3000/api/orders?n=0', queryString: [{ name: 'n', value: '0' }], postData: { mimeType: 'application/json' } });
    expect(e.request.headers).toContainEqual({ name: 'authorization', value: 'Bearer [REDACTED:bearer]' });
    expect(e.response.content).toMatchObject({ text: '{"ok":true,"i":0}', mimeType: 'application/json', size: 20 });
    expect(e.response.cookies[0]).toMatchObject({ name: 'sid', value: '', httpOnly: true });
    expect(e._tabId).toBe(7);
  });

  it('filters: url substring, a checkpoint (name), a limit that keeps the newest and says what it dropped', async () => {
    const cp = await callTool(agent, 'configure', { action: 'checkpoint', checkpoint_action: 'create', name: 'before-fix' });
    expect(cp.isError).toBe(false);
    await send(request(10, '/api/after'));
    await send(request(11, '/api/after'));

    const users = JSON.parse((await callTool(agent, 'configure', { action: 'export_har', path: join(out, 'users.har'), url_filter: '/api/users' })).text.split('\n')[0]!);
    expect(users).toMatchObject({ entries: 1, truncated: false });
    expect((await validHar(join(out, 'users.har'))).log.entries[0]!.request.url).toContain('/api/users');

    const since = JSON.parse((await callTool(agent, 'configure', { action: 'export_har', path: join(out, 'since.har'), name: 'before-fix' })).text.split('\n')[0]!);
    expect(since).toMatchObject({ entries: 2, filters: 'since checkpoint before-fix' });

    const capped = JSON.parse((await callTool(agent, 'configure', { action: 'export_har', path: join(out, 'capped.har'), limit: 2 })).text.split('\n')[0]!);
    expect(capped).toMatchObject({ entries: 2, truncated: true });
    expect(capped.dropped.older_records + capped.dropped.over_limit).toBeGreaterThan(0);
    const kept = (await validHar(join(out, 'capped.har'))).log.entries.map((x) => x.request.url);
    expect(kept).toEqual(['http://127.0.0.1:3000/api/after?n=10', 'http://127.0.0.1:3000/api/after?n=11']);

    // a time works as well as a checkpoint; a name that is neither is refused
    const future = JSON.parse((await callTool(agent, 'configure', { action: 'export_har', path: join(out, 'none.har'), name: new Date(Date.now() + 60_000).toISOString() })).text.split('\n')[0]!);
    expect(future).toMatchObject({ entries: 0, truncated: false });
    const bad = await callTool(agent, 'configure', { action: 'export_har', name: 'no-such-checkpoint' });
    expect(bad).toMatchObject({ isError: true });
    expect(bad.text).toMatch(/^unknown_name: name: no checkpoint "no-such-checkpoint"/);
  });

  it('a run-time redaction rule reaches the file: redacted again at egress, not only at ingest', async () => {
    await send(request(20, '/api/acct', { response_body: '{"acct":"ACCT-998877"}' }));
    const add = await callTool(agent, 'configure', { action: 'redaction', redaction_action: 'add', name: 'har_acct', pattern: 'ACCT-\\d{6}' });
    expect(add.isError, add.text).toBe(false);
    try {
      await callTool(agent, 'configure', { action: 'export_har', path: join(out, 'acct.har'), url_filter: '/api/acct' });
      const text = readFileSync(join(out, 'acct.har'), 'utf8');
      expect(text).not.toContain('ACCT-998877');
      expect(text).toContain('[REDACTED:har_acct]');
    } finally {
      await callTool(agent, 'configure', { action: 'redaction', redaction_action: 'remove', name: 'har_acct' });
    }
  });

  it('where it may write: absolute .har paths in an existing folder; no path → <state dir>/exports (0700)', async () => {
    const refused = async (path: string, why: RegExp): Promise<void> => {
      const r = await callTool(agent, 'configure', { action: 'export_har', path });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(why);
    };
    await refused('relative.har', /^invalid_argument: path: an absolute path/);
    await refused(join(out, 'notes.txt'), /^invalid_argument: path: must end in \.har/);
    await refused(join(out, 'missing', 'x.har'), /^invalid_argument: path: the folder .* does not exist/);
    mkdirSync(join(out, 'dir.har'));
    await refused(join(out, 'dir.har'), /is a directory/);
    await refused(`/${'a'.repeat(5000)}.har`, /at most 4096 characters/);
    // an existing .har is replaced whole (rename), never appended to or followed
    writeFileSync(join(out, 'old.har'), 'old', { mode: 0o644 });
    await callTool(agent, 'configure', { action: 'export_har', path: join(out, 'old.har') });
    expect(statSync(join(out, 'old.har')).mode & 0o777).toBe(0o600);
    await validHar(join(out, 'old.har'));

    const r = JSON.parse((await callTool(agent, 'configure', { action: 'export_har' })).text.split('\n')[0]!);
    expect(r.path.startsWith(join(stateDir, 'exports', 'gasoline-'))).toBe(true);
    expect(statSync(join(stateDir, 'exports')).mode & 0o777).toBe(0o700);
    await validHar(r.path);
  });
});

describe('gasoline export har against a real daemon', () => {
  it('writes the daemon\'s traffic through the same action; clear errors without a daemon or with a bad checkpoint', async () => {
    const port = await freePort();
    const sb = sandbox(port);
    try {
      startServer(sb);
      await waitFor('the daemon answers /health', async () => (await health(port))?.status === 'ok', 20_000);
      const p = await Producer.connect(port);
      await p.hello('har-cli');
      // together, resent on a nack: batch 1 waits behind batch 0, and when that one's task takes
      // over max_queue_delay_ms (a daemon just started, a loaded machine) it is refused overloaded
      await p.sendUntilAcked([batch(0, request(1, '/cli/one')), batch(1, request(2, '/cli/two'))]);
      p.close();
      const file = join(sb.dir, 'cli.har');
      const cli = (extra: string[]) => runGasolineAsync(['export', 'har', '--port', String(port), '--state-dir', sb.stateDir, ...extra]);

      const r = await cli(['--out', file, '--url', '/cli/']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^gasoline export: wrote ${file} \\(HAR 1\\.2, 2 entries, \\d+ bytes\\)\\n$`));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const har = await validHar(file);
      expect(har.log.entries.map((e) => e.request.url)).toEqual(['http://127.0.0.1:3000/cli/one?n=1', 'http://127.0.0.1:3000/cli/two?n=2']);

      const limited = await cli(['--out', file, '--limit', '1']);
      expect(limited.code).toBe(0);
      expect(limited.stderr).toMatch(/1 entries, \d+ bytes; left out: /);

      const bad = await cli(['--out', file, '--since', 'nope']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('unknown_name: name: no checkpoint "nope"');

      const usage = await cli(['--limit', 'x']);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--limit: 1 to 5000');

      const other = await freePort();
      const none = await runGasolineAsync(['export', 'har', '--port', String(other), '--state-dir', sb.stateDir]);
      expect(none.code).toBe(5);
      expect(none.stderr).toContain(`no daemon runs on port ${other}; start one with gasoline --server --port ${other}`);
    } finally {
      await cleanup(sb);
    }
  }, 60_000);
});
