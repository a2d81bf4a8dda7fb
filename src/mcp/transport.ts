/**
 * MCP over stdio, with stdout owned by StdoutWriter. Unlike the SDK's stdio transport it answers
 * a malformed line with a JSON-RPC error instead of dropping it, and reports stdin's end so the
 * process can exit (the SDK does neither).
 */
import type { Readable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { StdoutWriter } from './stdout-writer.js';

const MAX_LINE = 4 * 1024 * 1024;

export class StdioLineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private buf = '';
  private closed = false;
  /** answers a request itself with a JSON-RPC error (e.g. an unknown tool), before the SDK sees it */
  preflight?: (message: JSONRPCMessage) => { code: number; message: string } | null;

  constructor(
    private readonly stdin: Readable,
    private readonly writer: StdoutWriter,
  ) {}

  async start(): Promise<void> {
    this.stdin.setEncoding('utf8');
    this.stdin.on('data', this.onData);
    this.stdin.on('end', this.onEnd);
    this.stdin.on('close', this.onEnd);
    this.stdin.on('error', this.onEnd);
  }

  private onData = (chunk: string): void => {
    this.buf += chunk;
    if (this.buf.length > MAX_LINE && !this.buf.includes('\n')) {
      this.buf = '';
      void this.writer.write({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `request line longer than ${MAX_LINE} bytes` } }, 'response');
      return;
    }
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).replace(/\r$/, '');
      this.buf = this.buf.slice(nl + 1);
      if (line.trim() !== '') this.handleLine(line);
    }
  };

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

  private onEnd = (): void => {
    void this.close();
  };

  async send(message: JSONRPCMessage): Promise<void> {
    const isNotification = !('id' in message);
    await this.writer.write(message, isNotification ? 'notification' : 'response');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('close', this.onEnd);
    this.stdin.off('error', this.onEnd);
    this.onclose?.();
  }
}
