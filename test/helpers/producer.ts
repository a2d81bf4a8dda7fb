/**
 * A real WebSocket producer speaking PROTOCOL.md v1 (msgpackr records, like the extension).
 */
import WebSocket from 'ws';
import { Packr, unpack } from 'msgpackr';

const packr = new Packr({ useRecords: true });

export type ServerFrame = Record<string, unknown> & { t: string };

export class Producer {
  readonly frames: ServerFrame[] = [];
  closeCode: number | undefined;
  closeReason = '';
  private waiters: Array<{ pred: (f: ServerFrame) => boolean; resolve: (f: ServerFrame) => void; reject: (e: Error) => void }> = [];
  private closeWaiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return;
      const f = unpack(data as Buffer) as ServerFrame;
      this.frames.push(f);
      this.waiters = this.waiters.filter((w) => {
        if (w.pred(f)) {
          w.resolve(f);
          return false;
        }
        return true;
      });
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      for (const w of this.waiters) w.reject(new Error(`socket closed ${code} ${this.closeReason}`));
      this.waiters = [];
      for (const c of this.closeWaiters) c();
    });
  }

  static connect(port: number, opts: { origin?: string; host?: string } = {}): Promise<Producer> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (opts.host) headers.host = opts.host;
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { origin: opts.origin, headers, perMessageDeflate: false });
      const p = new Producer(ws);
      ws.once('open', () => resolve(p));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`unexpected response ${res.statusCode}`), { statusCode: res.statusCode })));
    });
  }

  send(obj: unknown): void {
    this.ws.send(packr.pack(obj));
  }

  sendRaw(bytes: Uint8Array | string, binary = true): void {
    this.ws.send(bytes, { binary });
  }

  next(pred: (f: ServerFrame) => boolean, timeoutMs = 5000): Promise<ServerFrame> {
    const found = this.frames.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timed out waiting for a frame')), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (f) => {
          clearTimeout(t);
          resolve(f);
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      });
    });
  }

  async hello(session: string, extra: Record<string, unknown> = {}): Promise<ServerFrame> {
    this.send({ t: 'hello', v: 1, client: 'bench', version: 'test', session, ...extra });
    return this.next((f) => f.t === 'welcome');
  }

  ackFor(seq: number, timeoutMs = 5000): Promise<ServerFrame> {
    return this.next((f) => f.t === 'ack' && (f.seq as number) >= seq, timeoutMs);
  }

  closed(timeoutMs = 5000): Promise<void> {
    if (this.closeCode !== undefined) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timed out waiting for close')), timeoutMs);
      this.closeWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  close(): void {
    this.ws.close();
  }
}

export function logRecord(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ts: Date.now(), level: 'error', type: 'console', message: `message ${i}`, url: 'http://127.0.0.1:3000/', ...extra };
}

export function batch(seq: number, records: Record<string, unknown[]>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { t: 'batch', seq, sent_at: Date.now(), tab_id: 7, page_url: 'http://127.0.0.1:3000/', ...records, ...extra };
}
