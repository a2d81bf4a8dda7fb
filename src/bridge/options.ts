/**
 * A bridge's options, read without the config schema. A bridge is what every agent runs and
 * keeps running, so it must stay small (issue 16: ≤ 45 MB; zod alone is 14 MB): it reads only
 * what it uses (mode, port, state dir, client id, log level) and hands the rest, untouched, to a
 * daemon it starts, which validates everything with the schema (src/config.ts) and reports a bad
 * value in its output, which the bridge quotes (./find.ts).
 *
 * Anything this reader is not sure of returns null, and the command line (src/cli.ts) takes over
 * with the full schema: another mode, --help, a flag or value it does not accept, a config file it
 * cannot read. So a mistake is reported by one code path, with one wording, whichever way it came.
 * test/unit/bridge/options.test.ts holds this reader and the schema's result side by side.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CLI_OPTIONS, type CliValues, daemonArgsFor, defaultStateDir, LOG_LEVELS, MODE_FLAGS, numberFlag, parseDuration, subcommandOf } from '../cli-options.js';
import { CLIENT_ID_RE } from '../daemon/client-id-pattern.js';
import type { LogLevel } from '../log.js';

export interface BridgeOptions {
  /** connect: never start a daemon */
  mode: 'bridge' | 'connect';
  port: number;
  stateDir: string;
  clientId: string | undefined;
  logLevel: LogLevel;
  /** stop a daemon of another version on the port and start ours */
  replace: boolean;
  /** argv of a daemon this bridge starts: the same config, state dir and port */
  daemonArgs: string[];
}

type Json = Record<string, unknown>;

interface Invocation {
  values: CliValues;
  file: Json;
  mode: unknown;
}

/** The flags, the config file and the mode, read as loadConfig would; null at the first doubt. */
function readInvocation(argv: readonly string[], env: NodeJS.ProcessEnv): Invocation | null {
  // `gasoline install …`, `gasoline doctor`: commands of the CLI, never a bridge
  if (subcommandOf(argv)) return null;
  let values: CliValues;
  try {
    ({ values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: CLI_OPTIONS }));
  } catch {
    return null;
  }
  if (values.help || values.version) return null;
  const modes = MODE_FLAGS.filter((m) => values[m] === true);
  if (modes.length > 1) return null;
  const problems: string[] = [];
  // checked here only so that a bad one goes to the CLI's report rather than to the daemon's start
  numberFlag('threads', values.threads, problems);
  if (typeof values['client-ttl'] === 'string' && parseDuration(values['client-ttl']) === undefined) return null;
  if (env.GASOLINE_CLIENT_TTL && parseDuration(env.GASOLINE_CLIENT_TTL) === undefined) return null;
  if (env.GASOLINE_THREADS && !Number.isFinite(Number(env.GASOLINE_THREADS))) return null;
  if (problems.length) return null;

  const fileName = typeof values.config === 'string' ? values.config : env.GASOLINE_CONFIG || undefined;
  let file: Json = {};
  if (fileName !== undefined) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(fileName, 'utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
      file = parsed as Json;
    } catch {
      return null;
    }
  }
  // precedence as in loadConfig: defaults < file < environment < flags
  let mode: unknown = file.mode ?? 'bridge';
  if (env.GASOLINE_SERVER !== undefined && env.GASOLINE_SERVER !== '') {
    if (/^(1|true|yes)$/i.test(env.GASOLINE_SERVER)) mode = 'server';
    else if (!/^(0|false|no)$/i.test(env.GASOLINE_SERVER)) return null;
  }
  if (env.GASOLINE_MODE) mode = env.GASOLINE_MODE;
  if (modes[0]) mode = modes[0];
  return { values, file, mode };
}

/**
 * Whether this is a `--standalone` invocation as far as can be told without the schema: its
 * first initialize may then be answered before the engine loads (src/mcp/early-stdio.ts). A
 * false "no" only costs that head start; the schema still judges every value.
 */
export function isStandalone(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return readInvocation(argv, env)?.mode === 'standalone';
}

/** The options of a bridge invocation; null when this is no bridge, or the full CLI must judge it. */
export function bridgeOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BridgeOptions | null {
  const inv = readInvocation(argv, env);
  if (!inv) return null;
  const { values, file, mode } = inv;
  if (mode !== 'bridge' && mode !== 'connect') return null;
  if (values.replace && mode === 'connect') return null;

  let port: unknown = file.port ?? 7890;
  if (env.GASOLINE_PORT !== undefined && env.GASOLINE_PORT !== '') port = Number(env.GASOLINE_PORT);
  if (typeof values.port === 'string') port = values.port.trim() === '' ? Number.NaN : Number(values.port);
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) return null;

  const stateDir = (typeof values['state-dir'] === 'string' ? values['state-dir'] : undefined) ?? (env.GASOLINE_STATE_DIR || undefined) ?? file.state_dir ?? defaultStateDir(env);
  if (typeof stateDir !== 'string' || stateDir === '') return null;

  const clientId = (typeof values['client-id'] === 'string' ? values['client-id'] : undefined) ?? (env.GASOLINE_CLIENT_ID || undefined) ?? file.client_id;
  if (clientId !== undefined && (typeof clientId !== 'string' || !CLIENT_ID_RE.test(clientId))) return null;

  const logLevel = (typeof values['log-level'] === 'string' ? values['log-level'] : undefined) ?? (env.GASOLINE_LOG_LEVEL || undefined) ?? file.log_level ?? 'info';
  if (!(LOG_LEVELS as readonly unknown[]).includes(logLevel)) return null;

  return {
    mode,
    port,
    stateDir,
    clientId,
    logLevel: logLevel as LogLevel,
    replace: values.replace === true,
    daemonArgs: daemonArgsFor(values, port, stateDir),
  };
}
