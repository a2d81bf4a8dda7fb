/**
 * The service worker's transport, in Node against the real server (with its test-only fault
 * injection): every record arrives exactly once, in order, across dropped connections, nacks and
 * a server restart. (The browser tests cover the same path end to end, with less control.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { unpack } from 'msgpackr';
import { Transport, type SocketLike } from '../../extension/src/sw/transport.js';
import { kindId } from '../../src/domain/kinds.js';
import type { App } from '../../src/app.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { startSink, type Sink } from './helpers/sink.js';
import { readStoredRecord } from '../../src/domain/wire/stored-record.js';

const open: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/**
 * A socket that loses the first sending of every `every`-th batch on the wire and then drops the
 * connection, the way a network does: the server never sees that batch, so the transport must
 * resend it after reconnecting. Resends get through (losing them by count could lose the same
 * batch on every reconnect). A server-side drop alone only resends when it happens to catch a
 * batch in flight, which on a quiet machine it may never do.
 */
function lossySocket(url: string, every: number, lost: { seen: Set<number>; n: number }): SocketLike {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  const send = ws.send.bind(ws);
  (ws as unknown as SocketLike).send = (data: Uint8Array) => {
    const f = unpack(data) as { t?: string; seq?: number };
    const first = f.t === 'batch' && typeof f.seq === 'number' && !lost.seen.has(f.seq);
    if (first) lost.seen.add(f.seq!);
    if (first && lost.seen.size % every === 0) {
      lost.n++;
      setImmediate(() => ws.close(4000, 'test: lost a batch'));
      return;
    }
    send(data);
  };
  return ws as unknown as SocketLike;
}

function transport(port: number, createSocket?: (url: string) => SocketLike): Transport {
  const t = new Transport({
    url: `ws://127.0.0.1:${port}/ws`,
    version: 'test',
    session: `test-${Math.random().toString(36).slice(2)}`,
    // The server refuses an Origin it does not know; Node's `ws` sends none, like a local producer.
    createSocket: createSocket ?? ((url) => new WebSocket(url, { perMessageDeflate: false }) as unknown as SocketLike),
    backoffMinMs: 20,
    backoffMaxMs: 200,
    flushMs: 5,
    maxUnacked: 8,
  });
  open.push({ close: () => t.stop() });
  t.start();
  return t;
}

function feed(t: Transport, from: number, n: number, page = 'http://app.test/'): void {
  for (let i = from; i < from + n; i++) {
    t.add(1, page, { logs: [{ ts: Date.now(), level: 'log', type: 'console', message: `m ${i}`, args: ['m', i] }] });
  }
}

async function realServer(): Promise<App> {
  const server = await startTestServer({ rings: { logs: 8 * 1024 * 1024 } }, { faultInjection: true });
  open.push({ close: () => server.close() });
  return server;
}

function logs(server: App): Array<Record<string, unknown>> {
  return server.reader.read(kindId('logs'), 0, 10_000).records.map((r) => readStoredRecord(r.payload) as Record<string, unknown>);
}

function indexes(recs: Array<Record<string, unknown>>): number[] {
  return recs.map((r) => (r.args as number[])[1]!);
}

describe('transport delivery', () => {
  it('delivers every record exactly once, in order, while connections keep dropping', async () => {
    const server = await realServer();
    const lost = { seen: new Set<number>(), n: 0 };
    const t = transport(server.port, (url) => lossySocket(url, 5, lost));
    // the server drops every producer connection every 20 ms while records flow
    const dropper = setInterval(() => {
      for (const c of [...server.ws.conns]) server.ws.closeWith(c, 'shutting_down', 'test: dropping the connection');
    }, 20);
    for (let k = 0; k < 20; k++) {
      feed(t, k * 150, 150);
      await new Promise((r) => setTimeout(r, 25)); // pacing: records keep coming while connections drop
    }
    await waitFor('3000 records', () => logs(server).length >= 3000, 20_000);
    clearInterval(dropper);
    expect(indexes(logs(server))).toEqual([...Array(3000).keys()]);
    expect(server.stats.connectionsTotal).toBeGreaterThan(5);
    expect(lost.n).toBeGreaterThan(0);
    expect(t.status().counters.batches_resent).toBeGreaterThanOrEqual(lost.n);
  }, 30_000);

  it('resends from resume_from_seq after a nack', async () => {
    const server = await realServer();
    const t = transport(server.port);
    feed(t, 0, 2000, 'gasoline:nack-once');
    await waitFor('2000 records', () => logs(server).length >= 2000, 20_000);
    expect(indexes(logs(server))).toEqual([...Array(2000).keys()]);
    expect(t.status().counters.nacks).toBeGreaterThan(0);
  }, 30_000);

  it('neither loses nor repeats records across a restart of the real server', async () => {
    let sink: Sink = await startSink();
    const port = sink.port;
    const t = transport(port);
    feed(t, 0, 500);
    await waitFor('first 500', () => sink.records('logs').length >= 500 && t.status().unacked_batches === 0 && t.status().pending_records === 0);
    await sink.close();
    feed(t, 500, 500);
    await waitFor('the transport backing off with the server gone', () => t.status().state.kind === 'backoff');
    sink = await startSink(port);
    open.push(sink);
    // all acked and nothing queued: the transport has nothing left to send, so nothing more arrives
    await waitFor('next 500, all acknowledged', () => sink.records('logs').length >= 500 && t.status().unacked_batches === 0 && t.status().pending_records === 0, 15_000);
    expect(indexes(sink.records('logs'))).toEqual([...Array(500).keys()].map((i) => i + 500));
  }, 120_000); // a restart on the same port waits out TIME_WAIT (uSockets sets no SO_REUSEADDR)
});
