/**
 * What every tool handler gets: the store, the caller's state, egress. A tool that cannot answer
 * throws GasolineError; the server maps it to the isError result once (../error-result.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ClientState } from '../../clients/client-state.js';
import { GasolineError } from '../../errors.js';
import type { FoldAnswer, FoldQuery } from '../../query/index.js';
import type { StoreReader } from '../../shm/index.js';
import type { McpPort, ProducerView } from '../port.js';

export interface PendingAlert {
  severity: 'info' | 'warning' | 'error';
  /** page text: rendered quoted */
  title: string;
  /** repeats folded into this one */
  count: number;
  /** the call that shows the evidence, e.g. observe({what:"errors"}) */
  next: string;
}

/** Read without draining: a summary names pending alerts, the passive path still delivers them. */
export interface PendingAlertSource {
  peek(limit: number): readonly PendingAlert[];
  size(): number;
  /** alerts held back over the rate caps that alerts reaching this session named since the last call (#20 item 2) */
  takeHeld?(): number;
}

export type ToolResult = CallToolResult;

export interface ToolContext {
  /** the reader; throws GasolineError no_ingest saying why there is no data (e.g. port taken) and what to do */
  reader(): StoreReader;
  /** a folded read of the rings, run by the scan worker; rejects with GasolineError (no_ingest, scan_busy, scan_failed) */
  fold(q: FoldQuery): Promise<FoldAnswer>;
  /** the app behind the tools: health, redaction rules, commands (what reader/fold do not cover) */
  port: McpPort;
  client: ClientState;
  /** the caller's identity: commands and their answers are keyed by it */
  clientId: string;
  /** how long a command call waits before answering with a query id */
  commandWaitMs: number;
  /** the name the client gave in initialize (clientInfo), shown to the user in an approval */
  clientName?: string;
  producers(): ProducerView[];
  /** alerts waiting for this client, when an alert source is wired in (observe summary lists them) */
  alerts?: PendingAlertSource;
  text(s: string): ToolResult;
  /** the rule set in force, for what we write to disk */
  redact(s: string): string;
  /**
   * A progress notification for this call (redacted like every notification), when the caller
   * asked for them with _meta.progressToken; absent otherwise.
   */
  progress?: (message: string) => void;
  /** the streamed answer is whole: what progress held back (its last line) may go */
  progressEnd?: () => void;
  /** aborted when the caller cancels this call */
  signal?: AbortSignal;
}

/** Why there is no browser data (the no_ingest error reader() would throw), or undefined when there is. */
export function noIngest(ctx: ToolContext): GasolineError | undefined {
  try {
    ctx.reader();
    return undefined;
  } catch (e) {
    if (e instanceof GasolineError) return e;
    throw e;
  }
}
