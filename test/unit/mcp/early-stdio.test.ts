/**
 * A standalone's first milliseconds (src/mcp/early-stdio.ts): the first initialize answered from
 * the recorded answers, and `decided`, which the engine's loading waits for (bin/gasoline). Also
 * the CommonJS bundle bin/gasoline requires (dist/src/entry/early.cjs, built by `pnpm build`):
 * the same answer from it proves its import.meta.url stand-in finds the recorded answers. Both
 * are the built files (`pnpm test` builds first): the answers are found beside dist/src.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BUNDLE = fileURLToPath(new URL('../../../dist/src/entry/early.cjs', import.meta.url));
// the built module: the recorded answers it reads are dist/bridge-answers.json, found from its own URL
const { earlyStdio } = (await import(new URL('../../../dist/src/mcp/early-stdio.js', import.meta.url).href)) as typeof import('../../../src/mcp/early-stdio.js');
const INIT = { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

function pipes(): { stdin: PassThrough; stdout: PassThrough; lines: () => string[] } {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (d: string) => (out += d));
  return { stdin, stdout, lines: () => out.split('\n').filter(Boolean) };
}

/** settled within a few turns of the event loop? */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('earlyStdio', () => {
  it('answers a plain initialize at once and then says it has decided', async () => {
    const { stdin, stdout, lines } = pipes();
    const e = earlyStdio(stdin, stdout);
    expect(await settled(e.decided)).toBe(false);
    stdin.write(`${JSON.stringify(INIT)}\n`);
    expect(await settled(e.decided)).toBe(true);
    expect(e.answeredId()).toBe(7);
    const answer = JSON.parse(lines()[0]!) as { id: number; result: { protocolVersion: string; serverInfo: { name: string } } };
    expect(answer.id).toBe(7);
    expect(answer.result.protocolVersion).toBe('2025-06-18');
    expect(answer.result.serverInfo.name).toBe('gasoline');
  });

  it('leaves any other first line to the server, decided all the same, and hands every byte back', async () => {
    const { stdin, stdout, lines } = pipes();
    const e = earlyStdio(stdin, stdout);
    stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"more":');
    expect(await settled(e.decided)).toBe(true);
    expect(e.answeredId()).toBeNull();
    expect(lines()).toEqual([]);
    e.handOver();
    expect(String(stdin.read())).toBe('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"more":');
  });

  it('a first line split across reads is decided at its newline, not before', async () => {
    const { stdin, stdout } = pipes();
    const e = earlyStdio(stdin, stdout);
    const line = JSON.stringify(INIT);
    stdin.write(line.slice(0, 20));
    expect(await settled(e.decided)).toBe(false);
    stdin.write(`${line.slice(20)}\n`);
    expect(await settled(e.decided)).toBe(true);
    expect(e.answeredId()).toBe(7);
  });

  it('is decided when stdin ends or the server takes over before any line', async () => {
    const a = pipes();
    const ended = earlyStdio(a.stdin, a.stdout);
    a.stdin.end();
    expect(await settled(ended.decided)).toBe(true);
    const b = pipes();
    const taken = earlyStdio(b.stdin, b.stdout);
    taken.handOver();
    expect(await settled(taken.decided)).toBe(true);
    expect(taken.answeredId()).toBeNull();
  });
});

describe('dist/src/entry/early.cjs (bin/gasoline requires it; built by `pnpm build`)', () => {
  it('is CommonJS exporting what bin/gasoline uses, and answers as the module does', async () => {
    expect(existsSync(BUNDLE), 'run `pnpm build` first').toBe(true);
    const m = createRequire(import.meta.url)(BUNDLE) as { bridgeOptions: unknown; isStandalone: unknown; earlyStdio: typeof earlyStdio };
    expect(typeof m.bridgeOptions).toBe('function');
    expect(typeof m.isStandalone).toBe('function');
    const fromBundle = pipes();
    const fromModule = pipes();
    const b = m.earlyStdio(fromBundle.stdin, fromBundle.stdout);
    const e = earlyStdio(fromModule.stdin, fromModule.stdout);
    fromBundle.stdin.write(`${JSON.stringify(INIT)}\n`);
    fromModule.stdin.write(`${JSON.stringify(INIT)}\n`);
    await b.decided;
    await e.decided;
    expect(b.answeredId()).toBe(7);
    expect(fromBundle.lines()).toEqual(fromModule.lines());
    expect(fromBundle.lines()).toHaveLength(1);
  });
});
