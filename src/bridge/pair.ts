/**
 * `gasoline pair [--reset] [--port N] [--state-dir DIR]`: asks the daemon on the port (with its
 * bearer token, as a bridge does) to open a pairing window, and prints the short code to type into
 * the extension's popup. --reset first rotates the daemon's pairing secret: every producer paired
 * before has to pair again. Output to stderr, like every command for people.
 */
import { parseArgs } from 'node:util';
import { defaultStateDir } from '../cli-options.js';
import { readDaemonToken, tokenPath } from '../daemon/contract.js';
import { EXIT } from '../exit-codes.js';
import { probe } from './daemon.js';
import { fetchText } from './http.js';

export const PAIR_HELP = `Usage: gasoline pair [--reset] [--port N] [--state-dir DIR]

Opens a pairing window on the daemon running on --port (default 7890) and prints a short code.
Type it into the Gasoline extension's popup ("Pairing" → Code → Pair) within the time shown; the
extension and the daemon then share a secret and prove it to each other on every connection.
--reset  rotate the daemon's pairing secret first: every paired extension must pair again.
Exit 0: a code was printed; 5: no daemon on the port; 1: the daemon refused or did not answer.
`;

const say = (s: string): void => void process.stderr.write(`${s}\n`);

export async function runPair(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: { reset: { type: 'boolean' }, port: { type: 'string' }, 'state-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    process.stderr.write(`gasoline pair: ${(e as Error).message}\n\n${PAIR_HELP}`);
    return EXIT.config;
  }
  if (values.help) {
    process.stderr.write(PAIR_HELP);
    return EXIT.ok;
  }
  const rawPort = typeof values.port === 'string' ? values.port : env.GASOLINE_PORT || '7890';
  const port = Number(rawPort);
  if (rawPort.trim() === '' || !Number.isInteger(port) || port < 1 || port > 65535) {
    process.stderr.write(`gasoline pair: --port: expected a port number, got ${JSON.stringify(rawPort)}\n\n${PAIR_HELP}`);
    return EXIT.config;
  }
  const stateDir = typeof values['state-dir'] === 'string' ? values['state-dir'] : defaultStateDir(env);
  const p = await probe(port);
  if (p.state !== 'gasoline') {
    say(`gasoline pair: ${p.state === 'none' ? `no daemon runs on port ${port}; start one (gasoline --server --port ${port}, or any agent's bridge), then pair` : `port ${port} is used by something that is not gasoline (${p.detail})`}`);
    return EXIT.noDaemon;
  }
  if (p.info.mode !== 'server') {
    say(`gasoline pair: the gasoline on port ${port} runs --${p.info.mode ?? 'standalone'}, which opens no pairing window; pair with a daemon (gasoline --server): the secret in the state dir is shared`);
    return EXIT.noDaemon;
  }
  const token = readDaemonToken(stateDir, port);
  if (!token) {
    say(`gasoline pair: the daemon on port ${port} answers, but its token file ${tokenPath(stateDir, port)} is missing or unreadable: pass the --state-dir it runs with`);
    return EXIT.fatal;
  }
  let res: { status: number; body: string };
  try {
    res = await fetchText({ port, method: 'POST', path: values.reset ? '/pairing?reset=1' : '/pairing', headers: { authorization: `Bearer ${token}`, 'content-length': '0' }, timeoutMs: 5000 });
  } catch (e) {
    say(`gasoline pair: the daemon on port ${port} did not answer: ${(e as Error).message}`);
    return EXIT.fatal;
  }
  let body: { code?: string; expires_at?: string; attempts?: number; reset?: boolean; error?: string; message?: string };
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    body = {};
  }
  if (res.status !== 200 || typeof body.code !== 'string') {
    say(`gasoline pair: the daemon refused (${res.status}${body.error ? ` ${body.error}` : ''}): ${body.message ?? res.body.slice(0, 200)}`);
    return EXIT.fatal;
  }
  const secs = body.expires_at ? Math.max(0, Math.round((Date.parse(body.expires_at) - Date.now()) / 1000)) : 120;
  if (body.reset) say('gasoline pair: the pairing secret was rotated; every extension paired before must pair again.');
  say(`Pairing code: ${body.code}`);
  say(`Type it into the Gasoline extension's popup (Pairing → Code → Pair) within ${secs} s; ${body.attempts ?? 5} wrong tries close the window.`);
  return EXIT.ok;
}
