/**
 * Build step (`pnpm build`): records what gasoline's MCP server answers to initialize, the list
 * requests and resources/read of each resource, for a bridge to answer before (and without)
 * loading the SDK (./recorded-answers.ts). The answers are the SDK's, produced here by the server shell
 * and tool definitions the daemon serves (src/mcp/tool-defs.ts), so the bridge's answers and the
 * daemon's cannot differ; test/integration/bridge-fast-start.test.ts holds the two side by side.
 *
 *   node dist/src/mcp/recorded-answers-gen.js [out-file]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type JSONRPCMessage, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { ZodRawShape } from 'zod';
import { createMcpShell, TOOL_NAMES, TOOLS } from './tool-defs.js';
import { VERSION } from '../version.js';
import type { RecordedAnswers } from './recorded-answers.js';

/** requests without parameters whose answers the bridge gives itself */
const LISTS = ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'] as const;

/** gasoline's server as an agent sees it before calling anything: the tools are listed, never called */
function shell(): McpServer {
  const mcp = createMcpShell();
  for (const name of TOOL_NAMES) {
    const def = TOOLS[name] as { description: string; inputSchema: ZodRawShape };
    mcp.registerTool(name, def, () => Promise.reject(new Error('no tool runs at build time')));
  }
  return mcp;
}

export async function recordAnswers(): Promise<RecordedAnswers> {
  const mcp = shell();
  const [client, server] = InMemoryTransport.createLinkedPair();
  const waiting = new Map<number, (m: JSONRPCMessage) => void>();
  client.onmessage = (m) => {
    if ('id' in m && typeof m.id === 'number') waiting.get(m.id)?.(m);
  };
  await mcp.connect(server);
  await client.start();
  let next = 1;
  const ask = async (method: string, params: Record<string, unknown> = {}): Promise<JSONRPCMessage> => {
    const id = next++;
    const answer = new Promise<JSONRPCMessage>((resolve) => waiting.set(id, resolve));
    await client.send({ jsonrpc: '2.0', id, method, params });
    return answer;
  };
  const init = await ask('initialize', { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'gasoline-build', version: VERSION } });
  if (!('result' in init)) throw new Error(`the server did not answer initialize: ${JSON.stringify(init)}`);
  const { protocolVersion, ...initialize } = init.result as Record<string, unknown>;
  if (protocolVersion !== LATEST_PROTOCOL_VERSION) throw new Error(`initialize answered ${String(protocolVersion)}, not ${LATEST_PROTOCOL_VERSION}`);
  const lists: Record<string, unknown> = {};
  // a list the server does not serve (prompts: no capability) is answered by the daemon, with its error
  for (const method of LISTS) {
    const m = await ask(method);
    if ('result' in m) lists[method] = m.result;
  }
  const resources: Record<string, unknown> = {};
  for (const r of ((lists['resources/list'] as { resources?: Array<{ uri: string }> } | undefined)?.resources ?? [])) {
    const m = await ask('resources/read', { uri: r.uri });
    if (!('result' in m)) throw new Error(`resources/read ${r.uri} failed: ${JSON.stringify(m)}`);
    resources[r.uri] = m.result;
  }
  await mcp.close();
  return { version: VERSION, latest: LATEST_PROTOCOL_VERSION, supported: [...SUPPORTED_PROTOCOL_VERSIONS], initialize, lists, resources, tools: [...TOOL_NAMES] };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2] ?? fileURLToPath(new URL('../../bridge-answers.json', import.meta.url));
  writeFileSync(out, `${JSON.stringify(await recordAnswers())}\n`);
}
