/** `gasoline install <client>`: each client's format and place, merges that keep others, backups, dry runs. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLIENTS, findClient, pathContext } from '../../../src/install/clients.js';
import { BIN_PATH, runInstall } from '../../../src/install/index.js';
import { mergeToml, scanLines, tomlString } from '../../../src/install/toml-config.js';

let home: string;
let cwd: string;
let env: NodeJS.ProcessEnv;
let err: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'gasoline-install-home-'));
  cwd = mkdtempSync(join(tmpdir(), 'gasoline-install-proj-'));
  env = { HOME: home, XDG_CONFIG_HOME: '', CODEX_HOME: '', APPDATA: '' };
  err = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    err += String(s);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(home, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
});

const install = (...args: string[]): number => runInstall(args, env, cwd);
const json = (p: string): any => JSON.parse(readFileSync(p, 'utf8'));
const backups = (dir: string): string[] => readdirSync(dir).filter((n) => n.includes('.gasoline-backup-'));

/** python's tomllib, when this machine has it: a real TOML parser judging what we wrote */
function parseToml(text: string): any {
  const r = spawnSync('python3', ['-c', 'import sys,json,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'], { input: text, encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    if (r.error || /No module named/.test(r.stderr)) return undefined;
    throw new Error(`invalid TOML: ${r.stderr}\n${text}`);
  }
  return JSON.parse(r.stdout);
}

describe('each client in its own format and place', () => {
  const cases: Array<[string, string[], () => string, (f: string) => unknown]> = [
    ['claude', [], () => join(cwd, '.mcp.json'), (f) => json(f).mcpServers.gasoline],
    ['claude', ['--scope', 'user'], () => join(home, '.claude.json'), (f) => json(f).mcpServers.gasoline],
    ['cursor', [], () => join(home, '.cursor', 'mcp.json'), (f) => json(f).mcpServers.gasoline],
    ['cursor', ['--scope', 'project'], () => join(cwd, '.cursor', 'mcp.json'), (f) => json(f).mcpServers.gasoline],
    ['vscode', [], () => join(cwd, '.vscode', 'mcp.json'), (f) => json(f).servers.gasoline],
    ['windsurf', [], () => join(home, '.codeium', 'windsurf', 'mcp_config.json'), (f) => json(f).mcpServers.gasoline],
    ['gemini', [], () => join(home, '.gemini', 'settings.json'), (f) => json(f).mcpServers.gasoline],
    ['gemini', ['--scope', 'project'], () => join(cwd, '.gemini', 'settings.json'), (f) => json(f).mcpServers.gasoline],
  ];
  for (const [client, args, where, entry] of cases) {
    it(`${client} ${args.join(' ') || '(default scope)'}`, () => {
      expect(install(client, ...args)).toBe(0);
      const e = entry(where()) as Record<string, unknown>;
      expect(e.command).toBe(BIN_PATH);
      expect(e.args).toEqual([]);
      if (client === 'vscode') expect(e.type).toBe('stdio');
      expect(err).toContain(where());
    });
  }

  it('the command is the absolute bin/gasoline, which exists and runs', () => {
    expect(BIN_PATH.startsWith('/')).toBe(true);
    expect(existsSync(BIN_PATH)).toBe(true);
  });

  it('vscode user scope is the profile folder of this platform', () => {
    const c = findClient('vscode')!;
    expect(c.path('user', { ...pathContext(env, cwd), platform: 'linux' })).toBe(join(home, '.config', 'Code', 'User', 'mcp.json'));
    expect(c.path('user', { ...pathContext(env, cwd), platform: 'darwin' })).toBe(join(home, 'Library', 'Application Support', 'Code', 'User', 'mcp.json'));
  });

  it('codex → $CODEX_HOME/config.toml (else ~/.codex), a [mcp_servers.gasoline] table', () => {
    expect(install('codex')).toBe(0);
    const text = readFileSync(join(home, '.codex', 'config.toml'), 'utf8');
    expect(text).toBe(`[mcp_servers.gasoline]\ncommand = ${tomlString(BIN_PATH)}\nargs = []\n`);
    const parsed = parseToml(text);
    if (parsed) expect(parsed.mcp_servers.gasoline).toEqual({ command: BIN_PATH, args: [] });
    env.CODEX_HOME = join(home, 'elsewhere');
    expect(install('codex')).toBe(0);
    expect(existsSync(join(home, 'elsewhere', 'config.toml'))).toBe(true);
  });

  it('aliases: claude-code, code, gemini-cli', () => {
    expect(findClient('claude-code')?.name).toBe('claude');
    expect(findClient('Code')?.name).toBe('vscode');
    expect(findClient('gemini-cli')?.name).toBe('gemini');
  });
});

describe('merging into a file that exists', () => {
  it('keeps other servers and other keys, in their order and indentation; backs the old file up first with its mode', () => {
    const f = join(home, '.cursor', 'mcp.json');
    mkdirSync(join(home, '.cursor'));
    const before = `{\n    "theme": "dark",\n    "mcpServers": {\n        "other": { "command": "npx", "args": ["-y", "other-mcp"] }\n    },\n    "zz": [1, 2]\n}\n`;
    writeFileSync(f, before);
    chmodSync(f, 0o600);
    expect(install('cursor')).toBe(0);
    const after = json(f);
    expect(Object.keys(after)).toEqual(['theme', 'mcpServers', 'zz']);
    expect(after.mcpServers.other).toEqual({ command: 'npx', args: ['-y', 'other-mcp'] });
    expect(after.mcpServers.gasoline.command).toBe(BIN_PATH);
    expect(readFileSync(f, 'utf8')).toContain('\n    "theme"');
    expect(statSync(f).mode & 0o777).toBe(0o600);
    const [b] = backups(join(home, '.cursor'));
    expect(readFileSync(join(home, '.cursor', b!), 'utf8')).toBe(before);
    expect(statSync(join(home, '.cursor', b!)).mode & 0o777).toBe(0o600);
    expect(err).toContain(b);
  });

  it('replaces an older gasoline entry in place; a second run changes nothing and writes no backup', () => {
    const f = join(cwd, '.mcp.json');
    writeFileSync(f, JSON.stringify({ mcpServers: { a: { command: 'a' }, gasoline: { command: '/old/bin/gasoline' }, z: { command: 'z' } } }));
    expect(install('claude')).toBe(0);
    expect(Object.keys(json(f).mcpServers)).toEqual(['a', 'gasoline', 'z']);
    expect(json(f).mcpServers.gasoline.command).toBe(BIN_PATH);
    expect(backups(cwd)).toHaveLength(1);
    err = '';
    expect(install('claude')).toBe(0);
    expect(err).toContain('unchanged');
    expect(backups(cwd)).toHaveLength(1);
  });

  it('a symlinked config is changed where it lives, the link kept', () => {
    const real = join(home, 'dotfiles-mcp.json');
    writeFileSync(real, '{"mcpServers": {}}');
    mkdirSync(join(home, '.cursor'));
    symlinkSync(real, join(home, '.cursor', 'mcp.json'));
    expect(install('cursor')).toBe(0);
    expect(json(real).mcpServers.gasoline.command).toBe(BIN_PATH);
  });

  it('a JSON file with comments is refused, untouched, with the entry to paste', () => {
    mkdirSync(join(cwd, '.vscode'));
    const f = join(cwd, '.vscode', 'mcp.json');
    const before = '{\n  // my servers\n  "servers": {}\n}\n';
    writeFileSync(f, before);
    expect(install('vscode')).toBe(1);
    expect(readFileSync(f, 'utf8')).toBe(before);
    expect(err).toContain('"servers"');
    expect(err).toContain('"type": "stdio"');
    expect(backups(join(cwd, '.vscode'))).toEqual([]);
  });

  it('"mcpServers" that is not an object is refused', () => {
    writeFileSync(join(cwd, '.mcp.json'), '{"mcpServers": []}');
    expect(install('claude')).toBe(1);
    expect(err).toContain('"mcpServers" is not an object');
  });
});

describe('--dry-run', () => {
  it('prints the change and writes nothing: no file, no backup, no directory', () => {
    expect(install('cursor', '--dry-run')).toBe(0);
    expect(existsSync(join(home, '.cursor'))).toBe(false);
    expect(err).toContain('would create');
    expect(err).toContain(`+       "command": ${JSON.stringify(BIN_PATH)}`);
  });

  it('on an existing file: the diff shows the added lines, the file keeps its bytes', () => {
    const f = join(home, '.gemini', 'settings.json');
    mkdirSync(join(home, '.gemini'));
    const before = JSON.stringify({ theme: 'x', mcpServers: { other: { command: 'o' } } }, null, 2);
    writeFileSync(f, before);
    expect(install('gemini', '--dry-run')).toBe(0);
    expect(readFileSync(f, 'utf8')).toBe(before);
    expect(backups(join(home, '.gemini'))).toEqual([]);
    expect(err).toContain('would change');
    expect(err).toMatch(/\+ {5}"gasoline": \{/);
    expect(err).toContain('    "other"');
  });
});

describe('usage', () => {
  it('an unknown client exits 2 with the list of known ones', () => {
    expect(install('notepad')).toBe(2);
    for (const c of CLIENTS) expect(err).toContain(c.name);
  });
  it('no client, two clients, a bad scope, a scope the client lacks, an unknown flag', () => {
    expect(install()).toBe(2);
    expect(install('cursor', 'codex')).toBe(2);
    expect(install('cursor', '--scope', 'global')).toBe(2);
    expect(install('cursor', '--force')).toBe(2);
    expect(install('windsurf', '--scope', 'project')).toBe(1);
    expect(err).toContain('Windsurf has no project config file');
  });
});

describe('the TOML table, every other byte kept', () => {
  const e = { command: '/opt/gasoline/bin/gasoline', args: [] };
  const table = '[mcp_servers.gasoline]\ncommand = "/opt/gasoline/bin/gasoline"\nargs = []\n';

  it('appends after a file with other tables, comments and multi-line values, leaving them byte for byte', () => {
    const before = [
      '# my codex config',
      'model = "o3"  # a comment with [brackets]',
      'notes = """',
      '[mcp_servers.gasoline]',
      'not a table: inside a string',
      '"""',
      'list = [',
      '  ["mcp_servers", "gasoline"],',
      '  "x",',
      ']',
      '',
      '[mcp_servers.other]',
      "command = 'npx'",
      'args = ["-y", "other"]',
      '',
    ].join('\n');
    const after = mergeToml(before, e, 'config.toml');
    expect(after.startsWith(before)).toBe(true);
    expect(after.slice(before.length)).toBe(`\n${table}`);
    const parsed = parseToml(after);
    if (parsed) {
      expect(parsed.mcp_servers.gasoline).toEqual(e);
      expect(parsed.mcp_servers.other).toEqual({ command: 'npx', args: ['-y', 'other'] });
      expect(parsed.notes).toContain('[mcp_servers.gasoline]');
    }
  });

  it('replaces command and args in place (multi-line args too), keeping the user\'s other keys and sub-tables', () => {
    const before = [
      'a = 1',
      '',
      '[ mcp_servers . "gasoline" ]  # ours',
      'command = "/old/gasoline"',
      'args = [',
      '  "--port", "7000",',
      ']',
      'startup_timeout_sec = 20',
      '',
      '[mcp_servers.gasoline.env]',
      'GASOLINE_PORT = "7000"',
      '',
      '[after]',
      'b = 2',
      '',
    ].join('\n');
    const after = mergeToml(before, e, 'config.toml');
    expect(after).toBe(before.replace('command = "/old/gasoline"\nargs = [\n  "--port", "7000",\n]\n', '').replace('# ours\n', `# ours\ncommand = "/opt/gasoline/bin/gasoline"\nargs = []\n`));
    const parsed = parseToml(after);
    if (parsed) {
      expect(parsed.mcp_servers.gasoline).toEqual({ ...e, startup_timeout_sec: 20, env: { GASOLINE_PORT: '7000' } });
      expect(parsed.after).toEqual({ b: 2 });
    }
    expect(mergeToml(after, e, 'config.toml')).toBe(after);
  });

  it('refuses forms that would define the server twice: a dotted key, an inline table', () => {
    expect(() => mergeToml('mcp_servers.gasoline.command = "x"\n', e, 'c.toml')).toThrow(/defines mcp_servers.gasoline.command/);
    expect(() => mergeToml('[mcp_servers]\ngasoline = { command = "x" }\n', e, 'c.toml')).toThrow(/add this by hand/);
    expect(() => mergeToml('mcp_servers = { other = { command = "x" } }\n', e, 'c.toml')).toThrow(/defines mcp_servers as a key/);
  });

  it('a file without a final newline, and an empty file', () => {
    expect(mergeToml('a = 1', e, 'c.toml')).toBe(`a = 1\n\n${table}`);
    expect(mergeToml('', e, 'c.toml')).toBe(table);
    expect(mergeToml('[mcp_servers.gasoline]', e, 'c.toml')).toBe(table);
  });

  it('strings: quotes, backslashes (Windows paths) and control characters escaped', () => {
    expect(tomlString('C:\\Program Files\\gasoline "x"\n\u0001')).toBe('"C:\\\\Program Files\\\\gasoline \\"x\\"\\n\\u0001"');
    const parsed = parseToml(`k = ${tomlString('C:\\a "b"\t\u0001é')}\n`);
    if (parsed) expect(parsed.k).toBe('C:\\a "b"\t\u0001é');
  });

  it('the scanner tells headers from look-alikes in strings and arrays', () => {
    const text = "x = '''\n[a]\n'''\ny = [\n[1],\n]\n[b] # c\nz = \"[c]\"\n";
    expect(scanLines(text).filter((l) => l.header).map((l) => l.header)).toEqual([['b']]);
  });
});
