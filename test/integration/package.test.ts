/**
 * The npm package (issue 21): `npm pack` gives a tarball that installs with `npm install -g` and
 * runs with no build step: the installed bin answers --version, serves MCP initialize/tools/list
 * over stdio (its native uWebSockets.js binary loading from the aliased dependency), and writes a
 * client's config with `install cursor --dry-run` naming its own absolute path.
 *
 * The install needs the dependencies from the npm registry or npm's cache (pnpm's store is not
 * npm's). With neither, this test fails saying so; it never passes without installing.
 * `pnpm test` builds dist/ first, so the pack skips the prepack build (--ignore-scripts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** a cold npm cache fetches ~110 packages; a warm one installs in ~10 s */
const INSTALL_TIMEOUT_MS = 240_000;
const NETWORK = /ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|network|offline/i;

const work = mkdtempSync(join(tmpdir(), 'gasoline-package-'));
const prefix = join(work, 'prefix');
const home = join(work, 'home');
let tgz = '';
let bin = '';
let installMs = 0;

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeout?: number; cwd?: string } = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? work, env: opts.env ?? process.env, encoding: 'utf8', timeout: opts.timeout ?? 60_000 });
  if (r.error) throw r.error;
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** only what a person's shell would hand the bin: no test runner's variables */
const userEnv = (): NodeJS.ProcessEnv => ({ PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`, HOME: home, GASOLINE_STATE_DIR: join(work, 'state'), GASOLINE_THREADS: '1', GASOLINE_LOG_LEVEL: 'warn' });

beforeAll(() => {
  for (const f of ['dist/src/cli.js', 'dist/bridge-answers.json', 'dist/gasoline-extension.zip', 'extension/dist/manifest.json']) {
    if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run pnpm build first (pnpm test does)`);
  }
  const packed = run(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT });
  expect(packed.code, packed.err).toBe(0);
  tgz = join(work, (JSON.parse(packed.out) as Array<{ filename: string }>)[0]!.filename);
  const t0 = Date.now();
  const inst = run(NPM, ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', tgz], { timeout: INSTALL_TIMEOUT_MS, env: { ...process.env, HOME: process.env.HOME ?? home } });
  installMs = Date.now() - t0;
  if (inst.code !== 0) {
    if (NETWORK.test(inst.err)) throw new Error(`npm install of the tarball needs the npm registry or npm's cache, and has neither here:\n${inst.err.slice(-2000)}`);
    throw new Error(`npm install -g ${tgz} failed (${inst.code}):\n${inst.err.slice(-4000)}`);
  }
  bin = join(prefix, 'bin', 'gasoline');
}, INSTALL_TIMEOUT_MS + 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the npm package, installed from its tarball', () => {
  it('holds the compiled server, the recorded answers, the built extension and its zip; no sources or tests', () => {
    const list = run('tar', ['-tzf', tgz]).out.split('\n');
    for (const f of ['package/bin/gasoline', 'package/bin/package.json', 'package/dist/src/entry/early.cjs', 'package/dist/src/cli.js', 'package/dist/workers/ingest.js', 'package/dist/workers/scan.js', 'package/dist/bridge-answers.json', 'package/dist/gasoline-extension.zip', 'package/extension/dist/manifest.json', 'package/extension/dist/sw.js', 'package/native/linux-x64/malloc-trim.node', 'package/native/linux-x64/thread-policy.node', 'package/README.md']) {
      expect(list, f).toContain(f);
    }
    expect(list.filter((f) => /\.ts$|^package\/(test|bench|src|workers)\/|^package\/dist\/(test|bench)\//.test(f))).toEqual([]);
    // the zip is the built extension: every file of extension/dist in it
    const zipped = run('unzip', ['-Z1', join(prefix, 'lib', 'node_modules', 'gasoline', 'dist', 'gasoline-extension.zip')]);
    if (zipped.code === 0) expect(zipped.out.split('\n')).toContain('manifest.json');
  });

  it(`installs with runtime dependencies only, uWebSockets.js under its alias, with no build step`, () => {
    const installed = join(prefix, 'lib', 'node_modules', 'gasoline');
    const uws = JSON.parse(readFileSync(join(installed, 'node_modules', 'uWebSockets.js', 'package.json'), 'utf8')) as { name: string; version: string };
    expect(`npm:${uws.name}@${uws.version}`).toBe(pkg.dependencies['uWebSockets.js']);
    for (const dev of ['typescript', 'vitest', 'esbuild', '@biomejs/biome']) expect(existsSync(join(installed, 'node_modules', dev)), dev).toBe(false);
    // a figure for the report, not a gate: the registry's speed is not ours
    process.stderr.write(`package test: npm install -g of the tarball took ${installMs} ms\n`);
  });

  it('gasoline --version: the package version, on stderr', () => {
    const r = run(bin, ['--version'], { env: userEnv() });
    expect(r.code).toBe(0);
    expect(r.err.trim()).toBe(pkg.version);
    expect(r.out).toBe('');
  });

  it('MCP initialize and tools/list through the installed binary (--standalone)', async () => {
    const port = await freePort();
    const transport = new StdioClientTransport({ command: bin, args: ['--standalone', '--port', String(port)], env: userEnv() as Record<string, string>, stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: 'package-test', version: '1' });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()?.version).toBe(pkg.version);
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['analyze', 'configure', 'interact', 'observe']);
      // the engine itself started: ingest listens (the native uWS binary loaded from the alias)
      const r = await client.callTool({ name: 'configure', arguments: { action: 'health' } });
      const text = (r.content as Array<{ text: string }>)[0]!.text;
      expect(text, err).toMatch(new RegExp(`"port":\\s*${port}\\b`));
    } finally {
      await client.close();
    }
  }, 60_000);

  it('gasoline doctor: the installed native binaries load', () => {
    const r = run(bin, ['doctor', '--port', '1'], { env: userEnv() });
    expect(r.err).toMatch(/ok {4}node .*native uWebSockets\.js binary loads/);
    // and the malloc_trim and thread-policy addons, from the package's native/ (no build step on install)
    if (process.platform === 'linux' && process.arch === 'x64') expect(r.err).toMatch(/ok {4}memory .*malloc_trim loads/);
    if (process.platform === 'linux' && process.arch === 'x64') expect(r.err).toMatch(/ok +scheduling .*thread-policy addon loads/);
  });

  it('gasoline install cursor --dry-run: the change names the installed bin by its absolute path, and nothing is written', () => {
    const r = run(bin, ['install', 'cursor', '--dry-run'], { env: userEnv(), cwd: tmpdir() });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toContain(`would create ${join(home, '.cursor', 'mcp.json')}`);
    expect(r.err).toContain(JSON.stringify(join(prefix, 'lib', 'node_modules', 'gasoline', 'bin', 'gasoline')));
    expect(existsSync(join(home, '.cursor'))).toBe(false);
  });

  it('runs with npx from the tarball', () => {
    const r = run('npx', ['--yes', '--prefer-offline', '--package', tgz, 'gasoline', '--version'], { env: { ...process.env, npm_config_loglevel: 'error' }, timeout: INSTALL_TIMEOUT_MS });
    expect(r.code, r.err).toBe(0);
    expect(r.err.trim().split('\n').pop()).toBe(pkg.version);
  }, INSTALL_TIMEOUT_MS + 10_000);
});
