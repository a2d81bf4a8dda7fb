/**
 * `gasoline export har [--out FILE] [--url S] [--since CHECKPOINT|TIME] [--tab N]... [--limit N]`:
 * the daemon's captured traffic as a HAR 1.2 file, for people. It holds no HAR code of its own: it
 * opens an MCP session with the daemon on the port, as a bridge does, and calls
 * configure({action:"export_har"}), so the file is the one an agent would get (the builder is
 * src/query/har.ts, the action src/mcp/tools/export-har.ts). The session speaks for this
 * directory's client (as the bridge an agent runs here), so --since finds that agent's
 * checkpoints. Prints to stderr: stdout belongs to MCP in every mode.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultStateDir } from '../cli-options.js';
import { deriveClientId } from '../clients/client-id.js';
import { CLIENT_ID_RE } from '../daemon/client-id-pattern.js';
import { readDaemonToken, tokenPath } from '../daemon/contract.js';
import { EXIT } from '../exit-codes.js';
import { VERSION } from '../version.js';
import { probe } from './daemon.js';
import { McpSession, type Msg } from './mcp-session.js';

export const EXPORT_HELP = `Usage: gasoline export har [--out FILE] [--url TEXT] [--since CHECKPOINT|TIME] [--tab ID]...
                          [--limit N] [--port N] [--state-dir DIR] [--client-id ID]

Writes the traffic the running daemon captured (requests, responses, headers and bodies where
captured, redacted) to a HAR 1.2 file, 0600. Needs a daemon on the port (gasoline --server, or
the one an agent's bridge started).
  --out FILE     default ./gasoline-<time>.har; must end in .har; its folder must exist
  --url TEXT     only requests whose URL contains TEXT
  --since X      only what came after checkpoint X (this directory's agent's) or time X (ISO 8601)
  --tab ID       only this tab (repeatable)
  --limit N      the newest N requests (default 1000, at most 5000); the file is at most 32 MiB
`;

const say = (s: string): void => void process.stderr.write(`${s}\n`);

/** What the command line asked for, or a usage problem. */
export function exportArgs(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): { usage: string } | { port: number; stateDir: string; clientId: string; args: Record<string, unknown> } {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: { out: { type: 'string' }, url: { type: 'string' }, since: { type: 'string' }, tab: { type: 'string', multiple: true }, limit: { type: 'string' }, port: { type: 'string' }, 'state-dir': { type: 'string' }, 'client-id': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (e) {
    return { usage: (e as Error).message };
  }
  if (values.help) return { usage: '' };
  if (positionals.length !== 1 || positionals[0] !== 'har') return { usage: `export what? the one format is har (gasoline export har), got ${positionals.length ? JSON.stringify(positionals.join(' ')) : 'nothing'}` };
  const rawPort = typeof values.port === 'string' ? values.port : env.GASOLINE_PORT || '7890';
  const port = Number(rawPort);
  if (rawPort.trim() === '' || !Number.isInteger(port) || port < 1 || port > 65535) return { usage: `--port: expected a port number, got ${JSON.stringify(rawPort)}` };
  const explicit = typeof values['client-id'] === 'string' ? values['client-id'] : env.GASOLINE_CLIENT_ID || undefined;
  if (explicit !== undefined && !CLIENT_ID_RE.test(explicit)) return { usage: `--client-id: letters, digits, . _ - (at most 64), got ${JSON.stringify(explicit)}` };
  const tabs = ((values.tab as string[] | undefined) ?? []).map(Number);
  if (tabs.some((t) => !Number.isInteger(t) || t < 0)) return { usage: `--tab: a tab id (a whole number), got ${JSON.stringify(values.tab)}` };
  const limit = typeof values.limit === 'string' ? Number(values.limit) : undefined;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 5000)) return { usage: `--limit: 1 to 5000, got ${JSON.stringify(values.limit)}` };
  const out = typeof values.out === 'string' ? values.out : `gasoline-${new Date().toISOString().replace(/[:.]/g, '-')}.har`;
  const args: Record<string, unknown> = { action: 'export_har', path: resolve(cwd, out) };
  if (typeof values.url === 'string') args.url_filter = values.url;
  if (typeof values.since === 'string') args.name = values.since;
  if (tabs.length) args.tab_ids = tabs;
  if (limit !== undefined) args.limit = limit;
  const stateDir = typeof values['state-dir'] === 'string' ? values['state-dir'] : defaultStateDir(env);
  return { port, stateDir, clientId: deriveClientId(explicit, cwd), args };
}

export async function runExport(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<number> {
  const a = exportArgs(argv, env, cwd);
  if ('usage' in a) {
    process.stderr.write(a.usage ? `gasoline export: ${a.usage}\n\n${EXPORT_HELP}` : EXPORT_HELP);
    return a.usage ? EXIT.config : EXIT.ok;
  }
  const { port, stateDir } = a;
  const p = await probe(port);
  if (p.state === 'none') {
    say(`gasoline export: no daemon runs on port ${port}; start one with gasoline --server --port ${port} (an agent's bridge also starts one), then export again`);
    return EXIT.noDaemon;
  }
  if (p.state === 'foreign') {
    say(`gasoline export: port ${port} is used by something that is not gasoline (${p.detail})`);
    return EXIT.noDaemon;
  }
  if (p.info.mode === 'standalone') {
    say(`gasoline export: the gasoline on port ${port} runs --standalone (its MCP is its one agent's stdio): ask that agent for configure({action:"export_har"}), or run gasoline --server`);
    return EXIT.noDaemon;
  }
  const token = readDaemonToken(stateDir, port);
  if (!token) {
    say(`gasoline export: the daemon on port ${port} answers, but its token file ${tokenPath(stateDir, port)} is missing or unreadable: pass the --state-dir it runs with`);
    return EXIT.fatal;
  }
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gasoline-export', version: VERSION } } };
  let session: McpSession | undefined;
  try {
    session = await McpSession.open({ port, token, clientId: a.clientId, onPush: () => undefined, onStreamLost: () => undefined }, initialize, 5000);
    const answer = await session.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'configure', arguments: a.args } }, { timeoutMs: 60_000 });
    return report(answer);
  } catch (e) {
    say(`gasoline export: the daemon on port ${port} did not answer: ${(e as Error).message}`);
    return EXIT.fatal;
  } finally {
    await session?.close();
  }
}

function report(answer: Msg): number {
  if ('error' in answer) {
    say(`gasoline export: the daemon refused: ${JSON.stringify(answer.error).slice(0, 500)}`);
    return EXIT.fatal;
  }
  const r = answer.result as { isError?: boolean; content?: Array<{ type: string; text?: string }> } | undefined;
  const text = r?.content?.find((c) => c.type === 'text')?.text ?? '';
  if (r?.isError) {
    say(`gasoline export: ${text}`);
    return EXIT.fatal;
  }
  let done: { path?: string; entries?: number; bytes?: number; truncated?: boolean; dropped?: Record<string, number> };
  try {
    done = JSON.parse(text) as typeof done;
  } catch {
    say(`gasoline export: unexpected answer: ${text.slice(0, 500)}`);
    return EXIT.fatal;
  }
  const left = done.truncated && done.dropped ? `; left out: ${Object.entries(done.dropped).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k.replace(/_/g, ' ')}`).join(', ')}` : '';
  say(`gasoline export: wrote ${done.path} (HAR 1.2, ${done.entries} entries, ${done.bytes} bytes${left})`);
  return EXIT.ok;
}
