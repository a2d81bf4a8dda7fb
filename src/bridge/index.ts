/**
 * The bridge: what an agent's MCP config runs. MCP on stdio, answered from the same tool
 * definitions the daemon serves (so initialize, tools/list and resources/* come back at once,
 * before any daemon is up), and every tool call forwarded to the daemon on the port over one MCP
 * session. It loads no engine, worker or native module: an agent waits on its start.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ZodRawShape } from 'zod';
import { deriveClientId } from '../clients/client-id.js';
import type { Config } from '../config.js';
import { EXIT } from '../exit-codes.js';
import { log } from '../log.js';
import { StdoutWriter } from '../mcp/stdout-writer.js';
import { createMcpShell, TOOL_NAMES, TOOLS, unknownToolPreflight } from '../mcp/tool-defs.js';
import { StdioLineTransport } from '../mcp/transport.js';
import type { EarlyStart } from './fast-start.js';
import { describe, Upstream } from './upstream.js';
import { randomBytes } from 'node:crypto';

export interface BridgeOptions {
  config: Readonly<Config>;
  replace: boolean;
  daemonArgs: string[];
  /** stdin read and initialize answered before this module loaded (./fast-start.ts) */
  early?: EarlyStart | null;
}

type Forward = (name: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>;

/**
 * The bridge's MCP server: gasoline's identity and guide, and the four tools, each forwarded. The
 * build records this very server's initialize answer for ./fast-start.ts (./answers-gen.ts).
 */
export function bridgeServer(forward: Forward): McpServer {
  const mcp = createMcpShell();
  for (const name of TOOL_NAMES) {
    const def = TOOLS[name] as { description: string; inputSchema: ZodRawShape };
    // the agent's cancellation reaches the daemon: the SDK sends notifications/cancelled upstream
    mcp.registerTool(name, def, (args: Record<string, unknown>, extra) => forward(name, args, extra.signal));
  }
  return mcp;
}

/** The server's answer to an initialize answered early is the same answer again: it is not sent twice. */
function isEcho(m: JSONRPCMessage, id: string | number | null): boolean {
  return id !== null && 'id' in m && m.id === id && ('result' in m || 'error' in m);
}

/** --client-id, else this directory's id (a restarted agent finds its state), else random */
export function resolveClientId(explicit: string | undefined): string {
  try {
    return deriveClientId(explicit);
  } catch {
    // the working directory was deleted under us: no stable id to derive
    return `rnd-${randomBytes(6).toString('hex')}`;
  }
}

export async function runBridge(o: BridgeOptions): Promise<void> {
  const { config } = o;
  const connectOnly = config.mode === 'connect';
  if (connectOnly) {
    // --connect with nothing to connect to is a mistake to say at once, not a bridge that waits
    const found = await Upstream.probeOnce({ stateDir: config.state_dir, port: config.port });
    if (found.kind === 'none') {
      process.stderr.write(`gasoline: ${describe(found, config.port, config.state_dir)}\n`);
      process.exit(EXIT.noDaemon);
    }
  }
  const clientId = resolveClientId(config.client_id);
  const writer = o.early?.writer ?? new StdoutWriter(process.stdout);
  const mcp = bridgeServer((name, args, signal) => upstream.call(name, args, signal));
  const upstream = new Upstream({
    stateDir: config.state_dir,
    port: config.port,
    clientId,
    daemonArgs: o.daemonArgs,
    start: !connectOnly,
    replace: o.replace,
    // the daemon's pushes (alerts as notifications/message) go to the agent as they came
    relay: (n) => void mcp.server.notification(n as Parameters<typeof mcp.server.notification>[0]).catch(() => undefined),
  });
  const transport = new StdioLineTransport(process.stdin, writer);
  transport.preflight = unknownToolPreflight;
  const early = o.early;
  let echo: string | number | null = null;
  if (early) {
    const send = transport.send.bind(transport);
    transport.send = async (m: JSONRPCMessage) => {
      if (isEcho(m, echo)) {
        echo = null;
        return;
      }
      return send(m);
    };
  }
  let closing = false;
  const end = (reason: string): void => {
    if (closing) return;
    closing = true;
    log.info('bridge session ended', { reason });
    void upstream.close().finally(() => process.exit(EXIT.ok));
  };
  transport.onclose = () => end('stdin closed');
  writer.onBrokenPipe((err) => end(`stdout broken: ${err.message}`));
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => end(sig));
  // what was read before this module loaded goes back into stdin, ahead of what comes next
  early?.handOver();
  echo = early?.answeredId() ?? null;
  await mcp.connect(transport);
  if (early) process.stdin.resume();
  upstream.start();
  log.info('bridge ready', { port: config.port, client_id: clientId, mode: config.mode });
}
