/**
 * A streamed answer as MCP progress notifications, made safe and bounded.
 *
 * Safe: a rule cannot match a secret it sees only half of, and a provider may split one across
 * two pieces. So the accumulated answer is redacted whole each time, and only whole lines of it
 * go out (the rules match within a line); the unfinished last line waits for its newline or for
 * the answer's end.
 *
 * Bounded: at most one notification per `minIntervalMs` unless `maxPendingChars` wait (pieces
 * arriving faster coalesce), and none while the transport's gate says its backlog is over its
 * limit (an HTTP session whose stream is not read). What is held back is not lost: it goes with
 * the next notification, and the call's result carries the whole answer anyway. Refusals are
 * counted (`dropped`).
 */

export interface ProgressOptions {
  redact(s: string): string;
  /** writes one notification; a failure is only a lost preview */
  send(message: string, n: number): void;
  /** false: the transport cannot take a notification now (counted, held back) */
  gate?: () => boolean;
  /** told of each refusal by the gate */
  onDrop?: () => void;
  now?: () => number;
  minIntervalMs?: number;
  maxPendingChars?: number;
}

export const PROGRESS_MIN_INTERVAL_MS = 100;
export const PROGRESS_MAX_PENDING_CHARS = 1024;

export class ProgressStream {
  private raw = '';
  /** the redacted text already sent: what was sent is a prefix of every later redaction */
  private sent = '';
  private rawAtFlush = 0;
  private lastSent = Number.NEGATIVE_INFINITY;
  private n = 0;
  private broken = false;
  dropped = 0;

  constructor(private readonly o: ProgressOptions) {}

  /** one streamed piece of the answer */
  push(piece: string): void {
    this.raw += piece;
    const now = (this.o.now ?? Date.now)();
    const due = now - this.lastSent >= (this.o.minIntervalMs ?? PROGRESS_MIN_INTERVAL_MS) || this.raw.length - this.rawAtFlush >= (this.o.maxPendingChars ?? PROGRESS_MAX_PENDING_CHARS);
    if (due) this.flush(false, now);
  }

  /** the answer is whole: its last line may go out too */
  end(): void {
    this.flush(true, (this.o.now ?? Date.now)());
  }

  private flush(final: boolean, now: number): void {
    if (this.broken) return;
    this.rawAtFlush = this.raw.length;
    const red = this.o.redact(this.raw);
    // a match reaching back into what went out (a rule across lines) cannot be taken back: stop
    if (!red.startsWith(this.sent)) {
      this.broken = true;
      return;
    }
    const upto = final ? red.length : red.lastIndexOf('\n') + 1;
    if (upto <= this.sent.length) return;
    if (this.o.gate && !this.o.gate()) {
      this.dropped++;
      this.o.onDrop?.();
      return;
    }
    const message = red.slice(this.sent.length, upto);
    this.sent = red.slice(0, upto);
    this.lastSent = now;
    this.o.send(message, ++this.n);
  }
}
