/**
 * A real WebSocket producer speaking PROTOCOL.md v1: batches in msgpackr's record extension, as
 * the extension packs them, so its records are stored as their own bytes when nothing changes them.
 */
import WebSocket from 'ws';
import { Packr, unpack } from 'msgpackr';
import { nonce, producerProof, serverProof } from '../../src/pairing/index.js';

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

  /**
   * Says hello (as a bench producer unless `extra` says otherwise). With `key` (the server's pairing
   * secret, hex: `app.pairing` or a preseeded one) it runs the pairing handshake as the extension
   * does: checks the welcome's proof and answers with its own, so the server verifies it.
   */
  async hello(session: string, extra: Record<string, unknown> & { key?: string } = {}): Promise<ServerFrame> {
    const { key, ...fields } = extra;
    if (key === undefined) {
      this.send({ t: 'hello', v: 1, client: 'bench', version: 'test', session, ...fields });
      return this.next((f) => f.t === 'welcome');
    }
    const nc = nonce();
    this.send({ t: 'hello', v: 1, client: 'bench', version: 'test', session, auth: { v: 1, nonce: nc }, ...fields });
    const welcome = await this.next((f) => f.t === 'welcome');
    const auth = welcome.auth as { nonce: string; proof: string } | undefined;
    const secret = Buffer.from(key, 'hex');
    if (!auth || auth.proof !== serverProof(secret, nc, auth.nonce)) throw new Error('the server did not prove the pairing key');
    this.send({ t: 'auth', proof: producerProof(secret, nc, auth.nonce) });
    // The server settles auth as it arrives and a ping after it goes through a worker: its pong
    // means the proof was taken (or the socket closed), so a test may call a command right away.
    const ts = Math.random();
    this.send({ t: 'ping', ts });
    await this.next((f) => f.t === 'pong' && f.ts === ts);
    return welcome;
  }

  ackFor(seq: number, timeoutMs = 5000): Promise<ServerFrame> {
    return this.next((f) => f.t === 'ack' && (f.seq as number) >= seq, timeoutMs);
  }

  /**
   * Sends a batch (or several, in order, without waiting between them) and waits for the ack that
   * covers the last, resending after each nack once `retry_after_ms` has passed, as PROTOCOL.md asks
   * of a producer (and the extension's transport does): under load a batch that waited behind its
   * session's previous one for longer than max_queue_delay_ms, or arrived while the pool's queue was
   * that old, is refused `overloaded`, every later one of the session `out_of_order`, and a test
   * that only waits for the ack would wait for ever. One pause covers the nacks of the batches
   * behind it; the resend starts at `resume_from_seq` (never below what is already acked). An
   * `overloaded` error frame (no item slot free: it names no seq) counts as a nack of them all.
   */
  async sendUntilAcked(frames: Record<string, unknown> | Array<Record<string, unknown>>, timeoutMs = 5000): Promise<ServerFrame> {
    const list = Array.isArray(frames) ? frames : [frames];
    const seqs = list.map((f) => f.seq as number);
    const last = seqs[seqs.length - 1]!;
    const deadline = Date.now() + timeoutMs;
    let acked = seqs[0]! - 1;
    for (let nacks = 0; ; nacks++) {
      const from = this.frames.length;
      for (const f of list) if ((f.seq as number) > acked) this.send(f);
      const refusal = (x: ServerFrame): boolean => (x.t === 'nack' && seqs.includes(x.seq as number)) || (x.t === 'error' && x.code === 'overloaded');
      const f = await this.next((x) => this.frames.indexOf(x) >= from && ((x.t === 'ack' && (x.seq as number) >= last) || refusal(x)), Math.max(1, deadline - Date.now())).catch((e: Error) => {
        throw new Error(`no ack for batch ${last} within ${timeoutMs} ms (${nacks} nacks): ${e.message}`);
      });
      if (f.t === 'ack') return f;
      await new Promise((r) => setTimeout(r, Number(f.retry_after_ms ?? 250)));
      // what the server took meanwhile (acks are cumulative) is not sent again
      for (const x of this.frames.slice(from)) if (x.t === 'ack') acked = Math.max(acked, x.seq as number);
      if (acked >= last) return this.frames.slice(from).find((x) => x.t === 'ack' && (x.seq as number) >= last)!;
      // resume_from_seq is the session's applied seq + 1: what lies below it is taken
      for (const x of this.frames.slice(from)) if (x.t === 'nack' && typeof x.resume_from_seq === 'number') acked = Math.max(acked, x.resume_from_seq - 1);
    }
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
