/**
 * Server-sent events, as an OpenAI-compatible provider streams a chat completion: `data:` lines
 * (one space after the colon is dropped), comments (`:`), other fields ignored, an event ends at a
 * blank line, lines end in LF, CRLF or CR — a CRLF split across two network chunks is one line
 * end. Bounded: a line or an event longer than `maxEvent` characters throws, so a provider that
 * never sends a line end cannot grow our memory.
 */
export class SseTooLarge extends Error {
  override name = 'SseTooLarge';
}

export class SseParser {
  private line = '';
  private data: string[] = [];
  private dataChars = 0;
  private hasData = false;
  /** the last chunk ended in CR: an LF starting the next one belongs to that line end */
  private afterCr = false;

  constructor(private readonly maxEvent: number) {}

  /** Feeds decoded text; returns the data of every event the text completed, in order. */
  push(text: string): string[] {
    const out: string[] = [];
    let i = 0;
    if (this.afterCr && text.startsWith('\n')) i = 1;
    this.afterCr = false;
    while (i < text.length) {
      const cr = text.indexOf('\r', i);
      const lf = text.indexOf('\n', i);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) {
        this.line += text.slice(i);
        if (this.line.length > this.maxEvent) throw new SseTooLarge(`an SSE line passed ${this.maxEvent} characters without a line end`);
        break;
      }
      this.line += text.slice(i, end);
      this.takeLine(out);
      if (text[end] === '\r') {
        if (end + 1 === text.length) this.afterCr = true;
        else if (text[end + 1] === '\n') {
          i = end + 2;
          continue;
        }
      }
      i = end + 1;
    }
    return out;
  }

  private takeLine(out: string[]): void {
    const l = this.line;
    this.line = '';
    if (l === '') {
      if (this.hasData) out.push(this.data.join('\n'));
      this.data = [];
      this.dataChars = 0;
      this.hasData = false;
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.dataChars += value.length + 1;
    if (this.dataChars > this.maxEvent) throw new SseTooLarge(`an SSE event passed ${this.maxEvent} characters`);
    this.data.push(value);
    this.hasData = true;
  }
}
