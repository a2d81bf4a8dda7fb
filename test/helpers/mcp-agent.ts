/** An agent in the test process: the real MCP server on a real ingest server, through the SDK client. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadConfig } from '../../src/config.js';
import { createToolServer } from '../../src/mcp/server.js';
import type { App } from '../../src/app.js';

export async function connectAgent(server: App, stateDir: string, clientId: string, flags: Record<string, unknown> = {}): Promise<Client> {
  const config = loadConfig({ env: {}, flags: { state_dir: stateDir, port: server.port, ...flags } });
  const mcp = createToolServer({ config, port: server.mcp, clientId }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: clientId, version: '1' });
  await client.connect(b);
  return client;
}

/** Every text block of a tool result, joined (the answer, then what rides along: alerts). */
export async function callTool(c: Client, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const r = await c.callTool({ name, arguments: args });
  return { text: (r.content as Array<{ text: string }>).map((x) => x.text).join('\n'), isError: r.isError === true };
}
