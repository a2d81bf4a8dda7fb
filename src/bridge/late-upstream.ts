/**
 * The relay's upstream before the real one has loaded (./index.ts loads the way to the daemon
 * after the stdio side, so the agent's first request is answered at once). What the agent sends
 * meanwhile is handed over, in order, when the upstream attaches; a bridge closed before that
 * answers nothing more, as a closing bridge does.
 */
import type { Msg } from './mcp-session.js';
import type { RelayUpstream } from './relay.js';

interface Closable extends RelayUpstream {
  close(): Promise<void>;
}

export class LateUpstream implements RelayUpstream {
  private real: Closable | null = null;
  private waiting: Array<(u: Closable) => void> = [];
  private closed = false;

  attach(u: Closable): void {
    if (this.closed) {
      void u.close();
      return;
    }
    this.real = u;
    for (const w of this.waiting.splice(0)) w(u);
  }

  initialized(params: Record<string, unknown>): void {
    this.with((u) => u.initialized(params));
  }

  notify(m: Msg): void {
    this.with((u) => u.notify(m));
  }

  request(m: Msg, signal: AbortSignal, onRelated: (m: Msg) => void): Promise<Msg> {
    if (this.real) return this.real.request(m, signal, onRelated);
    return new Promise((resolve, reject) => this.waiting.push((u) => u.request(m, signal, onRelated).then(resolve, reject)));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting = [];
    await this.real?.close();
  }

  private with(fn: (u: Closable) => void): void {
    if (this.real) fn(this.real);
    else this.waiting.push(fn);
  }
}
