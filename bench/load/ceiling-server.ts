/**
 * The ceiling: a bare uWS server doing only what the edge must do per frame — accept /ws, count
 * frames and bytes, answer hello with a pre-encoded welcome and each batch with a pre-encoded
 * ack whose seq it copies from the producer's fixed seq offset (frames.ts). No decode, no pool.
 * Driven by the same producer as Gasoline, it bounds what any server could do on this machine
 * with this client, so Gasoline's throughput is reported as a fraction of it.
 *
 *   node dist/bench/load/ceiling-server.js --port P [--seq-offset N]
 *
 * Also answers POST /logs (body read, not parsed) and GET /health with its counters. Prints
 * "listening on 127.0.0.1:P" to stderr when ready, like bin/gasoline.
 */
import { pack } from 'msgpackr';
import { uws } from '../../src/transport/uws.js';
import { buildFramePool } from './frames.js';
import { listenOrExit } from './listen.js';

const SEQ_MARK = 0xcafef00d;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(arg('--port') ?? '7998');
const seqOffset = Number(arg('--seq-offset') ?? buildFramePool(42, 1).seqOffset);

const welcome = pack({ t: 'welcome', v: 1, server_version: 'ceiling', max_frame: 1 << 20, max_events_per_batch: 1000, resume_from_seq: 0 });
const ack = Buffer.from(pack({ t: 'ack', seq: SEQ_MARK, accepted: 100, rejected: 0 }));
const ackSeqAt = ack.indexOf(Buffer.from([0xce, 0xca, 0xfe, 0xf0, 0x0d])) + 1;
if (ackSeqAt <= 0) throw new Error('ack template: seq is not a fixed-width uint32');
const httpAnswer = JSON.stringify({ received: 50, accepted: 50, rejected: 0 });

const stats = { frames: 0, bytes: 0, acks: 0, connections: 0, http_requests: 0, http_bytes: 0 };

interface Conn {
  helloed: boolean;
}

const app = uws.App();
app.ws<Conn>('/ws', {
  maxPayloadLength: 1 << 20,
  maxBackpressure: 4 << 20,
  idleTimeout: 120,
  upgrade: (res, req, ctx) => {
    res.upgrade<Conn>({ helloed: false }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), ctx);
  },
  open: () => {
    stats.connections++;
  },
  message: (ws, msg) => {
    stats.frames++;
    stats.bytes += msg.byteLength;
    const c = ws.getUserData();
    if (!c.helloed) {
      c.helloed = true;
      ws.send(welcome, true);
      return;
    }
    const v = new Uint8Array(msg);
    if (v.length < seqOffset + 4 || v[seqOffset - 1] !== 0xce) return;
    ack.set(v.subarray(seqOffset, seqOffset + 4), ackSeqAt);
    stats.acks++;
    ws.send(ack, true);
  },
  close: () => {
    stats.connections--;
  },
});
app.post('/logs', (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  stats.http_requests++;
  res.onData((chunk, last) => {
    stats.http_bytes += chunk.byteLength;
    if (!last || aborted) return;
    res.cork(() => {
      res.writeHeader('content-type', 'application/json').end(httpAnswer);
    });
  });
});
app.get('/health', (res) => {
  res.writeHeader('content-type', 'application/json').end(JSON.stringify({ status: 'ok', server: 'ceiling', ...stats }));
});

listenOrExit(app, 'ceiling', port, ` (seq offset ${seqOffset})`);
