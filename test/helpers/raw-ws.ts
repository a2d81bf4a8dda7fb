/**
 * A WebSocket client on a raw TCP socket, for what no well-behaved client library does: a frame
 * header announcing more than will ever be sent, and a frame trickled a few bytes at a time.
 */
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface ServerFrameRaw {
  opcode: number;
  payload: Buffer;
}

export class RawWs {
  readonly frames: ServerFrameRaw[] = [];
  closed = false;
  private buf = Buffer.alloc(0);
  private closeWaiters: Array<() => void> = [];
  private frameWaiters: Array<() => void> = [];

  private constructor(readonly sock: Socket) {
    sock.on('close', () => {
      this.closed = true;
      for (const w of this.closeWaiters.splice(0)) w();
    });
    sock.on('error', () => undefined);
  }

  /** Upgrades on /ws; resolves once the 101 arrived, rejects with the status line otherwise. */
  static open(port: number, headers: Record<string, string> = {}): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const sock = connect({ port, host: '127.0.0.1' });
      const ws = new RawWs(sock);
      let head = Buffer.alloc(0);
      const onData = (d: Buffer): void => {
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        sock.off('data', onData);
        const status = head.subarray(0, head.indexOf('\r\n')).toString();
        if (!status.includes(' 101 ')) {
          sock.destroy();
          reject(new Error(status));
          return;
        }
        sock.on('data', (x: Buffer) => ws.onBytes(x));
        if (head.length > end + 4) ws.onBytes(head.subarray(end + 4));
        resolve(ws);
      };
      sock.on('data', onData);
      sock.once('error', reject);
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      sock.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`);
    });
  }

  /** A masked binary frame header announcing `len` payload bytes, and its mask key. */
  static header(len: number, opcode = 0x2): { header: Buffer; mask: Buffer } {
    const mask = randomBytes(4);
    let h: Buffer;
    if (len < 126) h = Buffer.from([0x80 | opcode, 0x80 | len]);
    else if (len < 65536) {
      h = Buffer.alloc(4);
      h[0] = 0x80 | opcode;
      h[1] = 0x80 | 126;
      h.writeUInt16BE(len, 2);
    } else {
      h = Buffer.alloc(10);
      h[0] = 0x80 | opcode;
      h[1] = 0x80 | 127;
      h.writeBigUInt64BE(BigInt(len), 2);
    }
    return { header: Buffer.concat([h, mask]), mask };
  }

  static masked(payload: Uint8Array, mask: Buffer, offset = 0): Buffer {
    const out = Buffer.alloc(payload.length);
    for (let i = 0; i < payload.length; i++) out[i] = payload[i]! ^ mask[(offset + i) & 3]!;
    return out;
  }

  /** One whole binary frame. */
  send(payload: Uint8Array): void {
    const { header, mask } = RawWs.header(payload.length);
    this.sock.write(Buffer.concat([header, RawWs.masked(payload, mask)]));
  }

  write(bytes: Buffer): void {
    if (!this.closed) this.sock.write(bytes);
  }

  nextFrame(timeoutMs = 5000): Promise<ServerFrameRaw> {
    const seen = this.frames.length;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no frame')), timeoutMs);
      const check = (): void => {
        if (this.frames.length > seen) {
          clearTimeout(t);
          resolve(this.frames[seen]!);
        } else this.frameWaiters.push(check);
      };
      check();
    });
  }

  whenClosed(timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.closeWaiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  /** The close frame's code and reason, when the server sent one (1006 = none). */
  closeInfo(): { code: number; reason: string } {
    const f = this.frames.find((x) => x.opcode === 0x8);
    if (!f || f.payload.length < 2) return { code: 1006, reason: '' };
    return { code: f.payload.readUInt16BE(0), reason: f.payload.subarray(2).toString() };
  }

  destroy(): void {
    this.sock.destroy();
  }

  private onBytes(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      if (this.buf.length < 2) return;
      let len = this.buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) return;
      this.frames.push({ opcode: this.buf[0]! & 0x0f, payload: this.buf.subarray(off, off + len) });
      this.buf = this.buf.subarray(off + len);
      for (const w of this.frameWaiters.splice(0)) w();
    }
  }
}
