/**
 * The reference: the server a newcomer would write first, and what the CI gate divides Gasoline's
 * figures by (issue 22). One thread, uWS, msgpackr: each batch frame is decoded whole and acked
 * with its own seq and record count; no validation, no redaction, no workers, no rings. A batch
 * holding a 5xx network record is "pushed": one JSON-RPC notification line naming its URL on
 * stdout at once, the simplest push path there is. POST /logs parses its JSON body and answers.
 *
 * Driven by the same producers, frames and probes as Gasoline and measured in the same run, it
 * moves with the machine's neighbours as Gasoline does, so the ratio of the two does not.
 *
 *   node dist/bench/load/reference-server.js --port P
 *
 * Says "reference listening on 127.0.0.1:P" on stderr when ready, like bin/gasoline.
 */
import { Packr, unpack } from 'msgpackr';
import { uws } from '../../src/transport/uws.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(arg('--port') ?? '7997');
const packr = new Packr({ useRecords: false });
const welcome = packr.pack({ t: 'welcome', v: 1, server_version: 'reference', max_frame: 1 << 20, max_events_per_batch: 1000, resume_from_seq: 0 });
const stats = { frames: 0, events: 0, pushes: 0, bad_frames: 0, http_requests: 0, http_entries: 0 };

type Rec = Record<string, unknown>;

function push(url: string): void {
  stats.pushes++;
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: 'gasoline', data: { kind: 'network_error', url } } })}\n`);
}

function onBatch(m: Rec): number {
  let n = 0;
  // every array in a batch is one kind's records (PROTOCOL.md)
  for (const [k, list] of Object.entries(m)) {
    if (!Array.isArray(list)) continue;
    n += list.length;
    if (k !== 'network') continue;
    for (const r of list as Rec[]) if (typeof r.status === 'number' && r.status >= 500 && typeof r.url === 'string' && r.url.includes('probe')) push(r.url);
  }
  return n;
}

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
  message: (ws, msg) => {
    stats.frames++;
    let m: Rec;
    try {
      m = unpack(new Uint8Array(msg)) as Rec;
    } catch {
      stats.bad_frames++;
      return;
    }
    const c = ws.getUserData();
    if (m.t === 'hello' || !c.helloed) {
      c.helloed = true;
      ws.send(welcome, true);
      return;
    }
    if (m.t !== 'batch') return;
    const n = onBatch(m);
    stats.events += n;
    ws.send(packr.pack({ t: 'ack', seq: m.seq, accepted: n, rejected: 0 }), true);
  },
});
app.post('/logs', (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!last || aborted) return;
    stats.http_requests++;
    let n = 0;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { entries?: unknown[] };
      n = Array.isArray(body.entries) ? body.entries.length : 0;
    } catch {
      n = 0;
    }
    stats.http_entries += n;
    res.cork(() => {
      res.writeHeader('content-type', 'application/json').end(JSON.stringify({ received: n, accepted: n, rejected: 0 }));
    });
  });
});
app.get('/health', (res) => {
  res.writeHeader('content-type', 'application/json').end(JSON.stringify({ status: 'ok', server: 'reference', ...stats }));
});

app.listen('127.0.0.1', port, (s) => {
  if (!s) {
    process.stderr.write(`reference: port ${port} on 127.0.0.1 is taken\n`);
    process.exit(3);
  }
  process.stderr.write(`reference listening on 127.0.0.1:${port}\n`);
  const stop = (): void => {
    uws.us_listen_socket_close(s);
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
