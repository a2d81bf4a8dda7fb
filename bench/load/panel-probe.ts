/**
 * The side panel's transport (issue 19 item 2): `initialize` p95 < 120 ms warm and `tools/list`
 * p95 < 80 ms. A `--server` daemon whose state dir holds a pairing secret (as `gasoline pair`
 * leaves it); a WebSocket producer that proves it, as the extension does, and asks for a panel
 * token; then `n` panel sessions one after another, each opened and ended as a panel would: POST
 * initialize (timed), the initialized notification, POST tools/list (timed), DELETE. One session
 * first, untimed: it loads the /mcp door (lazy since issue 17), so the figures are the warm path.
 */
import { randomBytes } from 'node:crypto';
import { newSecret } from '../../src/pairing/index.js';
import { PairedExtension } from './paired-extension.js';
import { newHistogram, percentiles, type Histogram, type Percentiles } from './histogram.js';
import { scratchStateDir } from './procs.js';
import { startServer } from './server-proc.js';

/** the targets are p95s */
export type PanelPercentiles = Percentiles & { p95_ms: number };

export interface PanelProbeResult {
  sessions: number;
  token_ms: number;
  initialize: PanelPercentiles;
  tools_list: PanelPercentiles;
}

const withP95 = (h: Histogram): PanelPercentiles => ({ ...percentiles(h), p95_ms: Math.round(h.getValueAtPercentile(95)) / 1000 });

const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export async function runPanelProbe(o: { root: string; port: number; n: number }): Promise<PanelProbeResult> {
  const stateDir = scratchStateDir();
  const key = randomBytes(32);
  newSecret(stateDir, key.toString('hex'));
  const server = await startServer({ kind: 'gasoline', port: o.port, root: o.root, stateDir });
  let ext: PairedExtension | undefined;
  try {
    const t0 = performance.now();
    ext = await PairedExtension.connect(o.port, key, { sessionPrefix: 'panel-bench' });
    const token = await ext.panelToken();
    const tokenMs = performance.now() - t0;
    const url = `http://127.0.0.1:${o.port}/mcp`;
    const auth = { authorization: `Bearer ${token}`, 'x-gasoline-client': 'panel' };
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'panel-bench', version: '1' } } });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const initH = newHistogram();
    const listH = newHistogram();
    for (let i = -1; i < o.n; i++) {
      let t = performance.now();
      const r = await fetch(url, { method: 'POST', headers: { ...ACCEPT, ...auth }, body: init });
      await r.text();
      const initMs = performance.now() - t;
      const sid = r.headers.get('mcp-session-id');
      if (r.status !== 200 || !sid) throw new Error(`initialize answered ${r.status}`);
      const h = { ...ACCEPT, ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
      await (await fetch(url, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
      t = performance.now();
      const l = await fetch(url, { method: 'POST', headers: h, body: list });
      const body = await l.text();
      const listMs = performance.now() - t;
      if (l.status !== 200 || !body.includes('"observe"')) throw new Error(`tools/list answered ${l.status}`);
      await (await fetch(url, { method: 'DELETE', headers: h })).text();
      // the first session loads the door: not a warm figure
      if (i < 0) continue;
      initH.recordValue(Math.max(1, Math.round(initMs * 1000)));
      listH.recordValue(Math.max(1, Math.round(listMs * 1000)));
    }
    return { sessions: o.n, token_ms: Math.round(tokenMs * 10) / 10, initialize: withP95(initH), tools_list: withP95(listH) };
  } finally {
    ext?.close();
    await server.stop();
  }
}
