/** A few tests spawn the real bin/gasoline (compiled by `pnpm build`). */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { Producer, batch, logRecord } from '../helpers/producer.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function gasoline(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: '/tmp/gasoline-test-home', GASOLINE_STATE_DIR: tempStateDir(), GASOLINE_THREADS: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => out, stderr: () => err, exit };
}

describe('bin/gasoline', () => {
  it('--help explains usage and exits 0 without touching stdout', async () => {
    const r = gasoline(['--help']);
    expect((await r.exit).code).toBe(0);
    expect(r.stderr()).toContain('--server');
    expect(r.stderr()).toContain('GASOLINE_PORT');
    expect(r.stdout()).toBe('');
  });

  it('reports every configuration problem in one message and exits 2', async () => {
    const r = gasoline(['--server', '--port', '99999', '--threads', '0'], { GASOLINE_LOG_LEVEL: 'loud' });
    expect((await r.exit).code).toBe(2);
    const err = r.stderr();
    expect(err).toContain('port');
    expect(err).toContain('pool.threads');
    expect(err).toContain('log_level');
    expect(r.stdout()).toBe('');
  });

  it('refuses an unknown flag with exit 2', async () => {
    const r = gasoline(['--sever']);
    expect((await r.exit).code).toBe(2);
    expect(r.stderr()).toContain('--sever');
  });

  it('serves, says why a taken port fails (exit 3), and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const a = gasoline(['--server', '--port', String(port)]);
    await waitFor('listening on stderr', () => a.stderr().includes('listening'), 15_000);
    const b = gasoline(['--server', '--port', String(port)]);
    expect((await b.exit).code).toBe(3);
    expect(b.stderr().trim().split('\n')).toHaveLength(1);
    expect(b.stderr()).toContain(`port ${port}`);

    const p = await Producer.connect(port);
    await p.hello('proc-test');
    p.send(batch(0, { logs: [logRecord(1)] }));
    await p.ackFor(0);
    a.child.kill('SIGTERM');
    await p.closed();
    expect(p.closeCode).toBe(1001);
    const ex = await a.exit;
    expect(ex.code).toBe(0);
    expect(a.stdout()).toBe('');
  }, 30_000);

  it('exits at once on a second signal', async () => {
    const port = await freePort();
    const a = gasoline(['--server', '--port', String(port)], {});
    await waitFor('listening on stderr', () => a.stderr().includes('listening'), 15_000);
    a.child.kill('SIGINT');
    a.child.kill('SIGINT');
    const ex = await a.exit;
    expect([0, 1]).toContain(ex.code);
    expect(a.stdout()).toBe('');
  }, 30_000);
});
