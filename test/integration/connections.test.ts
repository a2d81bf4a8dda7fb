/**
 * Local denial of service and producer impersonation at the WebSocket edge (issue #18 items 4,
 * 5 and 8), each reproduced through real sockets against the real app: a flood of hellos from one
 * process, frames announced far beyond max_frame or trickled for ever, and a local process that
 * says hello as the extension without our extension's Origin.
 */
import { pack } from 'msgpackr';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { Producer, type ServerFrame } from '../helpers/producer.js';
import { RawWs } from '../helpers/raw-ws.js';
import { startTestServer, TEST_PAIRING_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempStateDir } from '../helpers/state-dir.js';

const stateDir = tempStateDir('gasoline-conns-');
const DOM = { url: 'http://127.0.0.1:3000/', title: 'App', match_count: 1, matches: [{ tag: 'button', id: 'save', text: 'Save', bbox: { x: 1, y: 2, width: 30, height: 10 }, visible: true }] };
const cmds = (p: Producer): ServerFrame[] => p.frames.filter((f) => f.t === 'cmd');

async function closeAll(ps: Array<Producer | RawWs>): Promise<void> {
  for (const p of ps.splice(0)) {
    if (p instanceof RawWs) p.destroy();
    else {
      p.close();
      await p.closed(2000).catch(() => p.ws.terminate());
    }
  }
}

describe('connection slots (#18 item 4)', () => {
  let server: App;
  const open: Producer[] = [];
  beforeAll(async () => {
    server = await startTestServer({ limits: { max_connections: 64, max_unauthenticated: 32, max_unauthenticated_per_peer: 24 } });
  });
  afterAll(async () => {
    await closeAll(open);
    await server.close();
  });

  it('2 000 hellos from one local process never keep the extension out; the oldest unauthenticated are shed', async () => {
    const t0 = Date.now();
    let refused = 0;
    const flood = async (n: number): Promise<void> => {
      const wave = 50;
      for (let i = 0; i < n; i += wave) {
        await Promise.all(
          Array.from({ length: Math.min(wave, n - i) }, async (_, j) => {
            try {
              const p = await Producer.connect(server.port);
              open.push(p);
              p.send({ t: 'hello', v: 1, client: 'extension', version: 'x', session: `flood-${i + j}` });
            } catch {
              refused++;
            }
          }),
        );
      }
    };
    await flood(1000);
    // mid-flood: the real extension (our Origin) connects while the rest of the flood goes on
    const rest = flood(1000);
    const ext = await Producer.connect(server.port, { origin: EXTENSION_ORIGIN });
    open.push(ext);
    await ext.hello('real-ext', { client: 'extension', version: '1.0.0', key: TEST_PAIRING_KEY });
    await rest;
    expect(Date.now() - t0).toBeLessThan(25_000);
    // a second extension connection after the flood is let in too
    const ext2 = await Producer.connect(server.port, { origin: EXTENSION_ORIGIN });
    open.push(ext2);
    await ext2.hello('real-ext-2', { client: 'extension', version: '1.0.0', key: TEST_PAIRING_KEY });
    expect(ext.closeCode).toBeUndefined();
    expect(ext2.closeCode).toBeUndefined();
    // the flood itself never got a refusal: it shed its own oldest sockets
    expect(refused).toBe(0);
    const edge = server.health().edge as { connections_open: number; closes: Record<string, number>; unauthenticated_open: number };
    expect(edge.connections_open).toBeLessThanOrEqual(64);
    expect(edge.unauthenticated_open).toBeLessThanOrEqual(32);
    expect(edge.closes.connection_shed).toBeGreaterThan(1900);
    const shed = open.find((p) => p.closeCode !== undefined && p !== ext);
    expect(shed?.closeCode).toBe(1013);
    expect(shed?.closeReason).toMatch(/^connection_shed: /);
    // and the extension is served: a command reaches it and comes back
    const agent = await connectAgent(server, stateDir, 'flooded', { commands: { wait_ms: 3000 } });
    const pending = callTool(agent, 'analyze', { target: 'dom', selector: '#save' });
    const cmd = await waitFor('cmd', () => cmds(ext2)[0] ?? cmds(ext)[0]);
    (cmds(ext2)[0] ? ext2 : ext).send({ t: 'result', id: cmd.id, status: 'complete', result: DOM });
    const r = await pending;
    expect(r.isError).toBe(false);
    expect(r.text).toContain('dom: 1 matched');
    await agent.close();
  }, 40_000);
});

describe('frames announced beyond max_frame, and frames that never finish (#18 item 5)', () => {
  let server: App;
  const open: Array<Producer | RawWs> = [];
  const hello = (session: string): Uint8Array => pack({ t: 'hello', v: 1, client: 'bench', version: 'x', session });
  beforeAll(async () => {
    server = await startTestServer({ limits: { max_frame: 64 * 1024, frame_deadline_ms: 1000 } });
  });
  afterEach(async () => {
    await closeAll(open);
  });
  afterAll(async () => {
    await server.close();
  });

  it('60 sockets announcing 15 MiB after hello are cut at the header and RSS stays bounded', async () => {
    const rss0 = process.memoryUsage().rss;
    const socks = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const s = await RawWs.open(server.port);
        open.push(s);
        s.send(hello(`big-${i}`));
        await s.nextFrame(); // welcome
        const { header, mask } = RawWs.header(15 * 1024 * 1024);
        s.write(header);
        s.write(RawWs.masked(new Uint8Array(4096), mask));
        return s;
      }),
    );
    // keep trickling into the announced frame for a while, as the attack did
    for (let k = 0; k < 5; k++) {
      for (const s of socks) s.write(Buffer.alloc(1024, 7));
      await new Promise((r) => setTimeout(r, 100));
    }
    const closed = await Promise.all(socks.map((s) => s.whenClosed(3000)));
    expect(closed.every(Boolean)).toBe(true);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(150 * 1024 * 1024);
    const edge = server.health().edge as { closes: Record<string, number> };
    expect(edge.closes.frame_too_large).toBeGreaterThanOrEqual(60);
  });

  it('a frame within max_frame trickled slower than the frame deadline is closed 1008 frame_timeout', async () => {
    const s = await RawWs.open(server.port);
    open.push(s);
    s.send(hello('slow'));
    await s.nextFrame();
    const { header, mask } = RawWs.header(32 * 1024);
    s.write(header);
    const t0 = Date.now();
    let off = 0;
    const trickle = setInterval(() => {
      s.write(RawWs.masked(new Uint8Array(16), mask, off));
      off += 16;
    }, 100);
    try {
      expect(await s.whenClosed(5000)).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(s.closeInfo()).toMatchObject({ code: 1008, reason: expect.stringMatching(/^frame_timeout: /) });
  });

  it('a hello trickled for ever is closed by the frame deadline; an idle ready producer stays', async () => {
    const idle = await Producer.connect(server.port);
    open.push(idle);
    await idle.hello('idle-but-alive');
    const mute = await RawWs.open(server.port);
    open.push(mute);
    const { header } = RawWs.header(1024);
    mute.write(header); // a hello that never finishes: its first frame never arrives
    const t0 = Date.now();
    const trickle = setInterval(() => mute.write(Buffer.alloc(1)), 100);
    try {
      expect(await mute.whenClosed(4000)).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    // the frame deadline (1 s here) comes before the hello deadline (5 s)
    expect(Date.now() - t0).toBeLessThan(3500);
    expect(mute.closeInfo()).toMatchObject({ code: 1008, reason: expect.stringMatching(/^frame_timeout: /) });
    // the ws client answers the server's pings, so being quiet is not being stuck
    await new Promise((r) => setTimeout(r, 2500));
    expect(idle.closeCode).toBeUndefined();
  });
});

describe('commands go only to our extension (#18 item 8)', () => {
  let server: App;
  const open: Producer[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    await closeAll(open);
  });
  afterAll(async () => {
    await server.close();
  });

  it('a producer without our Origin that says hello as the extension gets no cmd frames; commands answer extension_unverified', async () => {
    const impostor = await Producer.connect(server.port);
    open.push(impostor);
    await impostor.hello('impostor', { client: 'extension', version: '1.0.0' });
    const agent = await connectAgent(server, stateDir, 'victim', { commands: { wait_ms: 1000 } });
    const typed = await callTool(agent, 'interact', { action: 'type', selector: '#pw', text: 'hunter2-secret' });
    const dom = await callTool(agent, 'analyze', { target: 'dom', selector: 'button' });
    for (const r of [typed, dom]) {
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/^extension_unverified: /);
    }
    // a pong is sent after any cmd frame the server had sent on this socket: the marker for "none came"
    impostor.send({ t: 'ping', ts: 1 });
    await impostor.next((f) => f.t === 'pong');
    expect(cmds(impostor)).toHaveLength(0);
    await agent.close();
  });

  it('with both connected, the command goes to the extension with our Origin and its answer names that producer', async () => {
    const ext = await Producer.connect(server.port, { origin: EXTENSION_ORIGIN });
    open.push(ext);
    await ext.hello('real-session', { client: 'extension', version: '2.3.4', key: TEST_PAIRING_KEY });
    const impostor = await Producer.connect(server.port);
    open.push(impostor);
    await impostor.hello('impostor-2', { client: 'extension', version: '9.9.9' });
    const agent = await connectAgent(server, stateDir, 'asker', { commands: { wait_ms: 3000 } });
    const pending = callTool(agent, 'analyze', { target: 'dom', selector: '#save' });
    const cmd = await waitFor('cmd', () => cmds(ext)[0]);
    ext.send({ t: 'result', id: cmd.id, status: 'complete', result: DOM });
    const r = await pending;
    expect(r.isError).toBe(false);
    const id = server.ws.producers().find((p) => p.session === 'real-session')!.id;
    expect(r.text).toContain(`answered by producer #${id} (client "extension", version "2.3.4", session "real-session")`);
    // an error answer names its producer too
    const failing = callTool(agent, 'interact', { action: 'click', selector: '#save' });
    const cmd2 = await waitFor('cmd 2', () => cmds(ext)[1]);
    ext.send({ t: 'result', id: cmd2.id, status: 'error', error: 'element_not_found: no element matches #save' });
    const e = await failing;
    expect(e.isError).toBe(true);
    expect(e.text).toContain(`answered by producer #${id}`);
    expect(cmds(impostor)).toHaveLength(0);
    await agent.close();
  });
});
