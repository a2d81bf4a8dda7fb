/**
 * Newline-delimited input, bounded: what MCP over stdio reads. A line longer than MAX_LINE is
 * neither buffered nor parsed: its bytes stream through a scanner that keeps only the request's
 * id, so the one answer it gets carries that id (the SDK's own reader throws the buffer away at
 * 10 MiB, id and all). Shared by the standalone transport and the bridge's relay, which must not
 * load the SDK or zod (src/bridge/relay.ts).
 */
import type { Readable } from 'node:stream';
import { RequestIdScanner } from './request-id-scan.js';

/** bytes; far above any tool call's arguments (the largest, a store value, is 64 KiB) */
export const MAX_LINE = 4 * 1024 * 1024;
const NEWLINE = 0x0a;

export interface LineHandlers {
  line(text: string): void;
  /** a line over MAX_LINE: its top-level id (null when none was found) and its size */
  oversize(id: string | number | null, bytes: number): void;
  /** stdin ended, closed or failed: no more lines will come */
  end(): void;
}

export class LineReader {
  /** the line so far, as received: searched for a newline chunk by chunk, joined once */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** set while an oversize line streams past */
  private over: RequestIdScanner | undefined;
  private stopped = false;

  constructor(
    private readonly input: Readable,
    private readonly on: LineHandlers,
  ) {}

  start(): void {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('close', this.onEnd);
    this.input.on('error', this.onEnd);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.off('error', this.onEnd);
  }

  private onData = (chunk: Buffer | string): void => {
    // bytes, not text: a newline byte never occurs inside a UTF-8 sequence, and the limit is in bytes
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start <= buf.length) {
      const nl = buf.indexOf(NEWLINE, start);
      const piece = buf.subarray(start, nl < 0 ? buf.length : nl);
      if (this.over) this.over.feed(piece);
      else if (this.partBytes + piece.length > MAX_LINE) {
        this.over = new RequestIdScanner();
        for (const p of this.parts) this.over.feed(p);
        this.over.feed(piece);
        this.parts = [];
        this.partBytes = 0;
      } else if (piece.length) {
        this.parts.push(piece);
        this.partBytes += piece.length;
      }
      if (nl < 0) return;
      this.endLine();
      if (this.stopped) return;
      start = nl + 1;
    }
  };

  private endLine(): void {
    const over = this.over;
    if (over) {
      this.over = undefined;
      this.on.oversize(over.id, over.bytes);
      return;
    }
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    const line = bytes.toString('utf8').replace(/\r$/, '');
    if (line.trim() !== '') this.on.line(line);
  }

  private onEnd = (): void => {
    if (this.stopped) return;
    this.stop();
    this.on.end();
  };
}

/** The answer to a line over MAX_LINE. */
export function oversizeError(id: string | number | null, bytes: number): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code: -32600, message: `request of ${bytes} bytes is over the stdin line limit of ${MAX_LINE} bytes; send smaller arguments`, data: { limit_bytes: MAX_LINE, received_bytes: bytes } } };
}
