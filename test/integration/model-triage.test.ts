/**
 * analyze({target:"triage"}) end to end (issue 19 item 5): the secret corpus goes into a real
 * server over /ws (error logs, failing requests, an action before them), a real MCP SDK client
 * asks for a triage, and a real OpenAI-compatible server (node:http, keeping every request)
 * answers by streaming. No corpus secret is in any request it received; the pieces arrive as
 * progress notifications; a failing or silent provider is this call's typed error, bounded, and
 * /health stays ok. The offline adapter (the default) concludes from the same real records.
 *
 * The same corpus through the side panel's path (issue 19, Tests): the extension's own worker
 * half (its Transport, paired with the key, and its PanelTokens) asks for a panel token over
 * /ws, the panel's own MCP client (extension/src/panel/mcp.ts) opens a panel session on /mcp with
 * it and asks a question that itself carries corpus secrets; nothing of the corpus reaches the
 * recording provider, and the panel reads the redaction footer off the answer (answer.ts).
 */
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createToolServer } from '../../src/mcp/server.js';
import type { App } from '../../src/app.js';
import { RecordingProvider } from '../helpers/model-provider.js';
import { batch, Producer } from '../helpers/producer.js';
import { loadCorpus } from '../helpers/redaction-carry.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';
import { TEST_PAIRING_KEY } from '../helpers/pairing-key.js';
import { waitFor } from '../helpers/wait-for.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { handshakeProofs, newNonce, sameHex } from '../../extension/src/sw/pairing.js';
import { PanelTokens } from '../../extension/src/sw/panel-token.js';
import { Transport, type SocketLike } from '../../extension/src/sw/transport.js';
import { PanelMcp } from '../../extension/src/panel/mcp.js';
import { readAnswer } from '../../extension/src/panel/answer.js';
import { leakIn, windows } from '../helpers/leak-windows.js';

const KEY = 'sk-test-provider-key-0123456789';
const secrets = loadCorpus().filter((l) => !l.lookalike && l.secret);


/** the corpus as a broken page: each secret in an error's message and args, and in a failing request's URL */
async function feed(app: App): Promise<void> {
  const p = await Producer.connect(app.port);
  await p.hello('triage');
  const ts = Date.now() - 2000;
  let seq = 0;
  p.send(batch(seq, { actions: [{ ts, type: 'click', url: 'http://localhost:3000/cart', selectors: { id: 'buy', css_path: 'main > button#buy' } }] }));
  await p.ackFor(seq++);
  for (let i = 0; i < secrets.length; i += 50) {
    const slice = secrets.slice(i, i + 50);
    const logs = slice.map((l, j) => ({ ts: ts + 10 + i + j, level: 'error', type: 'exception', message: `Checkout failed: ${l.text}`, args: [l.text], url: 'http://localhost:3000/cart', stack: `Error: x\n    at pay (http://localhost:3000/app.min.js:1:${100 + i + j})` }));
    const network = slice.map((l, j) => ({ ts: ts + 5 + i + j, method: 'POST', url: l.carrier === 'url' ? l.text : `http://localhost:3000/api/pay?note=${encodeURIComponent(l.text)}`, status: 500, duration: 12 }));
    p.send(batch(seq, { logs, network }));
    const ack = await p.ackFor(seq++);
    expect(ack.rejected).toBe(0);
  }
  p.close();
}

async function agent(app: App, id: string): Promise<Client> {
  const config = loadConfig({ env: {}, flags: { state_dir: tempStateDir(), port: app.port } });
  const mcp = createToolServer({ config, port: app.mcp, clientId: id }).mcp;
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: id, version: '1' });
  await client.connect(b);
  return client;
}

const textOf = (r: Awaited<ReturnType<Client['callTool']>>): string => (r.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');

async function health(app: App): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${app.port}/health`);
  return (await res.json()) as Record<string, unknown>;
}

describe('analyze triage through an OpenAI-compatible provider', () => {
  let provider: RecordingProvider;
  let app: App;
  let client: Client;
  beforeAll(async () => {
    provider = await RecordingProvider.start();
    app = await startTestServer({ model: { adapter: 'openai', base_url: provider.baseUrl, api_key: KEY, model: 'tiny', timeout_ms: 4000, first_byte_ms: 1500, retries: 1 } } as never);
    await feed(app);
    client = await agent(app, 'triage-openai');
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await app?.close();
    await provider?.close();
  });

  it('sends no corpus secret to the provider, streams the answer as progress, and ends with the footer', async () => {
    provider.requests.length = 0;
    provider.plans = [{ pieces: ['conclusion: checkout fails ', 'after POST /api/pay → 500', '\nnext: observe({what:"error_bundles"})'], pieceDelayMs: 10 }];
    const progress: string[] = [];
    const r = await client.callTool({ name: 'analyze', arguments: { target: 'triage', question: `why? my token is ${secrets[0]!.text}` } }, undefined, { onprogress: (p) => void progress.push(String(p.message)) });
    const text = textOf(r);
    expect(r.isError).toBeFalsy();
    expect(text).toContain('conclusion: checkout fails after POST /api/pay → 500\nnext: observe({what:"error_bundles"})');
    expect(text).toMatch(/\nredaction: policy 0 · redacted \d+ · blocked 0 · model openai(\n|$)/);
    expect(Number(/redacted (\d+)/.exec(text)![1])).toBeGreaterThan(100);
    // whole lines of the answer, redacted as one text: the first when its newline came, the last at the end
    expect(progress).toEqual(['conclusion: checkout fails after POST /api/pay → 500\n', 'next: observe({what:"error_bundles"})']);
    expect(provider.requests).toHaveLength(1);
    const req = provider.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    const sent = JSON.stringify({ body: req.body, headers: { ...req.headers, authorization: undefined } });
    // the context reached the provider: the records are there, their secrets are not
    expect(req.body).toContain('Checkout failed');
    expect(req.body).toContain('/api/pay');
    const w = windows(sent);
    const leaked = secrets.map((l) => [l.class, l.carrier, leakIn(w, l.secret!)]).filter(([, , x]) => x !== null);
    expect(leaked).toEqual([]);
    const h = await health(app);
    expect(h.status).toBe('ok');
    expect(h.model).toMatchObject({ adapter: 'openai', policy_version: 0, blocked: 0, failed: 0 });
    expect(JSON.stringify(h)).not.toContain(KEY);
  });

  it('a failing provider: model_unavailable with the footer, retries bounded, /health stays ok', async () => {
    provider.requests.length = 0;
    provider.plans = [{ status: 502 }];
    const r = await client.callTool({ name: 'analyze', arguments: { target: 'triage' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^model_unavailable: the provider answered HTTP 502\nredaction: policy 0 · redacted \d+ · blocked 0 · model openai/);
    // retries: 1 — two attempts, no more
    expect(provider.requests).toHaveLength(2);
    const h = await health(app);
    expect(h.status).toBe('ok');
    expect(h.model).toMatchObject({ failed: 1, last_error: 'model_unavailable' });
  });

  it('a silent provider: model_timeout within the bound, and the next call works again', async () => {
    provider.requests.length = 0;
    provider.plans = [{ hang: true }];
    const t0 = Date.now();
    const r = await client.callTool({ name: 'analyze', arguments: { target: 'triage' } });
    expect(textOf(r)).toMatch(/^model_timeout: /);
    expect(Date.now() - t0).toBeLessThan(4000 + 1500);
    expect(provider.requests.length).toBeLessThanOrEqual(2);
    expect((await health(app)).status).toBe('ok');
    provider.plans = [{ pieces: ['back'] }];
    expect(textOf(await client.callTool({ name: 'analyze', arguments: { target: 'triage' } }))).toMatch(/^back\n/);
  });

  it('a rule added at run time moves the policy version and applies to what leaves', async () => {
    const add = await client.callTool({ name: 'configure', arguments: { action: 'redaction', redaction_action: 'add', name: 'pay_api', pattern: 'api/pay' } });
    expect(add.isError).toBeFalsy();
    provider.requests.length = 0;
    provider.plans = [{ pieces: ['ok'] }];
    const text = textOf(await client.callTool({ name: 'analyze', arguments: { target: 'triage' } }));
    expect(text).toMatch(/redaction: policy 1 · /);
    expect(provider.requests[0]!.body).not.toContain('api/pay');
    expect(provider.requests[0]!.body).toContain('[REDACTED:pay_api]');
    await client.callTool({ name: 'configure', arguments: { action: 'redaction', redaction_action: 'remove', name: 'pay_api' } });
  });
});

/** `acme_` and 32 of [a-z0-9]: what the run-time rule below matches */
const acmeKey = (i: number): string => `acme_${`${i.toString(36)}k9q2x7m4p1z8w3r6t5y0u2v4b7n1c3h`.slice(0, 32)}`;

/** every 8-character run of the key found in the text: what a cut or a split would let through */
function keyRuns(text: string, key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 8 <= key.length; i++) if (text.includes(key.slice(i, i + 8))) out.push(key.slice(i, i + 8));
  return out;
}

describe('analyze triage: bounds that meet hostile records, and secrets split by a cut or a stream', () => {
  let provider: RecordingProvider;
  let app: App;
  let client: Client;
  const key = acmeKey(1);
  beforeAll(async () => {
    provider = await RecordingProvider.start();
    app = await startTestServer({ model: { adapter: 'openai', base_url: provider.baseUrl, api_key: KEY, model: 'tiny', timeout_ms: 4000, first_byte_ms: 1500, retries: 0 } } as never);
    const p = await Producer.connect(app.port);
    await p.hello('triage-hostile');
    const ts = Date.now() - 2000;
    // fed before the rule exists: the ingest workers keep the key, only the rule in force at the triage can hide it
    const long = `${'word '.repeat(799)}${key} tail`;
    expect(long.indexOf(key)).toBeLessThan(3999);
    expect(long.indexOf(key) + key.length).toBeGreaterThan(3999);
    p.send(batch(0, { actions: [{ ts: ts - 100, type: 'click', url: 'http://localhost:3000/x', selectors: { aria_label: `${'"'.repeat(600)}${'a'.repeat(424)}` } }] }));
    await p.ackFor(0);
    p.send(batch(1, { logs: [{ ts, level: 'error', type: 'exception', message: long, url: 'http://localhost:3000/x' }, { ts: 1e300, level: 'error', type: 'exception', message: 'from the far future', url: 'http://localhost:3000/y' }], network: [{ ts: ts + 1, method: 'POST', url: 'http://localhost:3000/api/n', status: 500, duration: 3, error: long }] }));
    expect((await p.ackFor(1)).rejected).toBe(0);
    p.close();
    client = await agent(app, 'triage-hostile');
    const add = await client.callTool({ name: 'configure', arguments: { action: 'redaction', redaction_action: 'add', name: 'acme', pattern: 'acme_[a-z0-9]{32}' } });
    expect(add.isError).toBeFalsy();
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await app?.close();
    await provider?.close();
  });

  it('a key split by the 4000/2000-character cut, a 1 KiB aria-label and a ts of 1e300: the triage goes out, no run of the key in it', async () => {
    provider.requests.length = 0;
    provider.plans = [{ pieces: ['ok'] }];
    const r = await client.callTool({ name: 'analyze', arguments: { target: 'triage' } });
    expect(textOf(r)).toMatch(/^ok\n[\s\S]*blocked 0 · model openai/);
    expect(r.isError).toBeFalsy();
    expect(provider.requests).toHaveLength(1);
    const body = provider.requests[0]!.body;
    // the marker may be cut; the key is gone whole
    expect(body).toContain('word [RED');
    expect(body).not.toContain('acme_');
    expect(body).toContain('from the far future');
    expect(keyRuns(body, key)).toEqual([]);
    // the over-long aria-label is no selector; the click is still evidence
    expect(body).not.toContain('aria-label');
    expect(body).toContain('before: action');
  });

  it('the answer: a key split across two streamed pieces reaches neither progress nor the result; a cut through keys leaves no run', async () => {
    const k2 = acmeKey(2);
    provider.plans = [{ pieces: [`the culprit is ${k2.slice(0, 20)}`, `${k2.slice(20)} in the header\n`, 'next: rotate it'] }];
    const progress: string[] = [];
    const r = await client.callTool({ name: 'analyze', arguments: { target: 'triage' } }, undefined, { onprogress: (p) => void progress.push(String(p.message)) });
    const text = textOf(r);
    expect(text).toContain('the culprit is [REDACTED:acme] in the header\nnext: rotate it');
    // whole lines, redacted as one text: the first line when its newline came, the rest at the end
    expect(progress).toEqual(['the culprit is [REDACTED:acme] in the header\n', 'next: rotate it']);
    expect(keyRuns(progress.join('|'), k2)).toEqual([]);
    // an answer of keys on one line, longer than the budget: redacted, then cut
    const keys = Array.from({ length: 60 }, (_, i) => acmeKey(10 + i));
    provider.plans = [{ pieces: [keys.join(' ')] }];
    const cut = textOf(await client.callTool({ name: 'analyze', arguments: { target: 'triage', budget: 1000 } }));
    expect(cut).toContain('answer cut at the');
    expect(keys.flatMap((k) => keyRuns(cut, k))).toEqual([]);
  });
});

describe('analyze triage with the offline adapter (the default)', () => {
  let app: App;
  let client: Client;
  beforeAll(async () => {
    app = await startTestServer();
    client = await agent(app, 'triage-offline');
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await app?.close();
  });

  it('with nothing captured: says so and what to call next', async () => {
    const text = textOf(await client.callTool({ name: 'analyze', arguments: { target: 'triage' } }));
    expect(text).toMatch(/^conclusion: nothing captured yet/);
    expect(text).toContain('- observe({what:"summary"})');
    expect(text).toMatch(/redaction: policy 0 · redacted 0 · blocked 0 · model offline/);
  });

  it('concludes from the real records: evidence names them, next calls are exact, the same twice', async () => {
    await feed(app);
    const first = textOf(await client.callTool({ name: 'analyze', arguments: { target: 'triage' } }));
    expect(first).toMatch(/^conclusion: \d+\+? distinct errors?; the most frequent is "Checkout failed: .*" ×\d+ at "app\.min\.js:1:\d+" \(generated position\), right after a failing request \("POST /);
    expect(first).toMatch(/^- error ×\d+ "Checkout failed: .*" at "app\.min\.js:1:\d+"/m);
    expect(first).toMatch(/^- request ×\d+ POST "http:\/\/localhost:3000\/api\/pay\?note=.*" → 500/m);
    expect(first).toContain('- observe({what:"error_bundles"})');
    expect(first).toContain('- analyze({target:"dom", selector:"#buy"})');
    expect(first).toContain('- observe({what:"network", url:"/api/pay", status_min:400})');
    expect(first).toContain('- observe({what:"errors", contains:"Checkout failed:"})');
    // every line is one line: page text is quoted, its newlines escaped
    expect(first.split('\n').every((l) => /^(conclusion|evidence|next|\(partial|- | {2}before it: |Quoted|redaction: |\d+ alerts? pending)/.test(l))).toBe(true);
    const w = windows(first);
    const leaked = secrets.map((l) => [l.class, leakIn(w, l.secret!)]).filter(([, x]) => x !== null);
    expect(leaked).toEqual([]);
    const second = textOf(await client.callTool({ name: 'analyze', arguments: { target: 'triage' } }));
    expect(second).toBe(first);
  });
});

describe("analyze triage through the side panel's path (panel token, panel session, OpenAI-compatible provider)", () => {
  let provider: RecordingProvider;
  let app: App;
  let transport: Transport | undefined;
  let tokens: PanelTokens;
  beforeAll(async () => {
    provider = await RecordingProvider.start();
    app = await startTestServer({ state_dir: tempStateDir(), model: { adapter: 'openai', base_url: provider.baseUrl, api_key: KEY, model: 'tiny', timeout_ms: 4000, first_byte_ms: 1500, retries: 1 } } as never, { mcpHttp: true });
    await feed(app);
    // the extension's worker half, paired with the key: its PanelTokens asks over this socket
    tokens = new PanelTokens({ send: (f) => transport!.send(f), url: (p) => `http://127.0.0.1:${app.port}${p}`, newId: () => crypto.randomUUID() });
    transport = new Transport({
      url: `ws://127.0.0.1:${app.port}/ws`,
      version: 'test',
      session: 'triage-panel-transport',
      createSocket: (url) => new WebSocket(url, { origin: EXTENSION_ORIGIN }) as unknown as SocketLike,
      auth: { key: () => TEST_PAIRING_KEY, nonce: newNonce, proofs: handshakeProofs, same: sameHex },
      onOther: (f) => tokens.onFrame(f),
      onStatus: (st) => {
        if (st.state.kind !== 'connected') tokens.disconnected();
      },
    });
    transport.start();
    await waitFor('the worker half verified', () => app.ws.producers().find((p) => p.session === 'triage-panel-transport')?.verified === true);
  }, 30_000);
  afterAll(async () => {
    transport?.stop();
    await app?.close();
    await provider?.close();
  });

  it('no corpus secret, from the records or the question, reaches the provider; the panel reads the footer', async () => {
    // a question as a user pastes it: secrets of many classes, as many as the question bound allows
    const asked: typeof secrets = [];
    let question = 'panel asks: why does checkout fail? here is what I have:';
    for (const l of secrets) {
      // 12 characters at least: the window the leak check matches on (a 4-digit PIN has none)
      if (l.secret!.length < 12 || asked.some((a) => a.class === l.class) || question.length + l.text.length + 3 > 1900) continue;
      asked.push(l);
      question += ` · ${l.text}`;
    }
    expect(asked.length).toBeGreaterThanOrEqual(5);
    // the leak check below sees each of them in the question as typed: its silence means something
    const qw = windows(question);
    expect(asked.filter((l) => leakIn(qw, l.secret!) === null).map((l) => l.class)).toEqual([]);
    provider.requests.length = 0;
    provider.plans = [{ pieces: ['conclusion: checkout fails ', 'after POST /api/pay → 500'] }];
    const issued: string[] = [];
    const mcp = new PanelMcp({
      version: 't',
      token: async () => {
        const a = await tokens.request();
        if (a.ok) issued.push(a.token);
        return a;
      },
    });
    try {
      const r = await mcp.call('analyze', { target: 'triage', question });
      expect(r.isError).toBe(false);
      // the call went over a panel session on /mcp, not another door
      expect(app.health().mcp_sessions).toEqual(expect.arrayContaining([expect.objectContaining({ tag: mcp.sessionId!.slice(0, 8), transport: 'panel', client_id: 'panel', state: 'ready' })]));
      expect(r.text).toMatch(/\nredaction: policy 0 · redacted \d+ · blocked 0 · model openai$/);
      const read = readAnswer(r.text);
      // the answer, then the server's note on quoted page text; the footer is off the body
      expect(read.body).toMatch(/^conclusion: checkout fails after POST \/api\/pay → 500(\n|$)/);
      expect(read.body).not.toContain('redaction: policy');
      expect(read.egressBlocked).toBe(false);
      expect(read.redaction).toMatchObject({ policy: '0', blocked: 0, model: 'openai' });
      expect(read.redaction!.redacted).toBeGreaterThan(100);
      expect(provider.requests).toHaveLength(1);
      const req = provider.requests[0]!;
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      // the records and the question both reached the provider, without their secrets
      expect(req.body).toContain('Checkout failed');
      expect(req.body).toContain('panel asks: why does checkout fail?');
      const w = windows(JSON.stringify({ body: req.body, url: req.url, headers: { ...req.headers, authorization: undefined } }));
      const leaked = secrets.map((l) => [l.class, l.carrier, leakIn(w, l.secret!)]).filter(([, , x]) => x !== null);
      expect(leaked).toEqual([]);
      // nor did the panel's own token travel on to the provider
      expect(issued).toHaveLength(1);
      expect(JSON.stringify(req)).not.toContain(issued[0]!);
    } finally {
      await mcp.close();
    }
  });
});
