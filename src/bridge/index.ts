/**
 * The bridge: what an agent's MCP config runs. MCP on stdio, relayed to the daemon on the port
 * over one MCP session (./relay.ts, ./upstream.ts); initialize, the tool list and the guide are
 * answered at once from what the build recorded (src/mcp/recorded-answers.ts), before any daemon is up. It loads
 * no engine, worker, native module, SDK or zod (test/unit/architecture/imports.test.ts keeps it
 * so): an agent waits on its start, and it runs beside every agent for hours.
 *
 * Two steps, so that an agent's first request is answered at node's own start: this module loads
 * only the stdio side and starts reading; the way to the daemon (HTTP, discovery, the client id's
 * hash) loads after, and what the agent sent meanwhile waits for it in ./late-upstream.ts.
 */
import { EXIT } from '../exit-codes.js';
import { log, setLogLevel } from '../log.js';
import { StdoutWriter } from '../mcp/stdout-writer.js';
import { loadAnswers, type RecordedAnswers } from '../mcp/recorded-answers.js';
import { LateUpstream } from './late-upstream.js';
import type { BridgeOptions } from './options.js';
import { Relay } from './relay.js';

export async function runBridge(o: BridgeOptions): Promise<void> {
  setLogLevel(o.logLevel);
  const connectOnly = o.mode === 'connect';
  let answers: RecordedAnswers;
  try {
    answers = loadAnswers();
  } catch (e) {
    process.stderr.write(`gasoline: ${(e as Error).message}\n`);
    process.exit(EXIT.fatal);
  }
  if (connectOnly) {
    // --connect with nothing to connect to is a mistake to say at once, not a bridge that waits
    const { describe, Upstream } = await import('./upstream.js');
    const found = await Upstream.probeOnce({ stateDir: o.stateDir, port: o.port });
    if (found.kind === 'none') {
      process.stderr.write(`gasoline: ${describe(found, o.port, o.stateDir)}\n`);
      process.exit(EXIT.noDaemon);
    }
  }
  const writer = new StdoutWriter(process.stdout);
  const late = new LateUpstream();
  let closing = false;
  const end = (reason: string): void => {
    if (closing) return;
    closing = true;
    log.info('bridge session ended', { reason });
    relay.stop();
    void late.close().finally(() => process.exit(EXIT.ok));
  };
  const relay = new Relay(process.stdin, writer, answers, late, () => end('stdin closed'));
  writer.onBrokenPipe((err) => end(`stdout broken: ${err.message}`));
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => end(sig));
  relay.start();

  const { Upstream, resolveClientId } = await import('./upstream.js');
  const clientId = resolveClientId(o.clientId);
  const upstream = new Upstream({
    stateDir: o.stateDir,
    port: o.port,
    clientId,
    daemonArgs: o.daemonArgs,
    start: !connectOnly,
    replace: o.replace,
    // the daemon's pushes (alerts as notifications/message) go to the agent as they came
    relay: (m) => relay.push(m),
  });
  late.attach(upstream);
  upstream.start();
  log.info('bridge ready', { port: o.port, client_id: clientId, mode: o.mode });
}
