/**
 * What the tools may ask of the running app, and nothing more. The MCP side defines it and the
 * composition root (src/app.ts) implements it, so mcp/ depends on no transport or pool module,
 * and every transport (stdio today, an HTTP session next) serves the same tools over one app.
 */
import type { ClientState } from '../clients/client-state.js';
import type { CommandRouter } from '../clients/commands.js';
import type { SessionRecord, SessionTransport } from '../clients/sessions.js';
import type { ApprovalBook } from '../domain/approvals/book.js';
import type { AlertEnvelope } from '../domain/alerts/alert.js';
import type { StoredCiResult } from '../domain/ci-results.js';
import type { LiveRedaction, RedactionEngine } from '../domain/redaction/index.js';
import type { StoreReader } from '../shm/index.js';
import type { FoldAnswer, FoldQuery } from '../query/index.js';
import type { StackResolver } from '../sourcemaps/index.js';
import type { ModelGateway } from '../model/index.js';

/** A connected producer as the tools show it (the extension, a CI sink, a test harness). */
export interface ProducerView {
  id: number;
  client: string;
  version: string;
  session: string;
  connected_at: string;
  /** proved the pairing secret (docs/SECURITY.md); an unverified producer gets no commands */
  verified?: boolean;
}

/** Commands to the extension, each keyed by the client that asked; answers route back to it. */
export type CommandPort = Pick<CommandRouter, 'start' | 'wait' | 'release' | 'get' | 'unseen'>;

/** The rule set in force, which configure({action:"redaction"}) lists, tests and edits. */
export type RedactionRules = Pick<LiveRedaction, 'engine' | 'version' | 'add' | 'remove'>;

/** Where alerts come from; a session subscribes for its lifetime. */
export interface AlertSource {
  subscribe(fn: (env: AlertEnvelope) => void): () => void;
  /** alerts the workers held back over the rate caps since start */
  heldTotal?(): number;
}

/** One finished tool call, as metrics and the client's trail see it. */
export interface ToolCall {
  clientId: string;
  /** one of the tools the dispatcher registered: a fixed set */
  tool: string;
  /** the parsed arguments, already through egress redaction */
  args: unknown;
  /** characters of text in the answer */
  resultChars: number;
  ms: number;
  isError: boolean;
  /** the error catalog code an isError answer starts with */
  code?: string;
}

/** What the app wants to know of every session's work, whatever transport carries it. */
export interface McpObserver {
  call(c: ToolCall): void;
  /** a streamed alert's edge → notification-written latency */
  push(ms: number): void;
}

export interface ClientSession {
  readonly state: ClientState;
  /** this session's row in the session table (/health, `gasoline --status`) */
  readonly record: SessionRecord;
  close(): void;
}

export interface McpPort {
  /** the shared store; throws GasolineError no_ingest saying why there is none (e.g. the port was taken) */
  reader(): StoreReader;
  /** a folded read of the rings, off the main thread; rejects with no_ingest, scan_busy or scan_failed */
  fold(q: FoldQuery): Promise<FoldAnswer>;
  producers(): ProducerView[];
  /** records stored from producers that did not prove pairing (pairing.unpaired "mark") */
  unverifiedRecords?(): number;
  /** the /health report, or why there is no ingest */
  health(): Record<string, unknown>;
  /** egress: every answer and notification passes the rule set the workers applied at ingest */
  egress(): RedactionEngine;
  /** null without ingest: rules nobody ingests under would only mislead */
  readonly rules: RedactionRules | null;
  /** null without ingest: no extension can connect */
  readonly commands: CommandPort | null;
  readonly alerts: AlertSource | null;
  /** the CI results kept (POST /ci-result), oldest first; absent without ingest */
  readonly ci?: () => readonly StoredCiResult[];
  /** one state per client identity, shared by all of that client's sessions; throws client_limit */
  client(id: string): ClientState;
  /** metrics and per-client trails; absent without ingest */
  readonly observer?: McpObserver;
  /**
   * A session of this client begins (createToolServer calls it): /health counts it, the client is
   * not purged while it lasts, and its state is written when it ends. Throws GasolineError
   * client_limit when every client slot holds a client with a session open. close() is idempotent.
   */
  openSession(id: string, transport: SessionTransport): ClientSession;
  /** who may run mutating and destructive actions (src/domain/approvals/book.ts): one book per app */
  readonly approvals: ApprovalBook | null;
  /** source-mapped stacks: original positions for generated frames; absent without ingest */
  readonly stacks?: StackResolver;
  /** another client's state, held or saved, without creating it: `B:before` reaches B's checkpoint */
  peekClient(id: string): ClientState | undefined;
  /** the model analyze triage asks, behind the redaction gateway (src/model/); absent without ingest */
  readonly model?: Pick<ModelGateway, 'ask' | 'adapter'>;
}
