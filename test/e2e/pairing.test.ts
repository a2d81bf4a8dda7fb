/**
 * Pairing end to end in Chromium (issue 19 item 1). The real extension, preset with the pairing
 * secret the test server is seeded with: (1) an impostor — a real process on the port without the
 * key that records every frame — receives nothing but hellos, and the popup says the server is not
 * the paired one; (2) then the real server on that port gets telemetry and runs a command; (3) an
 * unpaired producer that says hello as the extension gets no command.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unpack, pack } from 'msgpackr';
import type { Page } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { freePort } from '../helpers/net.js';
import { Producer, type ServerFrame } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { waitFor } from '../helpers/wait-for.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';
import { startFixture, type Fixture } from './helpers/fixture-server.js';

if (!hasChromium) console.warn(SKIP_REASON);

describe.skipIf(!hasChromium)('pairing in Chromium', () => {
  let fixture: Fixture;
  let server: App;
  const stateDir = tempStateDir();
  let agent: Client;
  let browser: Launched;
  let page: Page;
  let port: number;

  beforeAll(async () => {
    fixture = await startFixture();
    port = await freePort();
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    await browser?.close();
    await server?.close().catch(() => undefined);
    await fixture?.close();
  });

  /** the popup's pairing line, as the user reads it */
  async function popupPairing(): Promise<string> {
    const popup = await browser.ctx.newPage();
    try {
      await popup.goto(`chrome-extension://${browser.extensionId}/popup.html`);
      await popup.waitForFunction('document.getElementById("pair-state").textContent.length > 0');
      return `${await popup.textContent('#state')} | ${await popup.textContent('#pair-state')}`;
    } finally {
      await popup.close();
    }
  }

  it('an impostor on the port receives only hellos — no record, no proof — and the popup says it is not the paired server', async () => {
    const frames: Array<Record<string, unknown>> = [];
    const wss = await listenImpostor(port, frames);
    browser = await launchWithExtension({ port, trackAll: true });
    page = await browser.ctx.newPage();
    await page.goto(`${fixture.origin}/`);
    await page.evaluate('window.fixture.ready');
    try {
      // the page keeps producing while the impostor holds the port
      await waitFor('the extension says hello to the impostor', () => frames.some((f) => f.t === 'hello'), 30_000);
      await page.evaluate("window.fixture.log('impostor-marker', 20)");
      await page.click('#do-thing');
      const hellos = (): number => frames.filter((f) => f.t === 'hello').length;
      const seen = hellos();
      // a retry after the refusal: time enough for anything the extension would have sent
      await waitFor('a retried hello after the records', () => hellos() > seen + 1, 30_000);
      expect(frames.filter((f) => f.t !== 'hello'), JSON.stringify(frames.slice(0, 5))).toEqual([]);
      expect(frames.every((f) => typeof (f.auth as { nonce?: unknown } | undefined)?.nonce === 'string')).toBe(true);
      expect(JSON.stringify(frames)).not.toContain('impostor-marker');
      expect(await popupPairing()).toMatch(/not sending \(pairing\) \| Not sending: the server on this port is NOT the gasoline we are paired with/);
    } finally {
      await closeImpostor(wss);
    }
  }, 90_000);

  it('then the paired server on the same port gets telemetry and runs a command; the popup says the server proved the pairing', async () => {
    server = await startTestServer({ port, state_dir: stateDir, commands: { wait_ms: 8000 } });
    agent = await connectAgent(server, stateDir, 'pairing-e2e', { commands: { wait_ms: 8000 } });
    await waitFor('the extension reconnected, paired', () => (server.health().extension as { paired: boolean }).paired, 45_000);
    // what the page produced while the impostor held the port waited in the extension, and comes now
    await waitFor('the records held back from the impostor', async () => (await callTool(agent, 'observe', { what: 'logs', contains: 'impostor-marker' })).text.includes('impostor-marker 19'), 15_000);
    await page.evaluate("window.fixture.log('paired-marker', 1)");
    await waitFor('the marker stored', async () => (await callTool(agent, 'observe', { what: 'logs', contains: 'paired-marker' })).text.includes('paired-marker'), 15_000);
    const pairing = server.health().pairing as { verified_open: number };
    expect(pairing.verified_open).toBeGreaterThanOrEqual(1);
    expect((server.health().extension as { paired: boolean }).paired).toBe(true);
    const info = await callTool(agent, 'analyze', { target: 'page_info' });
    expect(info.isError, info.text).toBe(false);
    expect(info.text).toContain(fixture.origin);
    expect(await popupPairing()).toMatch(/connected \| Paired \(preset\), and the server proved it/);
  }, 60_000);

  it('an unpaired producer saying hello as the extension gets no command: alone it is refused naming pairing, beside the paired one it is passed over', async () => {
    const fake = await Producer.connect(port, { origin: EXTENSION_ORIGIN });
    try {
      await fake.hello('fake-extension', { client: 'extension', version: '9.9.9' });
      // newer than the real one, yet the command goes to the paired extension
      const dom = await callTool(agent, 'analyze', { target: 'dom', selector: '#do-thing' });
      expect(dom.isError, dom.text).toBe(false);
      expect(fake.frames.filter((f: ServerFrame) => f.t === 'cmd')).toHaveLength(0);
    } finally {
      fake.close();
    }
    // alone (a server the real extension does not know): refused with the typed error
    const lone = await startTestServer({ state_dir: tempStateDir() });
    const other = await Producer.connect(lone.port, { origin: EXTENSION_ORIGIN });
    const loneAgent = await connectAgent(lone, tempStateDir(), 'lone', { commands: { wait_ms: 1000 } });
    try {
      await other.hello('fake-alone', { client: 'extension' });
      for (const [tool, args] of [['interact', { action: 'click', selector: '#do-thing' }], ['analyze', { target: 'dom', selector: 'button' }]] as const) {
        const r = await callTool(loneAgent, tool, args);
        expect(r.isError).toBe(true);
        expect(r.text).toMatch(/^extension_unverified: .*not proven pairing.*gasoline pair/);
      }
      expect(other.frames.filter((f: ServerFrame) => f.t === 'cmd')).toHaveLength(0);
    } finally {
      other.close();
      await loneAgent.close();
      await lone.close();
    }
  }, 60_000);

});

/**
 * Stops listening first, so the extension's retries meet a closed port instead of opening sockets
 * faster than they close (waiting for "no socket open" while still listening could run out, and was
 * swallowed), then waits for the extension to close the sockets it has: it closes each refused one
 * itself. ws calls back once the listener and every connection are gone, so the paired server the
 * next test starts on this port binds beside nothing of the impostor's. Not swallowed: a socket
 * still open after 30 s is cut and the wait fails, saying how many.
 */
async function closeImpostor(wss: WebSocketServer): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => {
      const open = wss.clients.size;
      for (const c of wss.clients) c.terminate();
      reject(new Error(`${open} socket(s) to the impostor still open 30 s after it stopped listening`));
    }, 30_000);
    wss.close(() => {
      clearTimeout(t);
      resolve();
    });
  });
}

/**
 * A real process on the port without the key: answers hello with a welcome whose proof is made up
 * (a careful impostor) and pongs pings; keeps every frame it receives.
 */
async function listenImpostor(port: number, frames: Array<Record<string, unknown>>): Promise<WebSocketServer> {
  let wss: WebSocketServer | undefined;
  let lastError = '';
  await waitFor('the port free for the impostor', async () => {
    try {
      wss = await new Promise<WebSocketServer>((resolve, reject) => {
        const s = new WebSocketServer({ host: '127.0.0.1', port, path: '/ws' });
        s.once('listening', () => resolve(s));
        s.once('error', reject);
      });
      return true;
    } catch (e) {
      lastError = String(e);
      return false;
    }
  }, 20_000).catch((e: Error) => {
    throw new Error(`${e.message}: ${lastError}`);
  });
  wss!.on('connection', (ws) => {
    ws.on('message', (data) => {
      const f = unpack(data as Buffer) as Record<string, unknown>;
      frames.push(f);
      if (f.t === 'hello') ws.send(pack({ t: 'welcome', v: 1, server_version: '0.1.0', max_frame: 1 << 20, max_events_per_batch: 1000, resume_from_seq: 0, auth: { v: 1, nonce: randomBytes(32).toString('hex'), proof: randomBytes(32).toString('hex') } }));
      if (f.t === 'ping') ws.send(pack({ t: 'pong', ts: f.ts }));
    });
  });
  return wss!;
}
