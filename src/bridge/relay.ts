/**
 * The bridge's stdio side: JSON-RPC lines from the agent, answered here when the answer is known
 * without the daemon (initialize, ping, the tool list, the guide: src/mcp/recorded-answers.ts), otherwise sent
 * to the daemon as they came (./upstream.ts), and the daemon's answers and pushes written back as
 * they came. It checks only the envelope (a JSON object, jsonrpc 2.0, a method or an answer, an id
 * of the right type): the daemon's MCP server validates the rest and answers in its own words.
 */
import type { Readable } from 'node:stream';
import { LineReader, oversizeError } from '../mcp/line-reader.js';
import type { StdoutWriter } from '../mcp/stdout-writer.js';
import { unknownToolError } from '../mcp/unknown-tool.js';
import { initializeResult, type RecordedAnswers, recordedResult } from '../mcp/recorded-answers.js';
import type { Id, Msg } from './mcp-session.js';

export interface RelayUpstream {
  initialized(params: Record<string, unknown>): void;
  request(m: Msg, signal: AbortSignal, onRelated: (m: Msg) => void): Promise<Msg>;
  notify(m: Msg): void;
}

export class Relay {
  /** the agent's requests in flight at the daemon: a cancellation aborts the wait here too */
  private readonly pending = new Map<Id, AbortController>();
  private readonly reader: LineReader;

  constructor(
    stdin: Readable,
    private readonly writer: StdoutWriter,
    private readonly answers: RecordedAnswers,
    private readonly upstream: RelayUpstream,
    onEnd: () => void,
  ) {
    this.reader = new LineReader(stdin, {
      line: (l) => this.onLine(l),
      oversize: (id, bytes) => this.answer(oversizeError(id, bytes)),
      end: onEnd,
    });
  }

  start(): void {
    this.reader.start();
  }

  stop(): void {
    this.reader.stop();
    for (const c of this.pending.values()) c.abort(new Error('the bridge is closing'));
    this.pending.clear();
  }

  /** A message the daemon pushed (a notification, or a request the agent answers): to stdout as is. */
  push(m: Msg): void {
    void this.writer.write(m, 'id' in m ? 'response' : 'notification');
  }

  private onLine(line: string): void {
    let m: unknown;
    try {
      m = JSON.parse(line);
    } catch (e) {
      this.answer({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `parse error: ${(e as Error).message}` } });
      return;
    }
    const kind = envelope(m);
    if (kind === 'invalid') {
      const id = isObject(m) && isId(m.id) ? m.id : null;
      this.answer({ jsonrpc: '2.0', id, error: { code: -32600, message: 'invalid JSON-RPC request' } });
      return;
    }
    const msg = m as Msg;
    if (kind === 'answer') {
      this.upstream.notify(msg);
      return;
    }
    if (kind === 'notification') {
      this.onNotification(msg);
      return;
    }
    this.onRequest(msg as Msg & { id: Id; method: string });
  }

  private onNotification(m: Msg): void {
    // the bridge's session with the daemon was initialized by the bridge itself
    if (m.method === 'notifications/initialized') return;
    if (m.method === 'notifications/cancelled') {
      const id = (m.params as { requestId?: unknown } | undefined)?.requestId;
      if (isId(id)) {
        this.pending.get(id)?.abort(new Error('cancelled by the client'));
        this.pending.delete(id);
      }
    }
    this.upstream.notify(m);
  }

  private onRequest(m: Msg & { id: Id; method: string }): void {
    const { id, method } = m;
    if (method === 'initialize') {
      const result = initializeResult(this.answers, m.params);
      if (!result) {
        this.answer({ jsonrpc: '2.0', id, error: { code: -32602, message: 'invalid initialize params: protocolVersion, capabilities and clientInfo {name, version} are required' } });
        return;
      }
      this.answer({ jsonrpc: '2.0', id, result });
      this.upstream.initialized({ ...(m.params as Record<string, unknown>), protocolVersion: result.protocolVersion });
      return;
    }
    if (method === 'ping') {
      this.answer({ jsonrpc: '2.0', id, result: {} });
      return;
    }
    const known = recordedResult(this.answers, method, m.params);
    if (known !== undefined) {
      this.answer({ jsonrpc: '2.0', id, result: known });
      return;
    }
    if (method === 'tools/call') {
      const refused = unknownToolError((m.params as { name?: unknown } | undefined)?.name, this.answers.tools);
      if (refused) {
        this.answer({ jsonrpc: '2.0', id, error: refused });
        return;
      }
    }
    const ctl = new AbortController();
    this.pending.set(id, ctl);
    this.upstream.request(m, ctl.signal, (related) => this.push(related)).then(
      (r) => {
        if (this.pending.get(id) !== ctl) return;
        this.pending.delete(id);
        this.answer(r);
      },
      () => {
        // aborted: a cancelled request gets no answer (MCP), a closing bridge writes none
        if (this.pending.get(id) === ctl) this.pending.delete(id);
      },
    );
  }

  private answer(m: Record<string, unknown>): void {
    void this.writer.write(m, 'response');
  }
}

type Envelope = 'request' | 'notification' | 'answer' | 'invalid';

/** JSON-RPC 2.0's shapes, as far as the bridge must know them to route a message. */
export function envelope(m: unknown): Envelope {
  if (!isObject(m) || m.jsonrpc !== '2.0') return 'invalid';
  if (m.params !== undefined && !isObject(m.params)) return 'invalid';
  if (typeof m.method === 'string') {
    if (!('id' in m)) return 'notification';
    return isId(m.id) ? 'request' : 'invalid';
  }
  if ('method' in m || !isId(m.id)) return 'invalid';
  return ('result' in m) !== ('error' in m) ? 'answer' : 'invalid';
}

function isId(x: unknown): x is Id {
  return typeof x === 'string' || (typeof x === 'number' && Number.isInteger(x));
}

function isObject(x: unknown): x is Record<string, unknown> {
  return !!x && typeof x === 'object' && !Array.isArray(x);
}
