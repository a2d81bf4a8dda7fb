/**
 * The MCP room's door: MCP over stdio in the embedded default mode. stdout is owned by one
 * writer; stdin closing or a broken stdout pipe ends the session (the SDK exits on neither).
 */
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../config.js';
import type { IngestServer } from '../transport/server.js';
import { log } from '../log.js';
import { createMcpServer } from './server.js';
import { StdoutWriter } from './stdout-writer.js';
import { StdioLineTransport } from './transport.js';

export interface McpStdioOptions {
  config: Readonly<Config>;
  server: IngestServer | null;
  portError?: string;
  clientId?: string;
  stdin: Readable;
  stdout: Writable;
  /** called once when stdin ends or stdout breaks */
  onClose?: (reason: string) => void;
}

export async function startMcpStdio(o: McpStdioOptions): Promise<{ close(): Promise<void>; writer: StdoutWriter }> {
  const writer = new StdoutWriter(o.stdout);
  const startedAt = Date.now();
  const mcp = createMcpServer({
    config: o.config,
    server: o.server,
    portError: o.portError,
    clientId: o.clientId,
    mcpHealth: () => ({ uptime_s: Math.round((Date.now() - startedAt) / 1000), stdout: writer.stats }),
  });
  const transport = new StdioLineTransport(o.stdin, writer);
  const tools = new Set(['observe', 'analyze', 'configure', 'interact']);
  // An unknown tool is a malformed request (JSON-RPC error), not a tool failure; the SDK would
  // answer it as an isError result.
  transport.preflight = (m) => {
    if (!('method' in m) || m.method !== 'tools/call') return null;
    const name = (m.params as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' && tools.has(name) ? null : { code: -32602, message: `unknown tool ${JSON.stringify(name)}; tools: ${[...tools].join(', ')}` };
  };
  let closed = false;
  const end = (reason: string): void => {
    if (closed) return;
    closed = true;
    log.info('mcp session ended', { reason });
    o.onClose?.(reason);
  };
  transport.onclose = () => end('stdin closed');
  writer.onBrokenPipe((err) => {
    end(`stdout broken: ${err.message}`);
  });
  await mcp.connect(transport);
  return {
    writer,
    close: async () => {
      closed = true;
      await mcp.close().catch(() => undefined);
    },
  };
}
