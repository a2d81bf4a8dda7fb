/**
 * The app's side of the MCP port (src/mcp/port.ts): the running ingest behind it, or — when
 * another process holds the port — an answer that says so and what to do, so an agent's
 * tools still respond.
 */
import type { Config } from './config.js';
import { gasolineError } from './errors.js';
import { ClientRegistry } from './clients/registry.js';
import { SessionTable, type SessionTransport } from './clients/sessions.js';
import { ApprovalBook } from './domain/approvals/book.js';
import type { CommandRouter } from './clients/commands.js';
import type { AlertHub } from './domain/alerts/hub.js';
import type { CiResults } from './domain/ci-results.js';
import { compileRedaction, type LiveRedaction } from './domain/redaction/index.js';
import { emptyFold } from './query/index.js';
import type { ClientSession, McpObserver, McpPort } from './mcp/port.js';
import type { ScanWorker } from './pool/scan-worker.js';
import type { StackResolver } from './sourcemaps/index.js';
import type { ModelGateway } from './model/index.js';
import type { StoreReader } from './shm/index.js';
import type { WsEdge } from './transport/ws.js';

export interface IngestParts {
  reader: StoreReader;
  scans: ScanWorker;
  ws: WsEdge;
  health: () => Record<string, unknown>;
  redaction: LiveRedaction;
  commands: CommandRouter;
  alerts: AlertHub;
  ci: CiResults;
  clients: ClientRegistry;
  observer: McpObserver;
  stacks: StackResolver;
  sessions: SessionTable;
  approvals: ApprovalBook;
  model: ModelGateway;
}

export function ingestPort(p: IngestParts): McpPort {
  return {
    reader: () => p.reader,
    // the user rules added at run time travel with every folded read (src/query/read-rules.ts)
    fold: (q) => {
      const reads = p.redaction.readSpec();
      const full = reads ? { ...q, reads } : q;
      // every cursor at its ring's head: the worker would read nothing, and that is answered here
      // (now and then the worker still gets it, to keep what the next read needs ready)
      const empty = emptyFold(p.reader, full);
      if (!empty) return p.scans.run(full);
      p.scans.keepWarm(full);
      return Promise.resolve(empty);
    },
    producers: () => p.ws.producers(),
    unverifiedRecords: () => p.ws.unverified.records,
    health: () => p.health(),
    egress: () => p.redaction.engine,
    rules: p.redaction,
    commands: p.commands,
    alerts: p.alerts,
    ci: () => p.ci.list(),
    client: (id) => p.clients.get(id),
    observer: p.observer,
    stacks: p.stacks,
    openSession: (id, transport) => openSession(p.clients, p.sessions, id, transport),
    peekClient: (id) => p.clients.peek(id),
    approvals: p.approvals,
    model: p.model,
  };
}

function openSession(clients: ClientRegistry, table: SessionTable, id: string, transport: SessionTransport): ClientSession {
  // throws client_limit before a row is made
  const state = clients.open(id);
  const record = table.open(id, transport);
  let open = true;
  return {
    state,
    record,
    close: () => {
      if (!open) return;
      open = false;
      record.close();
      clients.close(id);
    },
  };
}

/** The app's approval book from the config's approvals section. */
export function approvalBook(config: Readonly<Config>): ApprovalBook {
  const a = config.approvals;
  return new ApprovalBook({ policy: { ...a.policy }, watch: a.watch, tokenTtlMs: a.token_ttl_ms, requestTtlMs: a.request_ttl_ms });
}

/** Embedded mode with the port taken: every read says why there is no data and how to fix it. */
export function offlinePort(config: Readonly<Config>, reason: string, clients = new ClientRegistry({ dir: config.state_dir, max: config.clients.max, ttlMs: config.clients.ttl_s * 1000 })): McpPort {
  const why = `no browser data: the ingest server is not running (${reason}). Stop the other process on port ${config.port} or set GASOLINE_PORT, then restart this MCP server.`;
  // egress still applies the configured rules: nothing else redacts when no worker runs
  const engine = compileRedaction(config.redaction);
  const sessions = new SessionTable({ closedTtlMs: config.sessions.closed_ttl_s * 1000 });
  return {
    reader: () => {
      throw gasolineError('no_ingest', why);
    },
    fold: () => Promise.reject(gasolineError('no_ingest', why)),
    producers: () => [],
    health: () => ({ status: 'no_ingest', reason: why }),
    egress: () => engine,
    rules: null,
    commands: null,
    alerts: null,
    client: (id) => clients.get(id),
    openSession: (id, transport) => openSession(clients, sessions, id, transport),
    peekClient: (id) => clients.peek(id),
    // with no extension to ask, an action that needs asking is refused with what to change
    approvals: approvalBook(config),
  };
}
