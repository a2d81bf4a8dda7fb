import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { expectBalanced } from '../helpers/accounting.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

const SLOW_READER = fileURLToPath(new URL('../fixtures/tools/slow-reader.py', import.meta.url));
let server: App;

beforeAll(async () => {
  // What is proved is the slow reader's own send buffer, not the pool's latency bound: with the
  // whole suite on two slow cores a batch of the other producer once waited > 250 ms for a worker,
  // was refused `overloaded` (then every later one `out_of_order`) and its ack never came
  // (2026-12-01). The bound is wide here so that only the slow reader can make anyone notice.
  server = await startTestServer({ limits: { ws_max_backpressure: 64 * 1024 }, pool: { max_queue_delay_ms: 20_000 } });
});
afterAll(async () => {
  await server.close();
});

describe('uWS backpressure', () => {
  it('a producer that stops reading gets bounded buffering, then is closed; nobody else notices', async () => {
    const other = await Producer.connect(server.port);
    await other.hello(`other-${process.pid}`);
    const hello = { t: 'hello', v: 1, client: 'bench', version: 'x', session: `slow-${process.pid}` };
    // every duplicate hello earns an error frame the slow reader never reads
    const child = spawn('python3', [SLOW_READER, String(server.port), Buffer.from(pack(hello)).toString('hex'), Buffer.from(pack(hello)).toString('hex'), '200000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let seq = 0;
    // the other producer keeps sending (one batch a poll) while the slow one is being closed
    await waitFor(
      () => `the slow reader to be closed: ${JSON.stringify(server.stats.snapshot())}`,
      () => {
        if ((server.stats.closes.overloaded ?? 0) + (server.stats.closes.input_full ?? 0) >= 1) return true;
        other.send(batch(seq++, { logs: [logRecord(seq)] }));
        return false;
      },
      60_000,
    );
    await exited;
    // the other producer was served throughout and still is
    other.send(batch(seq, { logs: [logRecord(seq)] }));
    // an ack, or the nack that explains why not (a timeout alone said nothing, 2026-12-01)
    const answer = await other.next((f) => (f.t === 'ack' && (f.seq as number) >= seq) || f.t === 'nack' || f.t === 'error', 20_000).catch((e: Error) => {
      throw new Error(`${e.message}; last frames: ${JSON.stringify(other.frames.slice(-3))}; stats: ${JSON.stringify(server.stats.snapshot())}`);
    });
    expect(answer).toMatchObject({ t: 'ack', seq });
    expect(server.ws.conns.size).toBe(1);
    expect(server.stats.nacks.overloaded ?? 0, 'the other producer was never refused').toBe(0);
    other.close();
    await expectBalanced(server);
  }, 90_000);
});
