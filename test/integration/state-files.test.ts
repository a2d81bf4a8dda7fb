/**
 * Issue #18 item 6: the state directory and what we write in it are ours alone (0700 / 0600),
 * whatever the umask, and startup repairs or refuses an existing one. The real process (dist/,
 * `pnpm build` first) under a shell's umask, driven by the SDK's own client.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';

const BIN = fileURLToPath(new URL('../../bin/gasoline', import.meta.url));
const mode = (p: string): string => (statSync(p).mode & 0o777).toString(8);

const env = (port: number, stateDir: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: '/tmp/gasoline-test-home',
  GASOLINE_STATE_DIR: stateDir,
  GASOLINE_THREADS: '1',
  GASOLINE_PORT: String(port),
  GASOLINE_LOG_LEVEL: 'warn',
});

/** the real bin under `umask`, through a shell so the mask is the process's from its first line */
const underUmask = (umask: string) => ({ command: 'sh', args: ['-c', `umask ${umask} && exec "$0" "$1" "$2"`, process.execPath, BIN, '--standalone'] });

describe('state directory modes', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function connect(umask: string, stateDir: string): Promise<{ client: Client; stderr: () => string }> {
    const transport = new StdioClientTransport({ ...underUmask(umask), env: env(await freePort(), stateDir), stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: 'modes', version: '1' });
    cleanup.push(async () => {
      const pid = transport.pid;
      await client.close().catch(() => undefined);
      if (pid) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  function tempRoot(): string {
    const root = mkdtempSync(join(tmpdir(), 'gasoline-modes-'));
    cleanup.push(() => rmSync(root, { recursive: true, force: true }));
    return root;
  }

  it.each(['000', '022'])('under umask %s the state dir and clients/ are 0700 and client files (the store) 0600', async (umask) => {
    const stateDir = join(tempRoot(), 'state');
    const { client } = await connect(umask, stateDir);
    const r = await client.callTool({ name: 'configure', arguments: { action: 'store', store_action: 'set', key: 'note', value: 'private' } });
    expect((r.content as Array<{ text: string }>)[0]!.text).toBe('stored "note"');
    expect(mode(stateDir)).toBe('700');
    // the store is part of the client's state file (#16), written at once on a set
    expect(mode(join(stateDir, 'clients'))).toBe('700');
    const all = readdirSync(join(stateDir, 'clients'));
    // the temp file was renamed into place: nothing else is left behind but the client's trail of calls
    const files = all.filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect(all.filter((f) => !f.endsWith('.json') && !f.endsWith('.jsonl'))).toEqual([]);
    for (const f of all) expect(mode(join(stateDir, 'clients', f)), f).toBe('600');
    // a second write replaces the file and keeps the mode
    await client.callTool({ name: 'configure', arguments: { action: 'store', store_action: 'set', key: 'other', value: 'x' } });
    expect(mode(join(stateDir, 'clients', files[0]!))).toBe('600');
  }, 30_000);

  it('a pre-existing 0777 state dir (0777 store/, 0666 files) is repaired at startup', async () => {
    const stateDir = join(tempRoot(), 'state');
    mkdirSync(join(stateDir, 'store'), { recursive: true });
    writeFileSync(join(stateDir, 'store', 'old.json'), '{"k":"v"}');
    writeFileSync(join(stateDir, 'stray.txt'), 'x');
    chmodSync(stateDir, 0o777);
    chmodSync(join(stateDir, 'store'), 0o777);
    chmodSync(join(stateDir, 'store', 'old.json'), 0o666);
    chmodSync(join(stateDir, 'stray.txt'), 0o644);
    const { client, stderr } = await connect('000', stateDir);
    await client.listTools();
    expect(mode(stateDir)).toBe('700');
    expect(mode(join(stateDir, 'store'))).toBe('700');
    expect(mode(join(stateDir, 'store', 'old.json'))).toBe('600');
    expect(mode(join(stateDir, 'stray.txt'))).toBe('600');
    expect(stderr()).toContain('set to 0700');
  }, 30_000);

  // only root can give a directory to another user; a non-root run has nothing to set this up with
  it.skipIf(process.getuid?.() !== 0)('a state dir owned by another user is refused with exit 4 and a clear message', async () => {
    const stateDir = join(tempRoot(), 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, 54321, 54321);
    const child = spawn('sh', underUmask('022').args, { env: env(await freePort(), stateDir), stdio: ['pipe', 'pipe', 'pipe'] });
    cleanup.push(() => void child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(4);
    expect(err).toContain(`state directory ${stateDir}`);
    expect(err).toContain('belongs to uid 54321');
    expect(err).toContain('--state-dir');
    expect(out).toBe('');
  }, 30_000);
});
