/**
 * Wires the process together for one mode and registers the shutdown steps in order:
 * intake first, workers last.
 */
import { mkdirSync } from 'node:fs';
import type { Config } from './config.js';
import { createLifecycle } from './lifecycle.js';
import { log, setLogScrubber } from './log.js';
import { compileRedaction } from './domain/redaction/index.js';
import { PortInUseError, startIngestServer, type IngestServer } from './transport/server.js';
import { EXIT } from './cli.js';
import { VERSION } from './version.js';

export async function run(config: Readonly<Config>): Promise<void> {
  const scrub = compileRedaction(config.redaction);
  setLogScrubber((line) => scrub.redactText(line));
  const lifecycle = createLifecycle({ deadlineMs: config.pool.shutdown_drain_ms + 3000 });
  try {
    mkdirSync(config.state_dir, { recursive: true });
  } catch (e) {
    log.warn('state directory is not writable; continuing without it', { state_dir: config.state_dir, error: String(e) });
  }
  let server: IngestServer | null = null;
  let portError: string | undefined;
  try {
    server = await startIngestServer({ config });
  } catch (e) {
    if (!(e instanceof PortInUseError)) throw e;
    if (config.mode === 'server') {
      process.stderr.write(`gasoline: ${e.message}\n`);
      process.exit(EXIT.portTaken);
    }
    // Embedded: the agent's tools still answer and say what to do.
    portError = e.message;
    log.error('ingest server not started', { reason: e.message });
  }
  if (server) log.info('ingest server listening', { version: VERSION, url: `http://127.0.0.1:${server.port}`, threads: server.pool.threads });
  const closeServer = (): Promise<void> => server?.close() ?? Promise.resolve();
  if (config.mode === 'server') {
    lifecycle.onShutdown(closeServer);
    return;
  }

  // agents will read: start the scan worker now, so the first observe does not wait for a thread
  // to boot (a --server process serves no agent and never starts it)
  server?.scans.prime();
  const { startMcpStdio } = await import('./mcp/index.js');
  const mcp = await startMcpStdio({
    config,
    server,
    ...(portError ? { portError } : {}),
    stdin: process.stdin,
    stdout: process.stdout,
    onClose: (reason: string) => void lifecycle.shutdown(reason, 0),
  });
  // Shutdown order: stop answering the agent, then stop intake and the workers.
  lifecycle.onShutdown(() => mcp.close());
  lifecycle.onShutdown(closeServer);
}
