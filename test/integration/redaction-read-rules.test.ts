/**
 * A redaction rule added at run time, and the records stored before it (#18 item 3, the gap the
 * first fix left): stored text keeps the rules in force when it arrived, so the reads must apply
 * the rules in force now before any filter or renderer sees a record. Otherwise `contains` is an
 * oracle for the secret the new rule hides, and a page string cut to its display length before
 * egress redaction shows a prefix the rule no longer matches. Through a real producer socket and
 * the real MCP SDK client; `observe logs`/`errors` fold in the scan worker, `before` and
 * `error_bundles` read on main.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { kindId } from '../../src/domain/kinds.js';
import { encodeAt } from '../../src/query/index.js';
import { readAll } from '../helpers/accounting.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { batch, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';

const SECRET = 'acme-SECRET1234567890';
const PREFIX = 'acme-SECRET12';
// the secret straddles observe's 500-character message cut: 13 of its characters before it
const LONG = `${'y'.repeat(487)}${SECRET} and the rest of a long line`;
const RULE = { action: 'redaction', redaction_action: 'add', name: 'acme_key', pattern: 'acme-[A-Z0-9]{16}' };

let server: App;
let agent: Client;
beforeAll(async () => {
  server = await startTestServer();
  agent = await connectAgent(server, tempStateDir('gasoline-readrules-'), 'readrules');
  const p = await Producer.connect(server.port);
  await p.hello('readrules', {});
  const ts = Date.now();
  p.send(batch(0, { logs: [
    { ts, level: 'error', type: 'console', message: `login failed with key ${SECRET} at step 2` },
    { ts: ts + 1, level: 'error', type: 'console', message: LONG },
  ] }));
  await p.ackFor(0);
  p.close();
});
afterAll(async () => {
  await agent.close();
  await server.close();
});

const observe = async (args: Record<string, unknown>): Promise<string> => (await callTool(agent, 'observe', { from: 'start', ...args })).text;
/** a cursor past the newest log: `before` pages back over everything, on main */
const beforeEnd = (): string => encodeAt([server.reader.latestOrd(kindId('logs'))]);

function expectNoPrefix(where: string, text: string): void {
  // any 8 characters of the secret from its start: what a cut would leave
  for (let n = 8; n <= SECRET.length; n++) expect(text, `${where} shows "${SECRET.slice(0, n)}"`).not.toContain(SECRET.slice(0, n));
}

describe('a redaction rule added at run time covers records stored before it', () => {
  it('before the rule, the stored text holds the secret and contains finds it (the baseline)', async () => {
    expect(JSON.stringify(readAll(server, 'logs'))).toContain(SECRET);
    expect(await observe({ what: 'logs', contains: PREFIX })).toMatch(/: 2 matched/);
  });

  it('after the rule, contains with a prefix of the secret finds nothing: scan worker (logs, errors) and main (before, error_bundles)', async () => {
    expect((await callTool(agent, 'configure', RULE)).isError).toBe(false);
    expect(await observe({ what: 'logs', contains: PREFIX })).toMatch(/: 0 matched/);
    expect(await observe({ what: 'errors', contains: PREFIX })).toMatch(/: 0 matched/);
    expect(await observe({ what: 'logs', contains: PREFIX, before: beforeEnd() })).toMatch(/: 0 shown/);
    expect(await observe({ what: 'error_bundles', contains: PREFIX })).toMatch(/no errors/);
    // the records are still there, with the secret redacted by the rule, not dropped
    const all = await observe({ what: 'logs', contains: 'login failed with key' });
    expect(all).toMatch(/: 1 matched/);
    expect(all).toContain('[REDACTED:acme_key] at step 2');
  });

  it('a secret straddling the display cut shows no prefix of it, in every view', async () => {
    const views = {
      logs: await observe({ what: 'logs', contains: 'yyyyyyyy' }),
      errors: await observe({ what: 'errors', contains: 'yyyyyyyy' }),
      before: await observe({ what: 'logs', contains: 'yyyyyyyy', before: beforeEnd() }),
      error_bundles: await observe({ what: 'error_bundles', contains: 'yyyyyyyy' }),
      summary: await observe({ what: 'summary' }),
    };
    for (const [view, text] of Object.entries(views)) {
      if (view !== 'summary') expect(text, view).toContain('yyyyyyyy');
      expectNoPrefix(view, text);
    }
  });

  it('removing the rule shows the stored text again: ingest-time data was never changed, only reads', async () => {
    expect((await callTool(agent, 'configure', { action: 'redaction', redaction_action: 'remove', name: 'acme_key' })).isError).toBe(false);
    const r = await observe({ what: 'logs', contains: PREFIX });
    expect(r).toMatch(/: 2 matched/);
    expect(r).toContain(`login failed with key ${SECRET} at step 2`);
    expect(await observe({ what: 'logs', contains: PREFIX, before: beforeEnd() })).toMatch(/: 2 shown/);
  });
});
