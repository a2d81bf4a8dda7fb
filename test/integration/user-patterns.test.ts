/**
 * Issue #18 item 1: one tool call must not hang the whole process. A user pattern (noise rule,
 * redaction rule, config file) that backtracks catastrophically on a backtracking engine used to
 * freeze main: the tool call never answered, /health and SIGTERM went dead. Everything here runs
 * the real process (a hang stalls the child, never vitest), through the real MCP SDK client over
 * stdio and a real producer WebSocket; every call and every /health read has a deadline.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { tempStateDir } from '../helpers/state-dir.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
/** a tool call on a linear-time engine answers in milliseconds; a hang would take for ever */
const CALL_MS = 5000;
const EVIL = ['(?:a|a)+$', '(a|aa)+$', '(a|a?)+$', '(.|a)+$'];

function env(port: number, extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempStateDir('gasoline-patterns-');
  return { PATH: process.env.PATH ?? '', HOME: dir, GASOLINE_STATE_DIR: dir, GASOLINE_THREADS: '1', GASOLINE_PORT: String(port), GASOLINE_LOG_LEVEL: 'warn', ...extra };
}

const live: number[] = [];
afterEach(() => {
  // a hung process ignores SIGTERM (the attack): SIGKILL so no test leaves one behind
  for (const pid of live.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

async function start(port: number): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--standalone'], env: env(port), stderr: 'pipe' });
  const client = new Client({ name: 'patterns', version: '1' });
  await client.connect(transport);
  live.push(transport.pid!);
  // initialize is answered before the engine loads (src/mcp/early-stdio.ts); the tool list comes
  // from the server itself, which starts once the ingest port listens
  await client.listTools();
  return client;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: CALL_MS });
  return { text: (r.content as Array<{ text: string }>).map((x) => x.text).join('\n'), isError: r.isError === true };
}

/** /health answers within its own deadline, or the test fails naming it */
async function healthy(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
  expect(res.status).toBe(200);
}

describe('user patterns cannot hang the process (#18 item 1)', () => {
  it('noise_rule add answers at once for patterns that backtrack catastrophically, and /health stays up', async () => {
    const port = await freePort();
    const client = await start(port);
    for (const pattern of EVIL) {
      const [r] = await Promise.all([call(client, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern }), healthy(port)]);
      // a linear-time engine takes them as they are: they are slow only on a backtracking engine
      expect(r.isError, r.text).toBe(false);
      expect(r.text).toContain('added noise rule');
    }
    await healthy(port);
    await client.close();
  }, 40_000);

  it('redaction add answers at once; a pattern that matches the empty string is refused with pattern_refused', async () => {
    const port = await freePort();
    const client = await start(port);
    // refusals first: once (.|a)+$ is a rule, it redacts every answer line, these included
    for (const pattern of ['(?:)', 'a*', 'x?', '(a)\\1', '(?=a)b', '(?<!a)b']) {
      const r = await call(client, 'configure', { action: 'redaction', redaction_action: 'add', name: 'refused', pattern });
      expect(r.isError, pattern).toBe(true);
      expect(r.text, pattern).toMatch(/^pattern_refused: /);
    }
    const backref = await call(client, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: '(a)\\1' });
    expect(backref.text).toMatch(/^pattern_refused: backreference/);
    for (const [i, pattern] of EVIL.entries()) {
      const [r] = await Promise.all([call(client, 'configure', { action: 'redaction', redaction_action: 'add', name: `evil_${i}`, pattern }), healthy(port)]);
      // (a|a?)+$ matches "" at the end of any text: as a redaction rule it would mark every string
      if (pattern === '(a|a?)+$') {
        expect(r.isError).toBe(true);
        expect(r.text).toMatch(/^pattern_refused: .*empty/);
      } else expect(r.isError, r.text).toBe(false);
    }
    await healthy(port);
    await client.close();
  }, 40_000);

  it('(.|a)+$ as noise and redaction rule: a page logging "a"×29+"\\n", then observe logs (before) and error_bundles answer at once', async () => {
    const port = await freePort();
    const client = await start(port);
    expect((await call(client, 'configure', { action: 'noise_rule', noise_action: 'add', field: 'message', pattern: '(.|a)+$' })).isError).toBe(false);
    const p = await Producer.connect(port);
    await p.hello('patterns-page');
    const evil = `${'a'.repeat(29)}\n`;
    const longer = `${'a'.repeat(5000)}\n`;
    p.send(batch(0, { logs: [logRecord(1, { message: evil }), logRecord(2, { message: longer }), logRecord(3, { message: 'bbb' })] }));
    await p.ackFor(0);
    for (const args of [{ what: 'logs', before: 'zzzz' }, { what: 'error_bundles', from: 'start' }, { what: 'logs', from: 'start' }, { what: 'errors', from: 'start' }]) {
      const t0 = Date.now();
      const [r] = await Promise.all([call(client, 'observe', args), healthy(port)]);
      expect(r.isError, r.text).toBe(false);
      expect(Date.now() - t0, JSON.stringify(args)).toBeLessThan(2000);
    }
    // and as a redaction rule at egress (main) and ingest (worker): still answers
    expect((await call(client, 'configure', { action: 'redaction', redaction_action: 'add', name: 'dot_or_a', pattern: '(.|a)+$' })).isError).toBe(false);
    p.send(batch(1, { logs: [logRecord(4, { message: evil }), logRecord(5, { message: longer })] }));
    await p.ackFor(1);
    const [r] = await Promise.all([call(client, 'observe', { what: 'logs', from: 'start', fold: false }), healthy(port)]);
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('[REDACTED:dot_or_a]');
    p.close();
    await client.close();
  }, 40_000);

  it('a config file with a refused redaction pattern fails startup at once, naming the rule; one that only backtracks starts', async () => {
    const dir = tempStateDir('gasoline-patterns-cfg-');
    const run = async (pattern: string): Promise<{ code: number | null; stderr: string; ms: number }> => {
      const file = join(dir, `cfg-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ redaction: { rules: [{ name: 'mine', pattern }] } }));
      const port = await freePort();
      const t0 = Date.now();
      const child = spawn(process.execPath, [BIN, '--standalone'], { env: env(port, { GASOLINE_CONFIG: file }), stdio: ['pipe', 'pipe', 'pipe'] });
      live.push(child.pid!);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
      const up = (async () => {
        for (;;) {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(500) });
            if (res.status === 200) return 'up' as const;
          } catch {
            /* not listening yet */
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const first = await Promise.race([exited.then((c) => ({ code: c })), up.then(() => ({ code: -1 })), new Promise<{ code: number }>((r) => setTimeout(() => r({ code: -2 }), 10_000))]);
      child.stdin.end();
      return { code: first.code, stderr, ms: Date.now() - t0 };
    };
    const bad = await run('(a)\\1');
    expect(bad.code, bad.stderr).not.toBe(-2); // not hung
    expect(bad.code).not.toBe(-1); // did not start
    expect(bad.stderr).toContain('mine');
    expect(bad.stderr).toContain('backreferences');
    const empty = await run('x?');
    expect([0, -1, -2]).not.toContain(empty.code);
    expect(empty.stderr).toContain('empty');
    const evil = await run('(?:a|a)+$');
    expect(evil.code, evil.stderr).toBe(-1); // started and serves /health
  }, 60_000);
});
