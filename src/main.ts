/**
 * Runs the daemon (--server) or the single process (--standalone): builds the app, serves MCP
 * over stdio when standalone,
 * and registers the shutdown steps in order: the agent's session first, then the app (intake
 * first, workers last).
 */
import { mkdirSync } from 'node:fs';
import type { Config } from './config.js';
import { createLifecycle } from './lifecycle.js';
import { log, setLogScrubber } from './log.js';
import { enableDaemonLog } from './log-file.js';
import { compileRedaction } from './domain/redaction/index.js';
import { startApp, type App } from './app.js';
import { offlinePort } from './app-port.js';
import { EXIT } from './exit-codes.js';
import type { EarlyStdio } from './mcp/early-stdio.js';
import type { McpPort } from './mcp/port.js';
import { PortInUseError } from './transport/edge.js';
import { DIR_MODE, secureStateDir } from './state-dir.js';
import { VERSION } from './version.js';

export async function run(config: Readonly<Config>, early: EarlyStdio | null = null, threadsAtStart?: readonly number[]): Promise<void> {
  const scrub = compileRedaction(config.redaction);
  setLogScrubber((line) => scrub.redactText(line));
  const lifecycle = createLifecycle({ deadlineMs: config.pool.shutdown_drain_ms + 3000 });
  try {
    mkdirSync(config.state_dir, { recursive: true, mode: DIR_MODE });
  } catch (e) {
    log.warn('state directory is not writable; continuing without it', { state_dir: config.state_dir, error: String(e) });
  }
  // before anything listens: a state dir others may read is repaired, or the process refuses
  // (StateDirError → exit 4, src/cli.ts)
  const fixed = secureStateDir(config.state_dir);
  if (fixed.length) log.warn('state directory modes were not ours alone; set to 0700 (files 0600)', { state_dir: config.state_dir, fixed: fixed.length, first: fixed.slice(0, 5) });
  if (config.mode === 'server') enableDaemonLog(config.state_dir, config.port);
  let app: App | null = null;
  let port: McpPort;
  try {
    // a standalone opens /mcp to the side panel only (panel tokens; it has no bridges)
    app = await startApp({ config, mcpHttp: config.mode === 'server' ? true : 'panel', threadsAtStart });
    port = app.mcp;
    log.info('ingest server listening', { version: VERSION, url: `http://127.0.0.1:${app.port}`, threads: app.pool.threads });
  } catch (e) {
    if (!(e instanceof PortInUseError)) throw e;
    if (config.mode === 'server') {
      process.stderr.write(`gasoline: ${e.message}\n`);
      process.exit(EXIT.portTaken);
    }
    // Standalone: the agent's tools still answer and say what to do.
    port = offlinePort(config, e.message);
    log.error('ingest server not started', { reason: e.message });
  }
  const closeApp = (): Promise<void> => app?.close() ?? Promise.resolve();
  // Registered before anything else is awaited: a SIGTERM that lands while the MCP side is still
  // loading must still close the producers' sockets with 1001 (it found no steps and exited,
  // and producers saw 1006). Order: stop answering the agent, then intake, then the workers.
  let mcp: { close(): Promise<void> } | undefined;
  lifecycle.onShutdown(() => mcp?.close());
  lifecycle.onShutdown(closeApp);
  if (config.mode === 'server') return;

  // the scan worker starts on the first read that needs it (src/pool/scan-worker.ts), not here
  const { startMcpStdio } = await import('./mcp/index.js');
  if (lifecycle.stopping) return;
  mcp = await startMcpStdio({
    config,
    ...(config.client_id ? { clientId: config.client_id } : {}),
    port,
    stdin: process.stdin,
    stdout: process.stdout,
    onClose: (reason: string) => void lifecycle.shutdown(reason, 0),
    early,
  });
}
