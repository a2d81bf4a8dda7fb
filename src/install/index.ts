/**
 * `gasoline install <client> [--scope user|project] [--dry-run]`: gasoline's MCP entry written
 * into (or merged with) the client's own config file. Other servers and settings stay; the file
 * as it was is copied beside it before it changes; --dry-run prints the change and writes
 * nothing. Everything goes to stderr: stdout belongs to MCP in every mode.
 */
import { chmodSync, copyFileSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EXIT } from '../exit-codes.js';
import { CLIENTS, type ClientSpec, findClient, pathContext, type PathContext, type Scope } from './clients.js';
import { lineDiff } from './diff.js';
import { InstallError, type ServerEntry } from './entry.js';
import { mergeJson } from './json-config.js';
import { mergeToml } from './toml-config.js';

export const INSTALL_HELP = `Usage: gasoline install <client> [--scope user|project] [--dry-run]

Writes gasoline's MCP server entry into the client's config (other servers are kept; the old file
is copied to <file>.gasoline-backup-<time> first). Clients:
${CLIENTS.map((c) => `  ${c.name.padEnd(9)} ${c.label} (default scope: ${c.defaultScope}${c.path('project', pathContext()) === null ? ', user only' : ''})`).join('\n')}
  --scope    user: your home's config, every project; project: the file in this directory
  --dry-run  print the change, write nothing
`;

/**
 * The bin this package runs as: absolute, so a client starts it from any directory. Two levels
 * up from src/install/ (tests run the sources), three from dist/src/install/.
 */
export const BIN_PATH = ['../../bin/gasoline', '../../../bin/gasoline'].map((p) => fileURLToPath(new URL(p, import.meta.url))).find((p) => existsSync(p)) ?? fileURLToPath(new URL('../../../bin/gasoline', import.meta.url));

export interface InstallPlan {
  client: ClientSpec;
  scope: Scope;
  path: string;
  before: string | null;
  after: string;
}

export function planInstall(client: ClientSpec, scope: Scope, entry: ServerEntry, ctx: PathContext): InstallPlan {
  const path = client.path(scope, ctx);
  if (path === null) throw new InstallError(`${client.label} has no ${scope} config file; use --scope user`);
  // a dotfile managed elsewhere (a symlink into a dotfiles repository) is changed where it lives
  const real = existsSync(path) ? realpathSync(path) : path;
  const before = existsSync(real) ? readFileSync(real, 'utf8') : null;
  const after = client.shape === 'toml' ? mergeToml(before, entry, path) : mergeJson(before, client.shape, entry, path);
  return { client, scope, path: real, before, after };
}

/** Backup (same mode as the file), then an atomic replace that keeps the file's mode. */
export function applyInstall(p: InstallPlan, now = new Date()): string | null {
  let backup: string | null = null;
  let mode = 0o644;
  if (p.before !== null) {
    mode = statSync(p.path).mode & 0o777;
    backup = `${p.path}.gasoline-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
    // COPYFILE_EXCL: an earlier backup is never overwritten
    copyFileSync(p.path, backup, constants.COPYFILE_EXCL);
    chmodSync(backup, mode);
  } else {
    mkdirSync(dirname(p.path), { recursive: true });
  }
  const tmp = `${p.path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, p.after, { mode, flag: 'wx' });
    chmodSync(tmp, mode);
    renameSync(tmp, p.path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return backup;
}

const say = (s: string): void => void process.stderr.write(`${s}\n`);

export function runInstall(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): number {
  let values: { scope?: string | undefined; 'dry-run'?: boolean | undefined; help?: boolean | undefined };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { scope: { type: 'string' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    say(`gasoline install: ${(e as Error).message}\n\n${INSTALL_HELP}`);
    return EXIT.config;
  }
  if (values.help) {
    say(INSTALL_HELP);
    return EXIT.ok;
  }
  const known = CLIENTS.map((c) => c.name).join(', ');
  if (positionals.length !== 1) {
    say(`gasoline install: name one client (${known})\n\n${INSTALL_HELP}`);
    return EXIT.config;
  }
  const client = findClient(positionals[0]!);
  if (!client) {
    say(`gasoline install: unknown client ${JSON.stringify(positionals[0])}; known clients: ${known}`);
    return EXIT.config;
  }
  const scope = values.scope ?? client.defaultScope;
  if (scope !== 'user' && scope !== 'project') {
    say(`gasoline install: --scope is user or project, not ${JSON.stringify(scope)}`);
    return EXIT.config;
  }
  const entry: ServerEntry = { command: BIN_PATH, args: [] };
  let plan: InstallPlan;
  try {
    plan = planInstall(client, scope, entry, pathContext(env, cwd));
  } catch (e) {
    if (e instanceof InstallError) {
      say(`gasoline install: ${e.message}`);
      return EXIT.fatal;
    }
    throw e;
  }
  if (plan.before === plan.after) {
    say(`gasoline: ${client.label} (${scope}) already runs ${BIN_PATH}: ${plan.path} unchanged`);
    return EXIT.ok;
  }
  if (values['dry-run']) {
    say(`gasoline install ${client.name} --dry-run: ${plan.before === null ? 'would create' : 'would change'} ${plan.path} (nothing written)`);
    say(lineDiff(plan.before ?? '', plan.after));
    return EXIT.ok;
  }
  try {
    const backup = applyInstall(plan);
    say(`gasoline: ${plan.before === null ? 'created' : 'updated'} ${plan.path} for ${client.label}${backup ? ` (the old file is in ${backup})` : ''}`);
    say(lineDiff(plan.before ?? '', plan.after));
    say(`Restart ${client.label} (or reload its MCP servers) to start gasoline.`);
    return EXIT.ok;
  } catch (e) {
    say(`gasoline install: could not write ${plan.path}: ${(e as Error).message}`);
    return EXIT.fatal;
  }
}
