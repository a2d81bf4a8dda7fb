/**
 * The command line's vocabulary, without the schema: the flags `parseArgs` accepts, the few
 * values every mode reads before (or without) loading the config schema, and the arguments a
 * bridge hands to a daemon it starts. Imports nothing but node built-ins: the bridge
 * (src/bridge/options.ts) reads its options from here and must not load zod (issue 16: each
 * bridge ≤ 45 MB, and zod alone is 14 MB).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ParseArgsConfig } from 'node:util';

export const CLI_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  port: { type: 'string' },
  server: { type: 'boolean' },
  connect: { type: 'boolean' },
  standalone: { type: 'boolean' },
  stop: { type: 'boolean' },
  status: { type: 'boolean' },
  replace: { type: 'boolean' },
  'client-id': { type: 'string' },
  'client-ttl': { type: 'string' },
  'state-dir': { type: 'string' },
  config: { type: 'string' },
  threads: { type: 'string' },
  'log-level': { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export type CliValues = Record<string, string | boolean | undefined>;

/**
 * One-shot commands for people, named as the first argument (`gasoline install cursor`): they
 * parse their own arguments, and a bridge never mistakes them for its own (src/bridge/options.ts).
 */
export const SUBCOMMANDS = ['install', 'doctor', 'export', 'pair'] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

export function subcommandOf(argv: readonly string[]): Subcommand | undefined {
  return (SUBCOMMANDS as readonly string[]).includes(argv[0] ?? '') ? (argv[0] as Subcommand) : undefined;
}

/** flags that choose the mode; at most one of them */
export const MODE_FLAGS = ['server', 'connect', 'standalone', 'stop', 'status'] as const;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GASOLINE_STATE_DIR) return env.GASOLINE_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'gasoline');
  return join(homedir(), '.gasoline');
}

/**
 * A duration in seconds: a plain number is seconds, or a number with s, m, h or d (30m, 1h, 2d).
 * Returns undefined when the text is not one.
 */
export function parseDuration(raw: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/i.exec(raw);
  if (!m) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[m[2]!.toLowerCase() as '' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(m[1]) * unit);
}

/** A number flag as the command line gives it; a problem is pushed when it is not one. */
export function numberFlag(name: string, v: string | boolean | undefined, problems: string[]): number | undefined {
  if (typeof v !== 'string') return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) problems.push(`--${name}: expected a number, got ${JSON.stringify(v)}`);
  return n;
}

/** A daemon a bridge starts gets the same config, state dir and port the bridge was given. */
export function daemonArgsFor(values: CliValues, port: number, stateDir: string): string[] {
  const args = ['--server', '--port', String(port), '--state-dir', stateDir];
  for (const name of ['config', 'threads', 'log-level', 'client-ttl']) {
    const v = values[name];
    if (typeof v === 'string') args.push(`--${name}`, v);
  }
  return args;
}
