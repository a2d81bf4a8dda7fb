/**
 * The tool dispatcher: one McpServer with the four tools (observe, analyze, configure,
 * interact — the product's maximum), the guide resource and logging, for ONE client session.
 * Any transport serves it (stdio today; an HTTP session next) by connecting its own; all the
 * sessions share the app behind the port. Errors cross this boundary once: bad arguments and
 * missing data become isError results that say what to do next.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.js';
import { GasolineError } from '../errors.js';
import { errorResult } from './error-result.js';
import { analyze } from './tools/analyze.js';
import { configure } from './tools/configure.js';
import type { ToolContext, ToolResult } from './tools/context.js';
import { observe } from './tools/observe.js';
import { DEFAULT_BUDGET } from './render/budget.js';
import { AlertDelivery, type Notify } from './alerts.js';
import { interact } from './tools/interact.js';
import { alertInScope } from './tools/tab-scope.js';
import { restoreStreaming } from './tools/streaming-saved.js';
import { unseenNote } from './tools/run-command.js';
import { createMcpShell, TOOLS } from './tool-defs.js';
import type { McpPort } from './port.js';
import { ProgressStream } from './progress.js';
import { timedTool, type OnCall } from './call-hook.js';
import type { SessionRecord, SessionTransport } from '../clients/sessions.js';

export interface ToolServerOptions {
  /** the app behind the tools */
  port: McpPort;
  /** the client this session serves: its cursors, checkpoints, noise rules and command answers */
  clientId: string;
  /** state_dir (the key/value store) and commands.wait_ms */
  config: Readonly<Config>;
  /** the transport's own figures for configure({action:"health"}) */
  mcpHealth?: () => Record<string, unknown>;
  /** sends a notification through the transport's writer; true = written, false = dropped */
  notify?: Notify;
  /** every finished tool call (metrics, the client's trail); defaults to the port's observer */
  onCall?: OnCall;
  /** a line the transport adds to the next answer (e.g. notifications it had to drop); '' = none */
  notes?: () => string;
  /** false while the transport cannot take a progress notification (its backlog is over its bound) */
  progressGate?: () => boolean;
  /** told of each progress notification held back by the gate */
  onProgressDrop?: () => void;
  /** what carries this session (the session table lists it); default stdio */
  transport?: SessionTransport;
}

/** What the SDK hands a tool handler beside its arguments. */
type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The call's cancellation and, when the caller gave a progressToken, progress notifications:
 * egress like every notification (the rules in force, applied to the whole answer so far: a
 * secret split across streamed pieces is still one match), numbered so progress only grows,
 * coalesced and held back while the transport is not keeping up (progress.ts).
 */
function callExtras(extra: CallExtra, redact: (s: string) => string, o: Pick<ToolServerOptions, 'progressGate' | 'onProgressDrop'>): Pick<ToolContext, 'progress' | 'progressEnd' | 'signal'> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { signal: extra.signal };
  const stream = new ProgressStream({
    redact,
    // a lost notification is only a lost preview: the result carries the whole answer
    send: (message, n) => void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: n, message } }).catch(() => undefined),
    ...(o.progressGate ? { gate: o.progressGate } : {}),
    ...(o.onProgressDrop ? { onDrop: o.onProgressDrop } : {}),
  });
  return { signal: extra.signal, progress: (m) => stream.push(m), progressEnd: () => stream.end() };
}

export interface ToolServer {
  mcp: McpServer;
  /** this session's row in the session table: the transport marks it degraded or ready */
  session: SessionRecord;
  alerts: AlertDelivery;
  /** detaches from the alert source and stops streaming timers */
  close(): void;
}

export function createToolServer(o: ToolServerOptions): ToolServer {
  // identity, capabilities, instructions and the guide: the same module a bridge answers from
  const mcp = createMcpShell();
  const { port, clientId } = o;
  // counted by the registry while it lasts; throws client_limit before anything is built
  const session = port.openSession(clientId, o.transport ?? 'stdio');
  const record = session.record;
  // Egress: every answer passes the same rule set the workers applied at ingest.
  const redact = (s: string): string => port.egress().redactText(s);
  const text = (s: string): ToolResult => ({ content: [{ type: 'text', text: redact(s) }] });
  // the name the client gave in initialize: read when first needed, since a standalone's first
  // initialize may be answered early (early-stdio.ts) and the SDK's own hooks then run differently
  const clientName = (): string | null => {
    if (record.clientName === null) {
      const info = mcp.server.getClientVersion();
      record.setClientName(info?.name, info?.version);
    }
    return record.clientName;
  };
  const ctx = (extra?: CallExtra): ToolContext => ({
    reader: () => port.reader(),
    fold: (q) => port.fold(q),
    port,
    client: port.client(clientId),
    clientId,
    commandWaitMs: o.config.commands.wait_ms,
    ...(clientName() ? { clientName: clientName()! } : {}),
    producers: () => port.producers(),
    alerts: alerts.pendingSource,
    text,
    redact,
    ...(extra ? callExtras(extra, redact, o) : {}),
  });
  // Alerts: the passive block on observe, a pending note on the other tools, and streaming.
  // Notifications are egress too: they pass the same rule set as every tool result.
  const send: Notify =
    o.notify ??
    (async (n) => {
      await mcp.server.notification(n);
      return true;
    });
  const alerts = new AlertDelivery((n) => send({ ...n, params: { ...n.params, data: port.egress().redactValue(n.params.data) } }), port.observer && ((ms) => port.observer?.push(ms)), port.stacks);
  // the client's tab filter applies to alerts too: another tab's alert reaches neither block nor stream
  alerts.attach(port.alerts, (a) => alertInScope(port, port.client(clientId), a));
  // OI-3: a new session starts with streaming off — unless this client enabled it before and saved
  // it (a bridge reconnecting, the daemon restarted, the agent restarted in the same project): then
  // its first initialize restores it. A later initialize in the same session starts over (off).
  let initialized = false;
  mcp.server.oninitialized = () => {
    const info = mcp.server.getClientVersion();
    record.setClientName(info?.name, info?.version);
    alerts.stream.reset();
    const client = port.client(clientId);
    if (!initialized) restoreStreaming(alerts.stream, client);
    else if (client.streaming) client.setStreaming(null);
    initialized = true;
  };
  const hook = { clientId, onCall: o.onCall ?? (port.observer && ((c) => port.observer?.call(c))), redact: (v: unknown) => port.egress().redactValue(v) };
  const timed = <A>(tool: string, fn: (a: A, extra: CallExtra) => Promise<ToolResult>) =>
    timedTool(hook, tool, (a: A, extra: CallExtra) => {
      record.touch();
      return fn(a, extra);
    });
  // what rides along on every answer: the pending-alerts note, then the transport's own
  // answers that finished while no call of this client waited (its session was lost, or it stopped
  // waiting): said once per new set, on whichever session calls next
  const told = { ids: '' };
  const note = (): string => [alerts.note(), unseenNote({ port, clientId }, told), o.notes?.() ?? ''].filter(Boolean).join('\n');
  const append = (r: ToolResult, extra: string): ToolResult => (extra ? { ...r, content: [...r.content, { type: 'text', text: redact(extra) }] } : r);
  const guard = async (fn: () => ToolResult | Promise<ToolResult>): Promise<ToolResult> => {
    try {
      return append(await fn(), note());
    } catch (e) {
      // a refusal with a code is an answer like any other: the pending-alerts note rides along
      return e instanceof GasolineError ? append(errorResult(e, redact), note()) : errorResult(e, redact);
    }
  };
  // observe carries the waiting alerts; they share the caller's budget (a quarter at most, 2 000
  // characters), so the whole result stays within it
  const observeWithAlerts = async (a: Parameters<typeof observe>[1]): Promise<ToolResult> => {
    const budget = a.budget ?? DEFAULT_BUDGET;
    await alerts.settleFrames();
    const block = alerts.prepareBlock(Math.min(2000, Math.floor(budget / 4)));
    try {
      const r = await observe(ctx(), block.text ? { ...a, reserve: block.text.length + 1 } : a);
      block.commit();
      return append(r, [block.text, o.notes?.() ?? ''].filter(Boolean).join('\n'));
    } catch (e) {
      if (!(e instanceof GasolineError)) return errorResult(e, redact);
      block.commit();
      return append(errorResult(e, redact), block.text);
    }
  };

  mcp.registerTool('observe', TOOLS.observe, timed('observe', (a) => observeWithAlerts(a)));
  mcp.registerTool('analyze', TOOLS.analyze, timed('analyze', (a, extra) => guard(() => analyze(ctx(extra), a))));
  mcp.registerTool(
    'configure',
    TOOLS.configure,
    timed('configure', (a) => guard(() => configure(ctx(), { mcpHealth: o.mcpHealth ?? (() => ({ client_id: clientId })), stateDir: o.config.state_dir, stream: alerts.stream }, a))),
  );
  mcp.registerTool('interact', TOOLS.interact, timed('interact', (a) => guard(() => interact(ctx(), a))));
  return {
    mcp,
    alerts,
    session: record,
    close: () => {
      alerts.close();
      session.close();
    },
  };
}
