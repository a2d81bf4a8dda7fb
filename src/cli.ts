/**
 * Command line: flags → config (one schema, src/config.ts) → run. Exit codes:
 * 0 clean, 1 fatal, 2 invalid configuration or usage, 3 port taken (--server only), 4 state
 * directory owned by another user or not repairable to 0700, 5 no daemon.
 */
import { parseArgs } from 'node:util';
import { CLI_OPTIONS, type CliValues, daemonArgsFor, MODE_FLAGS, numberFlag, parseDuration, subcommandOf } from './cli-options.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { log, setLogLevel } from './log.js';
import { EXIT } from './exit-codes.js';
import type { EarlyStdio } from './mcp/early-stdio.js';
import { StateDirError } from './state-dir.js';
import { VERSION } from './version.js';

export const HELP = `gasoline ${VERSION} — lets AI coding agents see your real browser

Usage:
  gasoline                 bridge (the default; put {"command": ".../bin/gasoline"} in every agent's
                           MCP config): MCP on stdio, forwarded to the daemon on --port, which it
                           starts in the background when none runs. Any number of agents share it.
  gasoline --server        the daemon in the foreground: ingest + MCP for bridges; never reads stdin
  gasoline --connect       a bridge that never starts a daemon (run one with gasoline --server)
  gasoline --standalone    one process: MCP on stdio + ingest, no daemon (one agent only)
  gasoline --replace       a bridge that first stops a daemon of another version on the port
  gasoline --stop          stop the daemon on the port (gracefully) and wait until the port is free
  gasoline --status        the daemon's health, clients and extension state, for people
  gasoline install CLIENT  write gasoline into an MCP client's config: claude, cursor, vscode,
                           windsurf, codex, gemini (--scope user|project, --dry-run; see
                           gasoline install --help)
  gasoline doctor          check node, the port, the daemon, the extension, the state dir's
                           modes and the redaction rules; each failure names its fix
  gasoline pair            print a short code to type into the extension's popup: pairs it with
                           the daemon on --port (--reset rotates the secret; see gasoline pair --help)
  gasoline export har      the daemon's captured traffic as a HAR 1.2 file (--out FILE, --url,
                           --since CHECKPOINT|TIME, --tab, --limit; see gasoline export --help)

Options (each also settable by environment variable):
  --port N                 port on 127.0.0.1 (GASOLINE_PORT, default 7890)
  --client-id ID           the client this agent is (GASOLINE_CLIENT_ID; letters, digits, . _ -,
                           at most 64); default: derived from the working directory, so an agent
                           restarted in the same project finds its checkpoints and cursors
  --client-ttl T           the daemon forgets clients unseen this long: seconds, or 30m, 1h, 2d
                           (GASOLINE_CLIENT_TTL, default 1h)
  --state-dir DIR          state directory (GASOLINE_STATE_DIR, else $XDG_STATE_HOME/gasoline,
                           else ~/.gasoline)
  --config FILE            JSON config file; every option of the schema, e.g.
                           {"rings": {"logs": 33554432}, "pool": {"threads": 2}} (GASOLINE_CONFIG)
  --threads N              ingest worker threads (GASOLINE_THREADS, default cores - 1)
  --log-level LEVEL        debug|info|warn|error|silent (GASOLINE_LOG_LEVEL, default info)
  GASOLINE_ALLOWED_ORIGINS Origins allowed to connect as the extension, comma-separated (default:
                           the Gasoline extension's chrome-extension:// origin; add an unpacked
                           build's); also "allowed_origins" in --config
  GASOLINE_SOURCE_MAPS     on|off: resolve stacks with the page's source maps, fetched only from its
                           own localhost/private origin (default on); also "source_maps" in --config
  -h, --help               this text
  -v, --version            the version
  The mode is also settable as GASOLINE_MODE=bridge|connect|server|standalone (GASOLINE_SERVER=true
  is --server).

Logs go to stderr (a daemon started by a bridge: <state dir>/daemon-PORT.log); stdout carries only
MCP JSON-RPC, so --status and --stop print to stderr too.
Exit codes: 0 ok, 1 fatal, 2 invalid configuration or usage, 3 port in use (--server only:
--standalone keeps serving MCP and its tools say what holds the port; a bridge keeps running and
its answers say so), 4 state directory not ours (another user owns it, or its modes cannot be set
to 0700/0600), 5 no daemon (--connect with nothing on the port; --stop and --status with nothing
or something that is not gasoline on it). gasoline doctor exits 0 when every check passes, 1
otherwise; gasoline install exits 2 for an unknown client, 1 when the file cannot be changed;
gasoline export exits 5 when no daemon runs, 1 when the export fails.
`;

export interface ParsedCli {
  help: boolean;
  version: boolean;
  /** bridge: stop a daemon of another version on the port and start ours */
  replace: boolean;
  /** the daemon options given on this command line, for the daemon a bridge starts */
  daemonArgs: string[];
  config: Readonly<Config>;
}

/** Parses argv and loads config. Throws ConfigError (exit 2) on any usage or config problem. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): ParsedCli {
  let values: CliValues;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: CLI_OPTIONS,
    }));
  } catch (e) {
    throw new ConfigError([(e as Error).message]);
  }
  const flags: Record<string, unknown> = {};
  const problems: string[] = [];
  const num = (name: string, v: string | boolean | undefined): number | undefined => numberFlag(name, v, problems);
  const port = num('port', values.port);
  if (port !== undefined) flags.port = port;
  const modes = MODE_FLAGS.filter((m) => values[m] === true);
  if (modes.length > 1) problems.push(`choose one mode: ${modes.map((m) => `--${m}`).join(' and ')} exclude each other`);
  else if (modes[0]) flags.mode = modes[0];
  // --replace is a bridge that first clears the port; with another mode it means nothing
  if (values.replace && modes.length && modes[0] !== 'connect') problems.push(`--replace is for the bridge (gasoline --replace), not with --${modes[0]}`);
  if (values.replace && modes[0] === 'connect') problems.push('--replace starts a daemon, --connect never does: choose one');
  if (typeof values['client-id'] === 'string') flags.client_id = values['client-id'];
  if (typeof values['client-ttl'] === 'string') {
    const ttl = parseDuration(values['client-ttl']);
    if (ttl === undefined) problems.push(`--client-ttl: expected seconds or 30m/1h/2d, got ${JSON.stringify(values['client-ttl'])}`);
    else flags.clients = { ttl_s: ttl };
  }
  if (typeof values['state-dir'] === 'string') flags.state_dir = values['state-dir'];
  const threads = num('threads', values.threads);
  if (threads !== undefined) flags.pool = { threads };
  if (typeof values['log-level'] === 'string') flags.log_level = values['log-level'];
  let config: Readonly<Config>;
  try {
    config = loadConfig({ flags, env, file: typeof values.config === 'string' ? values.config : undefined });
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError([...problems, ...e.problems]);
    throw e;
  }
  if (problems.length) throw new ConfigError(problems);
  const daemonArgs = daemonArgsFor(values, config.port, config.state_dir);
  return { help: values.help === true, version: values.version === true, replace: values.replace === true, daemonArgs, config };
}

/**
 * `early`: a standalone's stdin read and first initialize answered before this module loaded
 * (src/mcp/early-stdio.ts). `threadsAtStart`: the process's threads when bin/gasoline began
 * (src/pool/thread-ids.ts), for pool.helper_threads.
 */
export async function main(argv = process.argv.slice(2), early: EarlyStdio | null = null, threadsAtStart?: readonly number[]): Promise<void> {
  const sub = subcommandOf(argv);
  if (sub === 'install') {
    const { runInstall } = await import('./install/index.js');
    process.exit(runInstall(argv.slice(1)));
  }
  if (sub === 'doctor') {
    const { runDoctor } = await import('./doctor/index.js');
    process.exit(await runDoctor(argv.slice(1)));
  }
  if (sub === 'pair') {
    const { runPair } = await import('./bridge/pair.js');
    process.exit(await runPair(argv.slice(1)));
  }
  if (sub === 'export') {
    const { runExport } = await import('./bridge/export-har.js');
    process.exit(await runExport(argv.slice(1)));
  }
  let parsed: ParsedCli;
  try {
    // --help/--version must work even when the environment holds a bad value
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stderr.write(HELP);
      process.exit(EXIT.ok);
    }
    if (argv.includes('--version') || argv.includes('-v')) {
      process.stderr.write(`${VERSION}\n`);
      process.exit(EXIT.ok);
    }
    parsed = parseCli(argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`gasoline: ${e.message}\n(see gasoline --help)\n`);
      process.exit(EXIT.config);
    }
    throw e;
  }
  setLogLevel(parsed.config.log_level);
  try {
    await dispatch(parsed, early, threadsAtStart);
  } catch (e) {
    if (e instanceof StateDirError) {
      process.stderr.write(`gasoline: ${e.message}\n`);
      process.exit(EXIT.stateDir);
    }
    log.error('fatal', { error: String(e) });
    process.exit(EXIT.fatal);
  }
}

/**
 * Each mode loads only what it runs: a bridge and the --stop/--status commands never load the
 * native uWS binary, a worker or the app (an agent waits on the bridge's start), and --help,
 * --version and a bad config load nothing at all.
 */
async function dispatch(p: ParsedCli, early: EarlyStdio | null, threadsAtStart?: readonly number[]): Promise<void> {
  const { mode } = p.config;
  if (mode === 'bridge' || mode === 'connect') {
    // bin/gasoline runs a bridge without this module (src/bridge/options.ts); one arrives here
    // only when that reader declined a value this schema accepts
    const { runBridge } = await import('./bridge/index.js');
    const c = p.config;
    await runBridge({ mode, port: c.port, stateDir: c.state_dir, clientId: c.client_id, logLevel: c.log_level, replace: p.replace, daemonArgs: p.daemonArgs });
    return;
  }
  if (mode === 'stop' || mode === 'status') {
    const { runControl } = await import('./bridge/control.js');
    process.exit(await runControl(p.config, mode));
  }
  const { run } = await import('./main.js');
  await run(p.config, p.config.mode === 'standalone' ? early : null, threadsAtStart);
}
