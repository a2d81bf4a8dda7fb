/**
 * The MCP room's door: MCP over stdio in --standalone mode. stdout is owned by one
 * writer; stdin closing or a broken stdout pipe ends the session (the SDK exits on neither).
 */
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../config.js';
import { deriveClientId } from '../clients/client-state.js';
import { log } from '../log.js';
import type { McpPort } from './port.js';
import type { EarlyStdio } from './early-stdio.js';
import { createToolServer } from './server.js';
import { unknownToolPreflight } from './tool-defs.js';
import { StdoutWriter } from './stdout-writer.js';
import { StdioLineTransport } from './transport.js';

export interface McpStdioOptions {
  config: Readonly<Config>;
  port: McpPort;
  /** explicit client identity; else derived from the working directory, so one project keeps its state */
  clientId?: string;
  stdin: Readable;
  stdout: Writable;
  /** called once when stdin ends or stdout breaks */
  onClose?: (reason: string) => void;
  /** what bin/gasoline read and answered before the engine loaded (./early-stdio.ts) */
  early?: EarlyStdio | null;
}

export async function startMcpStdio(o: McpStdioOptions): Promise<{ close(): Promise<void>; writer: StdoutWriter }> {
  const writer = o.early?.writer ?? new StdoutWriter(o.stdout);
  const startedAt = Date.now();
  const g = createToolServer({
    config: o.config,
    port: o.port,
    clientId: deriveClientId(o.clientId),
    mcpHealth: () => ({ uptime_s: Math.round((Date.now() - startedAt) / 1000), stdout: writer.stats }),
    // straight to the one writer, which says whether the line went out or was dropped under pressure
    notify: async (n) => {
      const before = writer.stats.notifications_dropped;
      await writer.write({ jsonrpc: '2.0', ...n }, 'notification');
      const s = writer.stats;
      const ok = !s.broken && s.notifications_dropped === before;
      if (ok) g.session.recover();
      else g.session.degrade('notifications dropped: stdout is not being read fast enough');
      return ok;
    },
  });
  const mcp = g.mcp;
  const transport = new StdioLineTransport(o.stdin, writer);
  transport.preflight = unknownToolPreflight;
  let closed = false;
  const end = (reason: string): void => {
    if (closed) return;
    closed = true;
    // stdin gone: no timer of the streaming state may outlive the session
    g.close();
    log.info('mcp session ended', { reason });
    o.onClose?.(reason);
  };
  transport.onclose = () => end('stdin closed');
  writer.onBrokenPipe((err) => {
    end(`stdout broken: ${err.message}`);
  });
  if (o.early) {
    // the bytes read early go back into stdin ahead of what comes next; the initialize among them
    // was answered already, so the SDK's answer to it is dropped
    o.early.handOver();
    transport.dropAnswerTo = o.early.answeredId();
  }
  await mcp.connect(transport);
  if (o.early) o.stdin.resume();
  return {
    writer,
    close: async () => {
      closed = true;
      g.close();
      await mcp.close().catch(() => undefined);
    },
  };
}
