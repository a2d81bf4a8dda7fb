/**
 * The MCP server: the four tools (observe, analyze, configure, interact — the product's
 * maximum), the guide resource, logging. Errors cross this boundary once: bad
 * arguments and missing data become isError results that say what to do next.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Config } from '../config.js';
import { compileRedaction } from '../domain/redaction/index.js';
import { ClientRegistry, deriveClientId } from '../clients/client-state.js';
import type { IngestServer } from '../transport/server.js';
import { VERSION } from '../version.js';
import { GUIDE, INSTRUCTIONS } from './guide.js';
import { analyze, AnalyzeInput } from './tools/analyze.js';
import { configure, ConfigureInput } from './tools/configure.js';
import type { ToolContext, ToolResult } from './tools/context.js';
import { observe, ObserveInput } from './tools/observe.js';
import { interact, InteractInput } from './tools/interact.js';

export interface McpDeps {
  config: Readonly<Config>;
  server: IngestServer | null;
  portError?: string | undefined;
  clientId?: string | undefined;
  /** egress redaction of every text we return */
  redact?: (s: string) => string;
  mcpHealth?: () => Record<string, unknown>;
}

export function createMcpServer(deps: McpDeps): McpServer {
  const mcp = new McpServer(
    { name: 'gasoline', version: VERSION },
    { capabilities: { tools: {}, logging: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  const clients = new ClientRegistry();
  const clientId = deriveClientId(deps.clientId);
  // Egress: every answer passes the same rule set the workers applied at ingest.
  const own = compileRedaction(deps.config.redaction);
  const engine = () => deps.server?.pool.redaction.engine ?? own;
  const redact = deps.redact ?? ((s: string) => engine().redactText(s));
  const text = (s: string): ToolResult => ({ content: [{ type: 'text', text: redact(s) }] });
  const error = (s: string): ToolResult => ({ content: [{ type: 'text', text: redact(s) }], isError: true });
  const ctx = (): ToolContext => ({
    reader: () =>
      deps.server?.reader ??
      `no browser data: the ingest server is not running (${deps.portError ?? 'not started'}). Stop the other process on port ${deps.config.port} or set GASOLINE_PORT, then restart this MCP server.`,
    server: deps.server,
    client: clients.get(clientId),
    clientId,
    commandWaitMs: deps.config.commands.wait_ms,
    producers: () => deps.server?.ws.producers() ?? [],
    text,
    error,
  });
  const guard = async (fn: () => ToolResult | Promise<ToolResult>): Promise<ToolResult> => {
    try {
      return await fn();
    } catch (e) {
      return error(`internal error: ${(e as Error).message}; the server keeps running — retry, or check configure({action:"health"})`);
    }
  };

  mcp.registerTool(
    'observe',
    { description: 'What the browser did, new since you last looked. Start with what:"errors". See gasoline://guide.', inputSchema: ObserveInput },
    (a) => guard(() => observe(ctx(), a)),
  );
  mcp.registerTool(
    'analyze',
    { description: 'Conclusions: error_clusters, performance, changes, security; live page via the extension: dom, page_info, accessibility.', inputSchema: AnalyzeInput },
    (a) => guard(() => analyze(ctx(), a)),
  );
  mcp.registerTool(
    'configure',
    { description: 'health, clear, checkpoint, noise_rule, store.', inputSchema: ConfigureInput },
    (a) => guard(() => configure(ctx(), { stateDir: deps.config.state_dir, mcpHealth: deps.mcpHealth ?? (() => ({ client_id: clientId })) }, a)),
  );
  mcp.registerTool(
    'interact',
    { description: 'Drive the page (needs "Allow agent control" in the extension popup). See gasoline://guide.', inputSchema: InteractInput },
    (a) => guard(() => interact(ctx(), a)),
  );
  mcp.registerResource('guide', 'gasoline://guide', { title: 'How to use Gasoline', mimeType: 'text/markdown' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/markdown', text: GUIDE }],
  }));
  return mcp;
}
