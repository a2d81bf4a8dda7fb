/**
 * MCP over stdio, with stdout owned by StdoutWriter. Unlike the SDK's stdio transport it answers
 * a malformed line with a JSON-RPC error instead of dropping it, and reports stdin's end so the
 * process can exit (the SDK does neither). Lines are read, bounded, by ./line-reader.ts.
 */
import type { Readable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineReader, oversizeError } from './line-reader.js';
import type { StdoutWriter } from './stdout-writer.js';

export { MAX_LINE } from './line-reader.js';

export class StdioLineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly reader: LineReader;
  private closed = false;
  /** answers a request itself with a JSON-RPC error (e.g. an unknown tool), before the SDK sees it */
  preflight?: (message: JSONRPCMessage) => { code: number; message: string } | null;
  /** a request already answered before the server loaded (./early-stdio.ts): the SDK's answer to it is not sent twice */
  dropAnswerTo: string | number | null = null;

  constructor(
    stdin: Readable,
    private readonly writer: StdoutWriter,
  ) {
    this.reader = new LineReader(stdin, {
      line: (l) => this.handleLine(l),
      oversize: (id, bytes) => void this.writer.write(oversizeError(id, bytes), 'response'),
      end: () => void this.close(),
    });
  }

  async start(): Promise<void> {
    this.reader.start();
  }

  private handleLine(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      void this.writer.write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `parse error: ${(e as Error).message}` } }, 'response');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const id = raw && typeof raw === 'object' && 'id' in raw ? ((raw as { id: unknown }).id as string | number | null) : null;
      void this.writer.write({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: -32600, message: 'invalid JSON-RPC request' } }, 'response');
      return;
    }
    const refused = this.preflight?.(parsed.data);
    if (refused && 'id' in parsed.data) {
      void this.writer.write({ jsonrpc: '2.0', id: parsed.data.id, error: refused }, 'response');
      return;
    }
    this.onmessage?.(parsed.data);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.dropAnswerTo !== null && 'id' in message && message.id === this.dropAnswerTo && ('result' in message || 'error' in message)) {
      this.dropAnswerTo = null;
      return;
    }
    const isNotification = !('id' in message);
    await this.writer.write(message, isNotification ? 'notification' : 'response');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reader.stop();
    this.onclose?.();
  }
}
