/**
 * Build step (`pnpm build`): records what the bridge's own MCP server answers to initialize, for
 * ./fast-start.ts to send before the SDK has loaded. The answer is the SDK's, produced here by the
 * very server the bridge runs (bridgeServer), so the early answer and the late one cannot differ;
 * only protocolVersion is left out, negotiated per request as the SDK does (its supported list is
 * recorded with it). test/integration/bridge-fast-start.test.ts holds the two side by side.
 *
 *   node dist/src/bridge/answers-gen.js [out-file]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type JSONRPCMessage, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../version.js';
import type { RecordedAnswers } from './fast-start.js';
import { bridgeServer } from './index.js';

export async function recordAnswers(): Promise<RecordedAnswers> {
  // never called: the build lists and describes the tools, it calls none
  const mcp = bridgeServer(() => Promise.reject(new Error('no daemon at build time')));
  const [client, server] = InMemoryTransport.createLinkedPair();
  const answer = new Promise<JSONRPCMessage>((resolve) => {
    client.onmessage = resolve;
  });
  await mcp.connect(server);
  await client.start();
  await client.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'gasoline-build', version: VERSION } } });
  const m = await answer;
  await mcp.close();
  if (!('result' in m)) throw new Error(`the bridge's server did not answer initialize: ${JSON.stringify(m)}`);
  const { protocolVersion, ...result } = m.result as Record<string, unknown>;
  if (protocolVersion !== LATEST_PROTOCOL_VERSION) throw new Error(`initialize answered ${String(protocolVersion)}, not ${LATEST_PROTOCOL_VERSION}`);
  return { version: VERSION, latest: LATEST_PROTOCOL_VERSION, supported: [...SUPPORTED_PROTOCOL_VERSIONS], result };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2] ?? fileURLToPath(new URL('../../bridge-answers.json', import.meta.url));
  writeFileSync(out, `${JSON.stringify(await recordAnswers())}\n`);
}
