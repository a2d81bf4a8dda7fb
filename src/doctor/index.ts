/**
 * `gasoline doctor [--port N] [--state-dir DIR] [--config FILE]`: what stands between an agent
 * and the browser, checked in order, each failure with its fix. Output to stderr (stdout belongs
 * to MCP, in every mode); exit 0 when nothing failed, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { defaultStateDir, numberFlag } from '../cli-options.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { EXIT } from '../exit-codes.js';
import { VERSION } from '../version.js';
import { type Check, checkDaemon, checkExtension, checkMallocTrim, checkNode, checkThreadPolicy, checkPairing, checkPolicy, checkPort, checkRedaction, checkStateDir, checkToken, checkTransport, viewPort } from './checks.js';

export const DOCTOR_HELP = `Usage: gasoline doctor [--port N] [--state-dir DIR] [--config FILE]

Checks node, the config and its redaction rules, the state dir's owner and modes, the port, the
daemon and its version, its token file, whether /mcp (the bridges' and the side panel's door)
answers initialize, the daemon's redaction policy, whether the extension is connected and paired; prints each
failure with the command that fixes it. Exit 0: every check passed; 1: one or more failed.
`;

export async function doctor(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ checks: Check[]; usage?: string }> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { port: { type: 'string' }, 'state-dir': { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    return { checks: [], usage: (e as Error).message };
  }
  if (values.help) return { checks: [], usage: '' };
  const problems: string[] = [];
  const flags: Record<string, unknown> = {};
  const port = numberFlag('port', values.port, problems);
  if (problems.length) return { checks: [], usage: problems.join('; ') };
  if (port !== undefined) flags.port = port;
  if (typeof values['state-dir'] === 'string') flags.state_dir = values['state-dir'];
  const checks: Check[] = [await checkNode(), checkMallocTrim(), checkThreadPolicy()];
  let cfg: Readonly<Config> | undefined;
  try {
    cfg = loadConfig({ flags, env, file: typeof values.config === 'string' ? values.config : undefined });
    checks.push({ name: 'config', status: 'ok', detail: `port ${cfg.port}, state dir ${cfg.state_dir}` });
    checks.push(checkRedaction(cfg));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    checks.push({ name: 'config', status: 'fail', detail: e.problems.join('; '), fix: 'correct the values named (flags, GASOLINE_* variables, --config file); gasoline --help lists them' });
  }
  // without a valid config the rest still runs, on the flags' or the defaults' port and dir
  const p = cfg?.port ?? (typeof port === 'number' && Number.isInteger(port) ? port : 7890);
  const stateDir = cfg?.state_dir ?? (typeof values['state-dir'] === 'string' ? values['state-dir'] : defaultStateDir(env));
  checks.push(checkStateDir(stateDir));
  const view = await viewPort(p);
  checks.push(checkPort(p, view), checkDaemon(p, view), checkToken(stateDir, p, view), await checkTransport(stateDir, p, view), checkPolicy(view), checkExtension(view), checkPairing(p, view));
  return { checks };
}

export function formatChecks(checks: readonly Check[]): string {
  const mark = { ok: 'ok  ', fail: 'FAIL', skip: '-   ' } as const;
  const lines = [`gasoline doctor ${VERSION}`];
  for (const c of checks) {
    lines.push(`  ${mark[c.status]}  ${c.name.padEnd(11)} ${c.detail}`);
    if (c.status === 'fail' && c.fix) lines.push(`        fix: ${c.fix}`);
  }
  const count = (s: Check['status']): number => checks.filter((c) => c.status === s).length;
  lines.push(`${count('fail') ? `${count('fail')} failed` : 'all passed'}: ${count('ok')} ok, ${count('fail')} failed, ${count('skip')} skipped`);
  return `${lines.join('\n')}\n`;
}

export async function runDoctor(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const r = await doctor(argv, env);
  if (r.usage !== undefined) {
    process.stderr.write(r.usage ? `gasoline doctor: ${r.usage}\n\n${DOCTOR_HELP}` : DOCTOR_HELP);
    return r.usage ? EXIT.config : EXIT.ok;
  }
  process.stderr.write(formatChecks(r.checks));
  return r.checks.some((c) => c.status === 'fail') ? EXIT.fatal : EXIT.ok;
}
