/**
 * A WebSocket producer that pairs as the extension does (issue 19 item 1): it says hello with a
 * nonce, checks the daemon's proof of the pairing key, and proves the key back. The bench probes
 * that need a paired extension (the panel's token, approvals) share it. With the extension's
 * Origin it is also the command target: the daemon sends it approval requests and commands.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { Packr, unpack } from 'msgpackr';
import { nonce, producerProof, serverProof } from '../../src/pairing/index.js';

export type Frame = Record<string, unknown>;

const packr = new Packr({ useRecords: true });

export class PairedExtension {
  private readonly frames: Frame[] = [];
  private wake: (() => void) | null = null;
  /** when each frame arrived (performance.now()), by identity: the probes time legs from it */
  readonly arrivedAt = new WeakMap<Frame, number>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const f = unpack(d as Buffer) as Frame;
      this.arrivedAt.set(f, performance.now());
      this.frames.push(f);
      this.wake?.();
    });
  }

  /** Connects, pairs with `key`, and resolves once the daemon has the proof. */
  static async connect(port: number, key: Buffer, o: { origin?: string; sessionPrefix?: string } = {}): Promise<PairedExtension> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false, ...(o.origin ? { origin: o.origin } : {}) });
    const p = new PairedExtension(ws);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const nc = nonce();
    p.send({ t: 'hello', v: 1, client: 'extension', version: 'bench', session: `${o.sessionPrefix ?? 'bench'}-${randomBytes(4).toString('hex')}`, auth: { v: 1, nonce: nc } });
    const welcome = await p.next((f) => f.t === 'welcome');
    const auth = welcome.auth as { nonce: string; proof: string };
    if (auth.proof !== serverProof(key, nc, auth.nonce)) throw new Error('the daemon did not prove the pairing key');
    p.send({ t: 'auth', proof: producerProof(key, nc, auth.nonce) });
    return p;
  }

  send(frame: Frame): void {
    this.ws.send(packr.pack(frame));
  }

  /** The first frame `match` accepts (taken off the queue); an error frame throws. */
  async next(match: (f: Frame) => boolean, timeoutMs = 5000): Promise<Frame> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex((f) => f.t === 'error' || match(f));
      if (i >= 0) {
        const f = this.frames.splice(i, 1)[0]!;
        if (f.t === 'error') throw new Error(`the daemon refused: ${String(f.code)} ${String(f.message)}`);
        return f;
      }
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        t.unref();
        this.wake = () => {
          clearTimeout(t);
          r();
        };
      });
      this.wake = null;
    }
  }

  /** The next command of `type` the daemon sends (`{t:"cmd", id, type, params, tab_id?}`). */
  nextCmd(type: string, timeoutMs?: number): Promise<Frame> {
    return this.next((f) => f.t === 'cmd' && f.type === type, timeoutMs);
  }

  /** A command's result, as the extension's command registry sends it. */
  answer(cmd: Frame, result: Frame): void {
    this.send({ t: 'result', id: cmd.id, status: 'complete', result });
  }

  async panelToken(id = 'bench'): Promise<string> {
    this.send({ t: 'panel_token', id });
    const f = await this.next((x) => x.t === 'panel_token');
    if (f.ok !== true) throw new Error(`no panel token: ${String(f.error)} ${String(f.message)}`);
    return f.token as string;
  }

  close(): void {
    this.ws.close();
  }
}
