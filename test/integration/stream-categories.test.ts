/**
 * Issue 20 item 3 through the real MCP tools: configure streaming accepts the context-streaming
 * spec's event names, and each selects what the detectors raise as the records arrive: a real
 * server (edge → ingest worker → alert ring → main), a WebSocket producer, and SDK clients on the
 * real tool server receiving notifications/message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { connectAgent } from '../helpers/mcp-agent.js';
import { batch, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

let server: App;
let producer: Producer;
let seq = 0;
let sessions = 0;
const stateDir = mkdtempSync(join(tmpdir(), 'gasoline-stream-categories-'));

beforeAll(async () => {
  server = await startTestServer();
  producer = await Producer.connect(server.port);
  await producer.hello('stream-categories');
});
afterAll(async () => {
  producer.close();
  await server.close();
  rmSync(stateDir, { recursive: true, force: true });
});

interface Pushed {
  severity: string;
  category: string;
  source: string;
  title: string;
  detail: string;
  url?: string;
}

/** an agent streaming `events`, and every alert it is pushed (batches unfolded) */
async function streamingAgent(events: string[], severity_min = 'info'): Promise<{ c: Client; got: Pushed[] }> {
  const c = await connectAgent(server, stateDir, `categories-${++sessions}`);
  const got: Pushed[] = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const data = n.params.data as Pushed & { batch?: boolean; alerts?: Pushed[] };
    got.push(...(data.batch ? data.alerts! : [data]));
  });
  const r = await c.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', events, throttle_seconds: 1, severity_min } });
  expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
  return { c, got };
}

async function send(records: Record<string, unknown[]>): Promise<void> {
  const s = seq++;
  producer.send(batch(s, records));
  await producer.ackFor(s);
}

async function status(c: Client): Promise<{ notify_count: number; dropped: { filtered: number } }> {
  const r = await c.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'status' } });
  return JSON.parse((r.content as Array<{ text: string }>)[0]!.text);
}

const request = (url: string, extra: object = {}) => ({ ts: Date.now(), method: 'GET', url, status: 200, duration: 4, page_url: 'https://shop.test/cart', ...extra });
const click = (ts: number, extra: object = {}) => ({ ts, type: 'click', url: 'https://shop.test/cart', selectors: { css_path: 'form > button.pay', text: 'Pay now', role: 'button' }, ...extra });

describe("the spec's stream categories (#20 item 3)", () => {
  it('accepts regression, anomaly, security and user_frustration, and still refuses a name it does not know, naming all of them', async () => {
    const { c } = await streamingAgent(['regression', 'anomaly', 'security', 'user_frustration']);
    expect((await status(c as Client)) as unknown).toMatchObject({ status: 'enabled', config: { events: ['regression', 'anomaly', 'security', 'user_frustration'] } });
    const bad = await c.callTool({ name: 'configure', arguments: { action: 'streaming', streaming_action: 'enable', events: ['rage'] } });
    expect(bad.isError).toBe(true);
    // the tool schema refuses it first, listing the names it takes
    expect((bad.content as Array<{ text: string }>)[0]!.text).toContain('"regression"|"anomaly"|"security"|"user_frustration" at events[0]');
    await c.close();
  });

  it('security: a credential in a URL and mixed content are pushed as the requests arrive, once per finding and host; not to an errors-only client', async () => {
    const sec = await streamingAgent(['security']);
    const errs = await streamingAgent(['errors']);
    await send({ network: [request('https://pay.test/v1/charge?api_key=sk_live_0123456789abcdef0123'), request('https://pay.test/v1/refund?api_key=sk_live_0123456789abcdef0123'), request('http://cdn.shop.test/app.js')] });
    await waitFor('two security notifications', () => sec.got.length >= 2);
    const byTitle = Object.fromEntries(sec.got.map((a) => [a.title, a]));
    expect(byTitle['Security: credential-like query parameter in URL (pay.test)']).toMatchObject({ severity: 'error', category: 'security', source: 'security' });
    // the stored record was redacted before detection: the alert never carries the key
    expect(JSON.stringify(sec.got)).not.toContain('sk_live_0123456789abcdef0123');
    expect(byTitle['Security: mixed content (http request from an https page) (cdn.shop.test)']).toMatchObject({ severity: 'warning', url: 'http://cdn.shop.test/app.js' });
    // analyze security lists the same findings, worded the same
    const analyzed = await sec.c.callTool({ name: 'analyze', arguments: { target: 'security' } });
    const text = (analyzed.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain('credential-like query parameter in URL');
    expect(text).toContain('mixed content (http request from an https page)');

    // the same finding on the same host again: stored, not pushed again
    await send({ network: [request('https://pay.test/v2/charge?api_key=x')] });
    await waitFor('the errors-only client to have been offered and filtered the findings', async () => (await status(errs.c)).dropped.filtered >= 2);
    expect(sec.got.filter((a) => a.title.includes('(pay.test)'))).toHaveLength(1);
    expect((await status(errs.c)).notify_count).toBe(0);
    expect(errs.got).toEqual([]);
    await Promise.all([sec.c.close(), errs.c.close()]);
  });

  it('user_frustration: three clicks on one button within 1 s and a dead click, from action records; anomaly and errors clients hear nothing of them', async () => {
    const fr = await streamingAgent(['user_frustration']);
    const an = await streamingAgent(['anomaly', 'errors']);
    const t = Date.now();
    // as the extension sends them: the dead ones after their second of watching, in two batches
    await send({ actions: [click(t), click(t + 250)] });
    await send({ actions: [click(t + 500, { effect: 'none' }), click(t + 3000, { selectors: { css_path: 'a.help', text: 'Help' }, effect: 'navigation' })] });
    await waitFor('the rage and dead click notifications', () => fr.got.length >= 2);
    expect(fr.got.map((a) => a.title).sort()).toEqual(['Dead click on button "Pay now"', 'Rage click on button "Pay now"']);
    expect(fr.got.find((a) => a.title.startsWith('Rage'))!.detail).toContain('3 clicks within 500 ms');
    expect(fr.got.every((a) => a.category === 'user_frustration' && a.source === 'frustration_detector' && a.url === 'https://shop.test/cart')).toBe(true);

    // the actions view marks the dead one
    const actions = await fr.c.callTool({ name: 'observe', arguments: { what: 'actions', from: 'start', fold: false } });
    expect((actions.content as Array<{ text: string }>)[0]!.text).toMatch(/click text="Pay now" \(dead: no effect within 1 s\)/);

    await waitFor('the anomaly client to have been offered and filtered both', async () => (await status(an.c)).dropped.filtered >= 2);
    expect(an.got).toEqual([]);

    // the anomaly name selects the workers' anomalies: a failing request reaches it
    await send({ network: [request('https://shop.test/api/pay', { status: 503 })] });
    await waitFor('the anomaly push', () => an.got.length > 0);
    expect(an.got[0]).toMatchObject({ category: 'anomaly', source: 'anomaly_detector', title: 'Server error: GET /api/pay → 503' });
    expect(fr.got.some((a) => a.category !== 'user_frustration')).toBe(false);
    await Promise.all([fr.c.close(), an.c.close()]);
  });
});
