/**
 * MCP over stdio, with stdout owned by StdoutWriter. Unlike the SDK's stdio transport it answers
 * a malformed line with a JSON-RPC error instead of dropping it, and reports stdin's end so the
 * process can exit (the SDK does neither). A line longer than MAX_LINE is neither buffered nor
 * parsed: its bytes stream through a scanner that keeps only the request's id, and the line gets
 * one answer with that id (the SDK's own reader throws the buffer away at 10 MiB, id and all).
 */
import type { Readable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { RequestIdScanner } from './request-id-scan.js';
import type { StdoutWriter } from './stdout-writer.js';

/** bytes; far above any tool call's arguments (the largest, a store value, is 64 KiB) */
export const MAX_LINE = 4 * 1024 * 1024;
const NEWLINE = 0x0a;

export class StdioLineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** the line so far, as received: searched for a newline chunk by chunk, joined once */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** set while an oversize line streams past */
  private oversize: RequestIdScanner | undefined;
  private closed = false;
  /** answers a request itself with a JSON-RPC error (e.g. an unknown tool), before the SDK sees it */
  preflight?: (message: JSONRPCMessage) => { code: number; message: string } | null;

  constructor(
    private readonly stdin: Readable,
    private readonly writer: StdoutWriter,
  ) {}

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('end', this.onEnd);
    this.stdin.on('close', this.onEnd);
    this.stdin.on('error', this.onEnd);
  }

  private onData = (chunk: Buffer | string): void => {
    // bytes, not text: a newline byte never occurs inside a UTF-8 sequence, and the limit is in bytes
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start <= buf.length) {
      const nl = buf.indexOf(NEWLINE, start);
      const piece = buf.subarray(start, nl < 0 ? buf.length : nl);
      if (this.oversize) this.oversize.feed(piece);
      else if (this.partBytes + piece.length > MAX_LINE) {
        this.oversize = new RequestIdScanner();
        for (const p of this.parts) this.oversize.feed(p);
        this.oversize.feed(piece);
        this.parts = [];
        this.partBytes = 0;
      } else if (piece.length) {
        this.parts.push(piece);
        this.partBytes += piece.length;
      }
      if (nl < 0) return;
      this.endLine();
      start = nl + 1;
    }
  };

  private endLine(): void {
    const over = this.oversize;
    if (over) {
      this.oversize = undefined;
      void this.writer.write({ jsonrpc: '2.0', id: over.id, error: { code: -32600, message: `request of ${over.bytes} bytes is over the stdin line limit of ${MAX_LINE} bytes; send smaller arguments`, data: { limit_bytes: MAX_LINE, received_bytes: over.bytes } } }, 'response');
      return;
    }
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    const line = bytes.toString('utf8').replace(/\r$/, '');
    if (line.trim() !== '') this.handleLine(line);
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
