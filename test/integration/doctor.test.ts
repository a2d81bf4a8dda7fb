/**
 * `gasoline doctor` as a person runs it (the real bin, output on stderr, stdout empty): against
 * nothing on the port, against a real daemon, against a port held by something else, and against
 * a state dir and config made wrong on purpose. Every failure names its fix.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, health, runGasolineAsync, sandbox, startServer, type Sandbox } from '../helpers/bridge.js';
import { freePort } from '../helpers/net.js';
import { readSecret } from '../../src/pairing/index.js';
import { Producer } from '../helpers/producer.js';
import { waitFor } from '../helpers/wait-for.js';

const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const sb of boxes.splice(0)) await cleanup(sb);
});

async function box(): Promise<Sandbox> {
  const sb = sandbox(await freePort());
  boxes.push(sb);
  return sb;
}

/** the line of one check: "  ok    name  detail" or "  FAIL  name  detail" */
const line = (err: string, name: string): string => err.split('\n').find((l) => new RegExp(`^  (ok  |FAIL|-   )  ${name}`).test(l)) ?? `(no ${name} line in)\n${err}`;

describe('gasoline doctor', () => {
  it('with nothing on the port: passes, the daemon checks skipped; stdout stays empty', async () => {
    const sb = await box();
    const r = await runGasolineAsync(['doctor', ...sb.args]);
    expect(r.stdout).toBe('');
    expect(r.code, r.stderr).toBe(0);
    expect(line(r.stderr, 'node')).toMatch(/^ {2}ok .*native uWebSockets\.js binary loads/);
    expect(line(r.stderr, 'memory')).toMatch(process.platform === 'linux' && process.arch === 'x64' ? /^ {2}ok .*malloc_trim loads/ : /^ {2}- /);
    expect(line(r.stderr, 'scheduling')).toMatch(process.platform === 'linux' && process.arch === 'x64' ? /^ {2}ok .*thread-policy addon loads/ : /^ {2}- /);
    expect(line(r.stderr, 'redaction')).toMatch(/^ {2}ok /);
    expect(line(r.stderr, `port ${sb.port}`)).toMatch(/^ {2}ok .*free/);
    expect(line(r.stderr, 'daemon')).toMatch(/^ {2}- .*none runs/);
    expect(line(r.stderr, 'extension')).toMatch(/^ {2}- /);
    expect(line(r.stderr, 'transport')).toMatch(/^ {2}- /);
    expect(r.stderr).toMatch(/all passed: \d+ ok, 0 failed/);
  });

  it('against a real daemon: its version, its token 0600; the extension not connected fails with where to load it, then passes once a producer named extension is there', async () => {
    const sb = await box();
    startServer(sb);
    await waitFor('the daemon', () => health(sb.port), 20_000);
    const r = await runGasolineAsync(['doctor', ...sb.args]);
    expect(r.stdout).toBe('');
    expect(line(r.stderr, `port ${sb.port}`)).toMatch(/^ {2}ok .*gasoline's \(server, pid \d+\)/);
    expect(line(r.stderr, 'daemon')).toMatch(/^ {2}ok +daemon +version \d+\.\d+\.\d+, pid \d+/);
    expect(line(r.stderr, 'token')).toMatch(/^ {2}ok .*daemon-\d+\.token: 0600/);
    // issue 19 item 7: the side panel's door answers initialize, the daemon's redaction policy is loaded
    expect(line(r.stderr, 'transport')).toMatch(/^ {2}ok +transport +\/mcp initialize answered in \d+ ms \(protocol \d{4}-\d{2}-\d{2}\)/);
    expect(line(r.stderr, 'policy')).toMatch(/^ {2}ok +policy +redaction policy loaded: \d+ built-in \+ 0 rules of yours, rules version 0/);
    expect(line(r.stderr, 'state dir')).toMatch(/^ {2}ok /);
    expect(line(r.stderr, 'extension')).toMatch(/^ {2}FAIL +extension +not connected/);
    expect(r.stderr).toMatch(/fix: load it in Chrome: chrome:\/\/extensions .*extension\/dist/);
    expect(r.code).toBe(1);

    const p = await Producer.connect(sb.port);
    try {
      await p.hello('doctor-test', { client: 'extension', version: '0.1.0' });
      await waitFor('the extension in /health', async () => ((await health(sb.port))?.extension as { connected?: boolean } | undefined)?.connected, 10_000);
      const again = await runGasolineAsync(['doctor', ...sb.args]);
      expect(line(again.stderr, 'extension')).toMatch(/^ {2}ok +extension +connected \(1 producer\)/);
      // connected is not paired: that producer proved nothing (issue 19)
      expect(line(again.stderr, 'pairing')).toMatch(/^ {2}FAIL +pairing +an extension is connected but did not prove pairing.*0 verified, 1 unverified/);
      expect(again.stderr).toContain(`fix: gasoline pair --port ${sb.port}`);
      expect(again.code).toBe(1);
    } finally {
      p.close();
    }
    const paired = await Producer.connect(sb.port);
    try {
      await paired.hello('doctor-paired', { client: 'extension', version: '0.1.0', key: readSecret(sb.stateDir)!.key });
      await waitFor('a verified extension in /health', async () => ((await health(sb.port))?.extension as { paired?: boolean } | undefined)?.paired, 10_000);
      const third = await runGasolineAsync(['doctor', ...sb.args]);
      expect(line(third.stderr, 'pairing')).toMatch(/^ {2}ok +pairing +the extension is paired and proved it \(1 verified, 0 unverified/);
      expect(third.code, third.stderr).toBe(0);
    } finally {
      paired.close();
    }
  });

  it('a port held by something else, a state dir gone wide, a redaction rule that does not compile: each fails with its fix', async () => {
    const sb = await box();
    const sockets = new Set<Socket>();
    const foreign: Server = createServer((s) => {
      sockets.add(s);
      s.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
    });
    await new Promise<void>((r) => foreign.listen(sb.port, '127.0.0.1', () => r()));
    try {
      mkdirSync(sb.stateDir, { recursive: true });
      chmodSync(sb.stateDir, 0o755);
      writeFileSync(join(sb.stateDir, 'notes.json'), '{}', { mode: 0o644 });
      chmodSync(join(sb.stateDir, 'notes.json'), 0o644);
      const bad = join(sb.dir, 'bad.json');
      writeFileSync(bad, JSON.stringify({ redaction: { rules: [{ name: 'broken', pattern: '(unclosed' }] } }));
      const r = await runGasolineAsync(['doctor', '--port', String(sb.port), '--state-dir', sb.stateDir, '--config', bad]);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(1);
      expect(line(r.stderr, 'config')).toMatch(/^ {2}FAIL .*broken/);
      expect(r.stderr).toContain('fix: correct the values named');
      expect(line(r.stderr, 'state dir')).toMatch(/^ {2}FAIL .*wider than 0700\/0600: .*\(755\).*notes\.json \(644\)/);
      expect(r.stderr).toContain(`fix: chmod -R go-rwx ${sb.stateDir} && chmod 700 ${sb.stateDir}`);
      expect(line(r.stderr, `port ${sb.port}`)).toMatch(/^ {2}FAIL .*not gasoline/);
      expect(r.stderr).toContain(`lsof -iTCP:${sb.port}`);
      expect(r.stderr).toMatch(/\d+ failed: /);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => foreign.close(() => r()));
    }
  });

  it('usage: an unknown flag exits 2; --help prints its own text', async () => {
    const bad = await runGasolineAsync(['doctor', '--fast']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Usage: gasoline doctor');
    const help = await runGasolineAsync(['doctor', '--help']);
    expect(help.code).toBe(0);
    expect(help.stderr).toContain('Usage: gasoline doctor');
    expect(help.stdout).toBe('');
  });
});
