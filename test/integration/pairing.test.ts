/**
 * Pairing (issue 19 item 1) against the real server: the mutual proof in hello/welcome/auth (a
 * replayed, reflected or wrong proof is refused), what an unverified producer gets (no commands,
 * no results taken, records counted unverified, or refused by config), the one-time exchange the
 * extension's own code runs (extension/src/sw/pairing.ts: wrong code, attempt limit, trust on
 * first use), and `gasoline pair` against a spawned daemon.
 */
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { nonce, producerProof, readSecret } from '../../src/pairing/index.js';
import { handshakeProofs, newNonce, pair, sameHex } from '../../extension/src/sw/pairing.js';
import { Transport, type SocketLike, type TransportStatus } from '../../extension/src/sw/transport.js';
import { cleanup, health, runGasolineAsync, sandbox, startServer, type Sandbox } from '../helpers/bridge.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { freePort } from '../helpers/net.js';
import { batch, logRecord, Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer, TEST_PAIRING_KEY } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const socket = (url: string): SocketLike => new WebSocket(url, { origin: EXTENSION_ORIGIN }) as unknown as SocketLike;
/** the extension's real exchange, with few PBKDF2 rounds to match the test servers' */
const ITER = 1000;
const pairWith = (port: number, code: string | null) => pair({ url: `ws://127.0.0.1:${port}/ws`, version: 'test', createSocket: socket, code, iterations: ITER });

const open: Producer[] = [];
afterEach(() => {
  for (const p of open.splice(0)) p.close();
});
async function connect(port: number): Promise<Producer> {
  const p = await Producer.connect(port, { origin: EXTENSION_ORIGIN });
  open.push(p);
  return p;
}

/** hello with a nonce, as the extension sends it; the welcome carries the server's challenge */
async function challenged(p: Producer, session: string): Promise<{ nc: string; auth: { nonce: string; proof: string; tofu?: boolean } }> {
  const nc = nonce();
  p.send({ t: 'hello', v: 1, client: 'extension', version: 't', session, auth: { v: 1, nonce: nc } });
  const w = await p.next((f) => f.t === 'welcome');
  return { nc, auth: w.auth as { nonce: string; proof: string } };
}

describe('the proof in every handshake', () => {
  let server: App;
  const stateDir = tempStateDir();
  beforeAll(async () => {
    server = await startTestServer({ state_dir: stateDir }, { pairingKdfIterations: ITER });
  });
  afterAll(async () => {
    await server.close();
  });
  const pairingHealth = (): Record<string, number> & { unverified_records: number; unverified_results_dropped: number; proofs_failed: number } => server.health().pairing as Record<string, number> & { unverified_records: number; unverified_results_dropped: number; proofs_failed: number };

  it('a producer with the key is verified; one without is not, its records are stored and counted unverified', async () => {
    const good = await connect(server.port);
    await good.hello('paired-1', { client: 'extension', key: TEST_PAIRING_KEY });
    good.send(batch(0, { logs: [logRecord(1)] }));
    await good.ackFor(0);
    const before = pairingHealth().unverified_records;
    const plain = await connect(server.port);
    await plain.hello('plain-1');
    plain.send(batch(0, { logs: [logRecord(2), logRecord(3)] }));
    const ack = await plain.ackFor(0);
    expect(ack.accepted).toBe(2);
    expect(pairingHealth().unverified_records).toBe(before + 2);
    const mine = server.ws.producers().find((p) => p.session === 'paired-1')!;
    expect(mine.verified).toBe(true);
    expect(server.ws.producers().find((p) => p.session === 'plain-1')!.verified).toBe(false);
    expect((server.health().extension as { paired: boolean }).paired).toBe(true);
  });

  it('a wrong key: the welcome proof does not match it, and its own proof closes the socket 1008 pairing_proof_invalid', async () => {
    const p = await connect(server.port);
    const { nc, auth } = await challenged(p, 'wrong-key');
    const wrong = Buffer.from('5a'.repeat(32), 'hex');
    p.send({ t: 'auth', proof: producerProof(wrong, nc, auth.nonce) });
    await p.closed();
    expect(p.closeCode).toBe(1008);
    expect(p.closeReason).toMatch(/^pairing_proof_invalid: /);
  });

  it('a replayed proof (from another connection) and a reflected one (the server\'s own) are refused', async () => {
    const first = await connect(server.port);
    const a = await challenged(first, 'replay-src');
    const valid = producerProof(Buffer.from(TEST_PAIRING_KEY, 'hex'), a.nc, a.auth.nonce);
    first.send({ t: 'auth', proof: valid });
    // the same proof on a new connection: the server's nonce is new, so it no longer fits
    const second = await connect(server.port);
    await challenged(second, 'replay-dst');
    second.send({ t: 'auth', proof: valid });
    await second.closed();
    expect(second.closeReason).toMatch(/^pairing_proof_invalid: /);
    // the server's proof sent back to it: another label, so it is not a producer's proof
    const third = await connect(server.port);
    const c = await challenged(third, 'reflect');
    third.send({ t: 'auth', proof: c.auth.proof });
    await third.closed();
    expect(third.closeReason).toMatch(/^pairing_proof_invalid: /);
    expect(pairingHealth().proofs_failed).toBeGreaterThanOrEqual(3);
  });

  it('an unpaired producer saying it is the extension gets no command (a typed error naming pairing) and its results are not taken', async () => {
    const fake = await connect(server.port);
    await fake.hello('fake-ext', { client: 'extension' });
    const agent = await connectAgent(server, stateDir, 'asker', { commands: { wait_ms: 1000 } });
    const r = await callTool(agent, 'analyze', { target: 'dom', selector: 'button' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^extension_unverified: .*pair/);
    const dropped = pairingHealth().unverified_results_dropped;
    fake.send({ t: 'result', id: 'q0000000000000000', status: 'complete', result: {} });
    fake.send({ t: 'ping', ts: 7 });
    await fake.next((f) => f.t === 'pong' && f.ts === 7);
    expect(pairingHealth().unverified_results_dropped).toBe(dropped + 1);
    expect(fake.frames.filter((f: ServerFrame) => f.t === 'cmd')).toHaveLength(0);
    await agent.close();
  });
});

describe('pairing.unpaired "refuse"', () => {
  let server: App;
  beforeAll(async () => {
    server = await startTestServer({ pairing: { unpaired: 'refuse' } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('closes a producer that offers no proof with producer_unpaired; a paired one is served', async () => {
    const plain = await connect(server.port);
    plain.send({ t: 'hello', v: 1, client: 'bench', version: 't', session: 'refused' });
    await plain.closed();
    expect(plain.closeCode).toBe(1008);
    expect(plain.closeReason).toMatch(/^producer_unpaired: /);
    // a nonce but then a batch instead of the proof: closed too
    const sly = await connect(server.port);
    await challenged(sly, 'sly');
    sly.send(batch(0, { logs: [logRecord(1)] }));
    await sly.closed();
    expect(sly.closeReason).toMatch(/^producer_unpaired: /);
    // a nonce, and a batch sent ahead of the welcome: nothing before the proof is taken
    const eager = await connect(server.port);
    eager.send({ t: 'hello', v: 1, client: 'bench', version: 't', session: 'eager', auth: { v: 1, nonce: nonce() } });
    eager.send(batch(0, { logs: [logRecord(1)] }));
    await eager.closed();
    expect(eager.closeReason).toMatch(/^producer_unpaired: frames sent before the pairing proof/);
    const good = await connect(server.port);
    await good.hello('paired', { key: TEST_PAIRING_KEY });
    good.send(batch(0, { logs: [logRecord(1)] }));
    expect((await good.ackFor(0)).accepted).toBe(1);
    expect((server.health().pairing as { refused: number }).refused).toBe(3);
    // only the paired producer's record was stored
    expect((server.health().kinds as { logs: { stored: number } }).logs.stored).toBe(1);
  });
});

describe('the one-time exchange (the extension\'s own code)', () => {
  let server: App;
  const stateDir = tempStateDir();
  beforeAll(async () => {
    server = await startTestServer({ state_dir: stateDir, pairing: { max_attempts: 3 } }, { pairingKdfIterations: ITER });
  });
  afterAll(async () => {
    await server.close();
  });

  it('without a window: pairing_closed', async () => {
    const r = await pairWith(server.port, 'ABCD-EFGH');
    expect(r).toMatchObject({ ok: false, code: 'pairing_closed' });
  });

  it('wrong codes are counted and refused; the last allowed one closes the window, and then even the right code is refused', async () => {
    const { code } = server.pairing.open();
    const wrong = code === 'ZZZZ-ZZZZ' ? 'YYYY-YYYY' : 'ZZZZ-ZZZZ';
    expect(await pairWith(server.port, wrong)).toMatchObject({ ok: false, code: 'pairing_code_wrong', message: expect.stringContaining('2 attempts left') });
    expect(await pairWith(server.port, wrong)).toMatchObject({ ok: false, code: 'pairing_code_wrong', message: expect.stringContaining('1 attempt left') });
    expect(await pairWith(server.port, wrong)).toMatchObject({ ok: false, code: 'pairing_locked' });
    expect(await pairWith(server.port, code)).toMatchObject({ ok: false, code: 'pairing_closed' });
  });

  it('the right code (typed loosely: lower case, no dash) yields the server\'s secret, and that secret then proves itself', async () => {
    const { code } = server.pairing.open();
    const r = await pairWith(server.port, code.toLowerCase().replace('-', ' '));
    expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
    const key = (r as { key: string }).key;
    expect(key).toBe(readSecret(stateDir)!.key);
    // single use: the window closed with it
    expect(await pairWith(server.port, code)).toMatchObject({ ok: false, code: 'pairing_closed' });
    const p = await connect(server.port);
    await p.hello('after-pairing', { client: 'extension', key });
    expect(server.ws.producers().find((x) => x.session === 'after-pairing')!.verified).toBe(true);
  });

  it('a malformed code is refused before anything is sent', async () => {
    expect(await pairWith(server.port, '123')).toMatchObject({ ok: false, code: 'pairing_invalid' });
  });
});

describe('trust on first use', () => {
  let server: App;
  beforeAll(async () => {
    server = await startTestServer({ state_dir: tempStateDir(), pairing: { tofu: true } }, { pairingKey: '3c'.repeat(32), pairingKdfIterations: ITER });
  });
  afterAll(async () => {
    await server.close();
  });

  it('is offered in the welcome until one producer accepted it; then it is over', async () => {
    const p = await connect(server.port);
    expect((await challenged(p, 'tofu-1')).auth.tofu).toBe(true);
    const r = await pairWith(server.port, null);
    expect(r).toEqual({ ok: true, key: '3c'.repeat(32) });
    const q = await connect(server.port);
    expect((await challenged(q, 'tofu-2')).auth.tofu).toBeUndefined();
    expect(await pairWith(server.port, null)).toMatchObject({ ok: false, code: 'pairing_closed' });
  });
});

describe('gasoline pair (a real daemon)', () => {
  let sb: Sandbox;
  afterAll(async () => {
    if (sb) await cleanup(sb);
  });

  it('prints a code the extension pairs with; --reset rotates the secret and the old one proves nothing', async () => {
    sb = sandbox(await freePort());
    startServer(sb);
    await waitFor('the daemon', () => health(sb.port), 20_000);
    const out = await runGasolineAsync(['pair', '--port', String(sb.port), '--state-dir', sb.stateDir]);
    expect(out.stdout).toBe('');
    expect(out.code, out.stderr).toBe(0);
    const code = /Pairing code: ([0-9A-Z]{4}-[0-9A-Z]{4})/.exec(out.stderr)?.[1];
    expect(code, out.stderr).toBeDefined();
    const r = await pair({ url: `ws://127.0.0.1:${sb.port}/ws`, version: 'test', createSocket: socket, code: code! });
    expect(r.ok).toBe(true);
    const first = readSecret(sb.stateDir)!.key;
    expect((r as { key: string }).key).toBe(first);
    // --status says who is paired: one extension that proved the key, one producer that did not
    const ext = await Producer.connect(sb.port, { origin: EXTENSION_ORIGIN });
    const plain = await Producer.connect(sb.port);
    open.push(ext, plain);
    await ext.hello('status-ext', { client: 'extension', key: first });
    await plain.hello('status-plain');
    const st = await runGasolineAsync(['--status', '--port', String(sb.port), '--state-dir', sb.stateDir]);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stderr).toMatch(/pairing: extension paired and verified; producers 1 verified, 1 unverified; 0 unverified records stored \(unpaired: mark\)/);

    const reset = await runGasolineAsync(['pair', '--reset', '--port', String(sb.port), '--state-dir', sb.stateDir]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain('the pairing secret was rotated');
    expect(readSecret(sb.stateDir)!.key).not.toBe(first);
    const old = await Producer.connect(sb.port, { origin: EXTENSION_ORIGIN });
    open.push(old);
    await expect(old.hello('old-key', { client: 'extension', key: first })).rejects.toThrow(/did not prove/);

    // without the daemon's token (another state dir): refused, nothing opened
    const stranger = await runGasolineAsync(['pair', '--port', String(sb.port), '--state-dir', tempStateDir()]);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/token file .* missing/);
  });
});

describe("the extension's transport (its own code, in Node)", () => {
  let server: App;
  beforeAll(async () => {
    server = await startTestServer({ state_dir: tempStateDir() });
  });
  afterAll(async () => {
    await server.close();
  });

  function transport(key: string | null, session: string): { t: Transport; states: TransportStatus['state'][] } {
    const states: TransportStatus['state'][] = [];
    const t = new Transport({
      url: `ws://127.0.0.1:${server.port}/ws`,
      version: 'test',
      session,
      createSocket: socket,
      backoffMinMs: 20,
      backoffMaxMs: 200,
      flushMs: 5,
      auth: { key: () => key, nonce: newNonce, proofs: handshakeProofs, same: sameHex },
      onStatus: (st) => states.push(st.state),
    });
    t.start();
    return { t, states };
  }

  it('with the key: the server proves itself, the producer is verified, its records are not counted unverified', async () => {
    const before = (server.health().pairing as { unverified_records: number }).unverified_records;
    const { t } = transport(TEST_PAIRING_KEY, 'transport-paired');
    try {
      t.add(1, 'http://127.0.0.1:3000/', { logs: [{ ts: Date.now(), level: 'error', type: 'console', message: 'from a paired transport' }] });
      await waitFor('acked', () => t.status().counters.records_accepted === 1);
      expect(server.ws.producers().find((p) => p.session === 'transport-paired')?.verified).toBe(true);
      expect((server.health().pairing as { unverified_records: number }).unverified_records).toBe(before);
    } finally {
      t.stop();
    }
  });

  it('with another key (the server is not ours) or none: only hello goes out, the state says why, records wait', async () => {
    for (const [key, why] of [['77'.repeat(32), 'impostor'], [null, 'unpaired']] as const) {
      const { t, states } = transport(key, `transport-${why}`);
      try {
        t.add(1, 'http://127.0.0.1:3000/', { logs: [{ ts: Date.now(), level: 'error', type: 'console', message: 'must not leave' }] });
        await waitFor(`refused ${why}`, () => states.some((st) => st.kind === 'refused' && st.why === why));
        // a second refusal: it retried and was refused again, and still sent nothing
        await waitFor('a retry', () => states.filter((st) => st.kind === 'refused').length >= 2);
        expect(t.status().pending_records).toBe(1);
        expect(t.status().counters.batches_sent).toBe(0);
        expect(server.ws.producers().some((p) => p.session === `transport-${why}` && p.verified)).toBe(false);
      } finally {
        t.stop();
      }
    }
  });
});
