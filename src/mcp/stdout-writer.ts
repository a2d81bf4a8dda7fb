/**
 * The one writer of stdout. Every byte MCP sends goes through here: whole JSON-RPC lines, in
 * order, never interleaved, respecting `write() === false` / 'drain'. Under pressure,
 * notifications are dropped (and counted) before a response is ever delayed behind them.
 */
import type { Writable } from 'node:stream';

export type LineKind = 'response' | 'notification';

export interface StdoutStats {
  lines: number;
  bytes: number;
  notifications_dropped: number;
  queued_bytes: number;
  broken: boolean;
}

export class StdoutWriter {
  private readonly queue: Array<{ line: string; kind: LineKind; done?: () => void }> = [];
  private queuedBytes = 0;
  private waitingDrain = false;
  private broken = false;
  private lines = 0;
  private bytes = 0;
  private dropped = 0;
  private onBroken: ((err: Error) => void) | undefined;

  constructor(
    private readonly out: Writable,
    /** queued bytes above which new notifications are dropped */
    private readonly notificationHighWater = 1024 * 1024,
  ) {
    out.on('error', (err: NodeJS.ErrnoException) => this.fail(err));
  }

  onBrokenPipe(fn: (err: Error) => void): void {
    this.onBroken = fn;
  }

  get stats(): StdoutStats {
    return { lines: this.lines, bytes: this.bytes, notifications_dropped: this.dropped, queued_bytes: this.queuedBytes, broken: this.broken };
  }

  /** Resolves when the line was handed to the stream (or dropped). */
  write(message: unknown, kind: LineKind): Promise<void> {
    if (this.broken) return Promise.resolve();
    if (kind === 'notification' && (this.waitingDrain || this.queuedBytes > this.notificationHighWater)) {
      this.dropped++;
      return Promise.resolve();
    }
    const line = `${JSON.stringify(message)}\n`;
    return new Promise((resolve) => {
      if (kind === 'response') {
        // Responses go ahead of queued notifications: an agent waits on them.
        const firstNotification = this.queue.findIndex((q) => q.kind === 'notification');
        const entry = { line, kind, done: resolve };
        if (firstNotification >= 0) this.queue.splice(firstNotification, 0, entry);
        else this.queue.push(entry);
      } else this.queue.push({ line, kind, done: resolve });
      this.queuedBytes += line.length;
      this.flush();
    });
  }

  private flush(): void {
    while (!this.waitingDrain && !this.broken && this.queue.length) {
      const q = this.queue.shift()!;
      this.queuedBytes -= q.line.length;
      this.lines++;
      this.bytes += q.line.length;
      let ok = true;
      try {
        ok = this.out.write(q.line);
      } catch (e) {
        this.fail(e as Error);
      }
      q.done?.();
      if (!ok) {
        this.waitingDrain = true;
        this.out.once('drain', () => {
          this.waitingDrain = false;
          this.flush();
        });
      }
    }
  }

  private fail(err: Error): void {
    if (this.broken) return;
    this.broken = true;
    for (const q of this.queue.splice(0)) q.done?.();
    this.queuedBytes = 0;
    this.onBroken?.(err);
  }
}
