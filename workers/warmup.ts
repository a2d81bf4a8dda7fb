/**
 * Synthetic batches for JIT warm-up before the port opens (cold JIT costs 60–150 ms of backlog
 * in the first second). They exercise the same decode → validate → redact → encode path as real
 * traffic but are never committed to the rings.
 */
import { Packr, pack } from 'msgpackr';

const packr = new Packr({ useRecords: true });

function frame(seq: number): Record<string, unknown> {
  const ts = Date.now();
  const logs = [];
  const network = [];
  for (let i = 0; i < 40; i++) {
    logs.push({ ts, level: i % 7 === 0 ? 'error' : 'log', type: 'console', message: `warm-up message ${i} for seq ${seq}`, args: [{ i, ok: true }], url: 'http://127.0.0.1/warmup', source: 'app.js:10' });
    network.push({ ts: new Date(ts).toISOString(), method: 'GET', url: `http://127.0.0.1/api/items/${i}?token=warmup`, status: i % 9 === 0 ? 500 : 200, duration: 12.5, initiator_type: 'fetch', transfer_size: 1200 });
  }
  return {
    t: 'batch',
    seq,
    sent_at: ts,
    tab_id: 1,
    page_url: 'http://127.0.0.1/warmup',
    logs,
    network,
    network_bodies: [{ ts, method: 'POST', url: 'http://127.0.0.1/api/login', status: 401, request_headers: { authorization: 'Bearer warmup' }, request_body: '{"user":"a","password":"b"}', response_body: '{"error":"nope"}' }],
    ws_events: [{ ts, event: 'message', id: 'ws1', direction: 'incoming', data: '{"type":"tick"}' }],
    actions: [{ ts, type: 'click', url: 'http://127.0.0.1/warmup', selectors: { role: 'button', text: 'Save' } }],
    perf: [{ ts, url: 'http://127.0.0.1/warmup', timing: { ttfb: 20, fcp: 100, lcp: 200, cls: 0.01, inp: 40, dom_content_loaded: 150, load: 300 } }],
  };
}

/** plain maps as the extension sends them (records kept as their bytes), and every other one in msgpackr's record extension */
export function* warmupFrames(n: number): Generator<Uint8Array> {
  for (let i = 0; i < n; i++) yield i % 2 === 0 ? pack(frame(i)) : packr.pack(frame(i));
}
