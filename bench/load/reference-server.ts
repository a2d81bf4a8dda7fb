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
 * `--hops`: the same, but along the hops Gasoline's push takes behind a bridge — each batch goes
 * to a worker thread and its answer back (postMessage), and the line leaves through another
 * process (a relay this one starts, fed over loopback TCP, writing to the same stdout). No work is
 * added, only the wake-ups: what a thread or process hand-off costs depends on the machine's
 * scheduler, not its CPU speed, so a push ratio to the plain reference moved from 3.2–4.4 here to
 * 5.9 on CI's quieter, faster machine with nothing changed; to this one it should not.
 *
 *   node dist/bench/load/reference-server.js --port P [--hops]
 *
 * Says "reference listening on 127.0.0.1:P" on stderr when ready, like bin/gasoline.
 */
import { spawn } from 'node:child_process';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { Packr, unpack } from 'msgpackr';
import type { WebSocket } from '../../src/transport/uws.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

type Rec = Record<string, unknown>;

/** a batch's record count and the probe URLs it pushes (a 5xx network record naming "probe") */
function readBatch(m: Rec): { n: number; urls: string[] } {
  let n = 0;
  const urls: string[] = [];
  // every array in a batch is one kind's records (PROTOCOL.md)
  for (const [k, list] of Object.entries(m)) {
    if (!Array.isArray(list)) continue;
    n += list.length;
    if (k !== 'network') continue;
    for (const r of list as Rec[]) if (typeof r.status === 'number' && r.status >= 500 && typeof r.url === 'string' && r.url.includes('probe')) urls.push(r.url);
  }
  return { n, urls };
}

if (!isMainThread) {
  // --hops' worker: decodes what main hands it and answers with what main acks and pushes
  parentPort!.on('message', (frame: Uint8Array) => {
    let m: Rec | null = null;
    try {
      m = unpack(frame) as Rec;
    } catch {
      m = null;
    }
    parentPort!.postMessage(m && m.t === 'batch' ? { seq: m.seq, ...readBatch(m) } : { seq: null, n: 0, urls: [] });
  });
} else if (process.argv.includes('--relay')) {
  // --hops' second process: every byte from the socket to stdout; gone when the socket is
  const sock = createConnection({ host: '127.0.0.1', port: Number(arg('--relay')) });
  sock.setNoDelay(true);
  sock.pipe(process.stdout);
  sock.on('close', () => process.exit(0));
  sock.on('error', () => process.exit(1));
} else {
  await serve();
}

interface Conn {
  helloed: boolean;
  closed: boolean;
}

/**
 * Starts the relay process (this file, `--relay PORT`) on our own stdout and resolves with the
 * socket that feeds it, once it has connected. Its stdout is ours (inherited), so the reader sees
 * one stream either way; it exits when this process does (the socket closes).
 */
function startRelay(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const server = createServer((sock) => {
      sock.setNoDelay(true);
      server.close();
      resolve(sock);
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const relay = spawn(process.execPath, [fileURLToPath(import.meta.url), '--relay', String((server.address() as AddressInfo).port)], { stdio: ['ignore', 'inherit', 'inherit'] });
      relay.on('exit', (code) => reject(new Error(`relay exited with ${code} before connecting`)));
    });
  });
}

async function serve(): Promise<void> {
  // here, not at the top: the worker and the relay run this file too and need no uWS
  const { uws } = await import('../../src/transport/uws.js');
  const { listenOrExit } = await import('./listen.js');
  const port = Number(arg('--port') ?? '7997');
  const hops = process.argv.includes('--hops');
  const packr = new Packr({ useRecords: false });
  const welcome = packr.pack({ t: 'welcome', v: 1, server_version: 'reference', max_frame: 1 << 20, max_events_per_batch: 1000, resume_from_seq: 0 });
  const stats = { frames: 0, events: 0, pushes: 0, bad_frames: 0, http_requests: 0, http_entries: 0 };

  let out: { write: (s: string) => unknown } = process.stdout;
  let worker: Worker | null = null;
  // the worker answers in order, so its answers pair with this queue's heads; the connection's
  // own data is kept beside it: uWS says a socket may not be used after its close event, its
  // user data included (this build tolerates it; the contract does not)
  const waiting: Array<{ ws: WebSocket<Conn>; c: Conn }> = [];
  if (hops) {
    out = await startRelay();
    worker = new Worker(fileURLToPath(import.meta.url), { stdout: true, stderr: true });
    worker.on('message', (a: { seq: unknown; n: number; urls: string[] }) => {
      const from = waiting.shift();
      for (const url of a.urls) push(url);
      if (a.seq === null) {
        stats.bad_frames++;
        return;
      }
      stats.events += a.n;
      if (from && !from.c.closed) from.ws.send(packr.pack({ t: 'ack', seq: a.seq, accepted: a.n, rejected: 0 }), true);
    });
    worker.on('error', (e) => {
      process.stderr.write(`reference: worker failed: ${String(e)}\n`);
      process.exit(4);
    });
  }

  function push(url: string): void {
    stats.pushes++;
    out.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: 'gasoline', data: { kind: 'network_error', url } } })}\n`);
  }

  const app = uws.App();
  app.ws<Conn>('/ws', {
    maxPayloadLength: 1 << 20,
    maxBackpressure: 4 << 20,
    idleTimeout: 120,
    upgrade: (res, req, ctx) => {
      res.upgrade<Conn>({ helloed: false, closed: false }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), ctx);
    },
    message: (ws, msg) => {
      stats.frames++;
      const c = ws.getUserData();
      if (worker && c.helloed) {
        // the frame's bytes live only in this callback: a copy crosses, transferred
        const frame = new Uint8Array(msg.slice(0));
        waiting.push({ ws, c });
        worker.postMessage(frame, [frame.buffer]);
        return;
      }
      let m: Rec;
      try {
        m = unpack(new Uint8Array(msg)) as Rec;
      } catch {
        stats.bad_frames++;
        return;
      }
      if (m.t === 'hello' || !c.helloed) {
        c.helloed = true;
        ws.send(welcome, true);
        return;
      }
      if (m.t !== 'batch') return;
      const { n, urls } = readBatch(m);
      for (const url of urls) push(url);
      stats.events += n;
      ws.send(packr.pack({ t: 'ack', seq: m.seq, accepted: n, rejected: 0 }), true);
    },
    close: (ws) => {
      ws.getUserData().closed = true;
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

  listenOrExit(app, 'reference', port);
}
