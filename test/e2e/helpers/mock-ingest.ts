/**
 * A minimal PROTOCOL.md v1 server for fault injection the real one cannot be asked for on cue:
 * drop the connection after N batches before acking, nack, or stop acking. It applies each
 * (session, seq) at most once and in order, as the real server does, and keeps what it applied.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { pack, unpack } from 'msgpackr';

export interface Applied {
  session: string;
  seq: number;
  frame: Record<string, unknown>;
}

export interface MockFaults {
  /** close the socket (1011) when this many batches arrived on one connection, without acking the last */
  dropConnectionAfter?: number;
  /** answer `nack overloaded` to every n-th batch */
  nackEvery?: number;
}

export class MockIngest {
  readonly applied: Applied[] = [];
  readonly frames: Array<Record<string, unknown>> = [];
  readonly sessions = new Map<string, number>();
  duplicates = 0;
  outOfOrder = 0;
  connections = 0;
  readonly live = new Map<number, string>();
  faults: MockFaults = {};
  private batchNo = 0;
  private constructor(
    private readonly http: Server,
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  static async start(port = 0): Promise<MockIngest> {
    const http = createServer((_req, res) => res.writeHead(404).end());
    const wss = new WebSocketServer({ server: http, path: '/ws' });
    await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
    const m = new MockIngest(http, wss, (http.address() as AddressInfo).port);
    wss.on('connection', (ws) => m.onConnection(ws));
    return m;
  }

  records(kind: string): Array<Record<string, unknown>> {
    return this.applied.flatMap((a) => (a.frame[kind] as Array<Record<string, unknown>> | undefined) ?? []);
  }

  private onConnection(ws: WebSocket): void {
    const id = ++this.connections;
    ws.on('close', () => this.live.delete(id));
    let session: string | null = null;
    let perConn = 0;
    ws.on('message', (data) => {
      const f = unpack(data as Buffer) as Record<string, unknown>;
      this.frames.push(f);
      const send = (o: Record<string, unknown>): void => ws.send(pack(o));
      if (f.t === 'hello') {
        session = String(f.session);
        this.live.set(id, session);
        if (!this.sessions.has(session)) this.sessions.set(session, typeof f.last_acked_seq === 'number' ? f.last_acked_seq : -1);
        send({ t: 'welcome', v: 1, server_version: 'mock', max_frame: 1 << 20, max_events_per_batch: 1000, resume_from_seq: this.sessions.get(session)! + 1 });
        return;
      }
      if (f.t === 'ping') return send({ t: 'pong', ts: f.ts });
      if (f.t !== 'batch' || session === null) return;
      perConn++;
      this.batchNo++;
      if (this.faults.dropConnectionAfter && perConn >= this.faults.dropConnectionAfter) {
        ws.close(1011, 'mock: dropped on purpose');
        return;
      }
      const seq = f.seq as number;
      const last = this.sessions.get(session)!;
      if (this.faults.nackEvery && this.batchNo % this.faults.nackEvery === 0) {
        return send({ t: 'nack', seq, code: 'overloaded', retry_after_ms: 50, resume_from_seq: last + 1 });
      }
      if (last >= 0 && seq <= last) {
        this.duplicates++;
        return send({ t: 'ack', seq: last, accepted: 0, rejected: 0 });
      }
      if (last >= 0 && seq !== last + 1) {
        this.outOfOrder++;
        return send({ t: 'nack', seq, code: 'out_of_order', retry_after_ms: 50, resume_from_seq: last + 1 });
      }
      this.sessions.set(session, seq);
      this.applied.push({ session, seq, frame: f });
      const n = ['logs', 'network', 'network_bodies', 'ws_events', 'actions', 'perf'].reduce((a, k) => a + ((f[k] as unknown[] | undefined)?.length ?? 0), 0);
      send({ t: 'ack', seq, accepted: n, rejected: 0 });
    });
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise<void>((r) => this.http.close(() => r()));
  }
}
