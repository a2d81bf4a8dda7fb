/** What every tool handler gets: the store (or why there is none), the caller's state, egress. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ClientState } from '../../clients/client-state.js';
import type { StoreReader } from '../../shm/index.js';
import type { IngestServer } from '../../transport/server.js';
import type { ProducerInfo } from '../../transport/ws.js';

export type ToolResult = CallToolResult;

export interface ToolContext {
  /** the reader, or a message saying why there is no data (e.g. port taken) */
  reader(): StoreReader | string;
  server: IngestServer | null;
  client: ClientState;
  /** the caller's identity: commands and their answers are keyed by it */
  clientId: string;
  /** how long a command call waits before answering with a query id */
  commandWaitMs: number;
  producers(): ProducerInfo[];
  text(s: string): ToolResult;
  error(s: string): ToolResult;
}
