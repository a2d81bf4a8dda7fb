/**
 * Server-sent events, as the HTML standard defines the stream: `field: value` lines, an event
 * ends at a blank line, `data` lines join with newlines, `id` sets the last event id, lines
 * starting with `:` are comments (the daemon's keep-alives). Bounded: an event over `maxBytes`
 * is an error, not a buffer that grows for ever.
 */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export class SseParser {
  private buf = '';
  private data: string[] = [];
  private dataBytes = 0;
  private event = '';
  private id: string | undefined;
  /** the last event id seen, for Last-Event-ID on a reconnect */
  lastId: string | undefined;

  constructor(
    private readonly onEvent: (e: SseEvent) => void,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  /** Feeds text; throws when one event grows over the bound. */
  feed(text: string): void {
    this.buf += text;
    for (;;) {
      const nl = this.buf.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(this.buf.startsWith('\r\n', nl) ? nl + 2 : nl + 1);
      this.line(line);
    }
    if (this.buf.length + this.dataBytes > this.maxBytes) throw new Error(`server-sent event over ${this.maxBytes} bytes`);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataBytes += value.length + 1;
    } else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }

  private dispatch(): void {
    if (this.id !== undefined) this.lastId = this.id;
    if (this.data.length) this.onEvent({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
    this.data = [];
    this.dataBytes = 0;
    this.event = '';
    this.id = undefined;
  }
}
