/**
 * A bridge reads its options without the schema (src/bridge/options.ts); whatever it accepts, the
 * CLI's schema must read the same way, and whatever the schema refuses it must hand to the CLI
 * (null), so a mistake is reported by one code path. Held side by side over a table of inputs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bridgeOptions, isStandalone } from '../../../src/bridge/options.js';
import { parseCli } from '../../../src/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'gasoline-opts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (c: unknown): string => {
  const f = join(dir, `${n++}.json`);
  writeFileSync(f, typeof c === 'string' ? c : JSON.stringify(c));
  return f;
};

type Case = [string, string[], NodeJS.ProcessEnv];
const base: NodeJS.ProcessEnv = { HOME: '/home/u' };

const cases: Case[] = [
  ['nothing', [], base],
  ['port flag', ['--port', '7000'], base],
  ['port env', [], { ...base, GASOLINE_PORT: '7001' }],
  ['flag over env', ['--port', '7002'], { ...base, GASOLINE_PORT: '7001' }],
  ['port 0', ['--port', '0'], base],
  ['port too big', ['--port', '70000'], base],
  ['port not a number', ['--port', 'x'], base],
  ['port fraction', ['--port', '7.5'], base],
  ['port empty', ['--port', ''], base],
  ['port env bad', [], { ...base, GASOLINE_PORT: 'seven' }],
  ['state dir flag', ['--state-dir', '/tmp/s'], base],
  ['state dir env', [], { ...base, GASOLINE_STATE_DIR: '/tmp/e' }],
  ['xdg', [], { ...base, XDG_STATE_HOME: '/tmp/xdg' }],
  ['client id', ['--client-id', 'agent.a-1'], base],
  ['client id bad', ['--client-id', 'a b'], base],
  ['client id env', [], { ...base, GASOLINE_CLIENT_ID: 'from-env' }],
  ['client id too long', ['--client-id', 'x'.repeat(65)], base],
  ['log level', ['--log-level', 'debug'], base],
  ['log level bad', ['--log-level', 'loud'], base],
  ['log level env', [], { ...base, GASOLINE_LOG_LEVEL: 'warn' }],
  ['connect', ['--connect'], base],
  ['replace', ['--replace'], base],
  ['replace and connect', ['--replace', '--connect'], base],
  ['server', ['--server'], base],
  ['standalone', ['--standalone'], base],
  ['two modes', ['--connect', '--server'], base],
  ['mode env server', [], { ...base, GASOLINE_MODE: 'server' }],
  ['mode env connect', [], { ...base, GASOLINE_MODE: 'connect' }],
  ['mode env bad', [], { ...base, GASOLINE_MODE: 'stop' }],
  ['server env', [], { ...base, GASOLINE_SERVER: 'true' }],
  ['server env false', [], { ...base, GASOLINE_SERVER: 'no' }],
  ['server env bad', [], { ...base, GASOLINE_SERVER: 'maybe' }],
  ['threads', ['--threads', '2'], base],
  ['threads bad', ['--threads', 'many'], base],
  ['client ttl', ['--client-ttl', '30m'], base],
  ['client ttl bad', ['--client-ttl', 'soon'], base],
  ['client ttl env bad', [], { ...base, GASOLINE_CLIENT_TTL: 'soon' }],
  ['unknown flag', ['--nope'], base],
  ['positional', ['serve'], base],
  ['help', ['--help'], base],
  ['config file', ['--config', file({ port: 7100, state_dir: '/tmp/f', client_id: 'filed', log_level: 'error' })], base],
  ['config file under env', ['--config', file({ port: 7100 })], { ...base, GASOLINE_PORT: '7200' }],
  ['config file via env', [], { ...base, GASOLINE_CONFIG: file({ port: 7300 }) }],
  ['config file mode', ['--config', file({ mode: 'standalone' })], base],
  ['config file mode connect', ['--config', file({ mode: 'connect' })], base],
  ['config file bad port', ['--config', file({ port: 'x' })], base],
  ['config file not json', ['--config', file('{oops')], base],
  ['config file array', ['--config', file([1])], base],
  ['config file missing', ['--config', join(dir, 'missing.json')], base],
  ['standalone env', [], { ...base, GASOLINE_MODE: 'standalone' }],
  ['standalone with port', ['--standalone', '--port', '7400'], base],
  ['standalone by config file', ['--config', file({ mode: 'standalone', pool: { threads: 1 } })], base],
  ['standalone and help', ['--standalone', '--help'], base],
];

describe('a bridge reads its options as the schema does', () => {
  it.each(cases)('%s', (_name, argv, env) => {
    const mine = bridgeOptions(argv, env);
    let theirs: ReturnType<typeof parseCli> | null = null;
    try {
      theirs = parseCli(argv, env);
    } catch {
      theirs = null;
    }
    const bridgeMode = theirs && !theirs.help && !theirs.version && (theirs.config.mode === 'bridge' || theirs.config.mode === 'connect');
    if (!bridgeMode) {
      // not a bridge, or a mistake the CLI reports: the bridge's reader must decline it
      expect(mine).toBeNull();
      return;
    }
    // a bridge the schema accepts: the reader takes it (it may decline only what the schema refuses)
    expect(mine).not.toBeNull();
    const c = theirs!.config;
    expect(mine).toEqual({ mode: c.mode, port: c.port, stateDir: c.state_dir, clientId: c.client_id, logLevel: c.log_level, replace: theirs!.replace, daemonArgs: theirs!.daemonArgs });
  });
});

describe('a standalone is told apart early only when the schema would agree', () => {
  it.each(cases)('%s', (_name, argv, env) => {
    let mode: string | null = null;
    try {
      const p = parseCli(argv, env);
      mode = p.help || p.version ? null : p.config.mode;
    } catch {
      mode = null;
    }
    // an early "yes" must be a standalone the schema accepts; a "no" only costs the head start
    if (isStandalone(argv, env)) expect(mode).toBe('standalone');
    if (mode === 'standalone') expect(isStandalone(argv, env)).toBe(true);
  });
});


describe('subcommands are the CLI\'s, never a bridge\'s (issue 21)', () => {
  it.each([
    ['install cursor', ['install', 'cursor']],
    ['install codex --dry-run', ['install', 'codex', '--dry-run']],
    ['doctor', ['doctor']],
    ['doctor --port 7000', ['doctor', '--port', '7000']],
    ['doctor with GASOLINE_MODE=standalone', ['doctor']],
  ])('%s → null', (_name, argv) => {
    const env = { GASOLINE_MODE: 'standalone' };
    expect(bridgeOptions(argv, {})).toBeNull();
    expect(isStandalone(argv, env)).toBe(false);
  });
  it('a positional elsewhere is still refused by the bridge reader and the schema alike', () => {
    expect(bridgeOptions(['--port', '7000', 'install'], {})).toBeNull();
    expect(() => parseCli(['--port', '7000', 'install'], {})).toThrow();
  });
});
