/**
 * Command line: flags → config (one schema, src/config.ts) → run. Exit codes:
 * 0 clean, 1 fatal, 2 invalid configuration or usage, 3 port taken (--server), 4 state directory
 * owned by another user or not repairable to 0700.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { log, setLogLevel } from './log.js';
import { EXIT } from './exit-codes.js';
import { StateDirError } from './state-dir.js';
import { VERSION } from './version.js';

export const HELP = `gasoline ${VERSION} — lets AI coding agents see your real browser

Usage:
  gasoline                 MCP over stdio + the ingest server on 127.0.0.1 (the default; put
                           {"command": "gasoline"} in your agent's MCP config)
  gasoline --server        the ingest server only, no stdio

Options (each also settable by environment variable):
  --port N                 ingest port on 127.0.0.1 (GASOLINE_PORT, default 7890)
  --server                 ingest only, no MCP stdio (GASOLINE_SERVER=true)
  --state-dir DIR          state directory (GASOLINE_STATE_DIR, else $XDG_STATE_HOME/gasoline,
                           else ~/.gasoline)
  --config FILE            JSON config file; every option of the schema, e.g.
                           {"rings": {"logs": 33554432}, "pool": {"threads": 2}} (GASOLINE_CONFIG)
  --threads N              ingest worker threads (GASOLINE_THREADS, default cores - 1)
  --log-level LEVEL        debug|info|warn|error|silent (GASOLINE_LOG_LEVEL, default info)
  -h, --help               this text
  -v, --version            the version

Logs go to stderr; stdout carries only MCP JSON-RPC.
Exit codes: 0 ok, 1 fatal, 2 invalid configuration, 3 port in use (--server),
4 state directory not ours (another user owns it, or its modes cannot be set to 0700/0600).
`;

export interface ParsedCli {
  help: boolean;
  version: boolean;
  config: Readonly<Config>;
}

/** Parses argv and loads config. Throws ConfigError (exit 2) on any usage or config problem. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): ParsedCli {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        port: { type: 'string' },
        server: { type: 'boolean' },
        'state-dir': { type: 'string' },
        config: { type: 'string' },
        threads: { type: 'string' },
        'log-level': { type: 'string' },
      },
    }));
  } catch (e) {
    throw new ConfigError([(e as Error).message]);
  }
  const flags: Record<string, unknown> = {};
  const problems: string[] = [];
  const num = (name: string, v: string | boolean | undefined): number | undefined => {
    if (typeof v !== 'string') return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n)) problems.push(`--${name}: expected a number, got ${JSON.stringify(v)}`);
    return n;
  };
  const port = num('port', values.port);
  if (port !== undefined) flags.port = port;
  if (values.server) flags.mode = 'server';
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
  return { help: values.help === true, version: values.version === true, config };
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
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
  // loaded only now: --help, --version and a bad config never load the native uWS binary or a worker
  const { run } = await import('./main.js');
  try {
    await run(parsed.config);
  } catch (e) {
    if (e instanceof StateDirError) {
      process.stderr.write(`gasoline: ${e.message}\n`);
      process.exit(EXIT.stateDir);
    }
    log.error('fatal', { error: String(e) });
    process.exit(EXIT.fatal);
  }
}
