/**
 * The approval round trip (issue 19, Performance: p95 < 250 ms without think time). An agent — a
 * bridge (`bin/gasoline`, what agents' MCP configs run) over stdio, with its daemon on a state dir
 * that holds a pairing secret — calls `interact click` under the product's default policy (`ask`).
 * A paired producer with the extension's Origin plays the extension: it takes the
 * `approval_request` command, decides "approve once" the moment it arrives (no think time; the
 * tab it names is the one the extension would resolve), then takes the `interact` command and
 * answers its result. n calls one after another, each on its own selector (every call is a new
 * approval, never a window); one first, untimed, loads the daemon's lazy parts.
 *
 * Legs, timed on this one process's clock (agent and extension live here): ask = the agent's
 * call → the approval_request at the extension (bridge hop, gate, request out); grant = the
 * decision sent → the interact command at the extension (the decision in, the book, the redeem,
 * the command out): ask + grant is what the approval costs before the action can start; answer =
 * the result sent → the agent's answer.
 */
import { randomBytes } from 'node:crypto';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { newSecret } from '../../src/pairing/index.js';
import { newHistogram, percentiles, type Histogram, type Percentiles } from './histogram.js';
import { McpProc, toolText } from './mcp-client.js';
import { PairedExtension, type Frame } from './paired-extension.js';
import { scratchStateDir } from './procs.js';

export type ApprovalPercentiles = Percentiles & { p95_ms: number };

export interface ApprovalProbeResult {
  calls: number;
  /** the agent's call → its answer */
  round_trip: ApprovalPercentiles;
  /** the call → the approval_request at the extension */
  ask: ApprovalPercentiles;
  /** the decision sent → the interact command at the extension */
  grant: ApprovalPercentiles;
  /** the result sent → the agent's answer */
  answer: ApprovalPercentiles;
}

const withP95 = (h: Histogram): ApprovalPercentiles => ({ ...percentiles(h), p95_ms: Math.round(h.getValueAtPercentile(95)) / 1000 });
const us = (ms: number): number => Math.max(1, Math.round(ms * 1000));
/** the tab the extension resolves for a call that names none (any id: nothing runs in a page) */
const TAB = 1;

export async function runApprovalProbe(o: { root: string; port: number; n: number }): Promise<ApprovalProbeResult> {
  const stateDir = scratchStateDir();
  const key = randomBytes(32);
  newSecret(stateDir, key.toString('hex'));
  const agent = new McpProc({ root: o.root, port: o.port, mode: 'bridge', stateDir, clientId: 'approval-bench' });
  let ext: PairedExtension | undefined;
  try {
    await agent.start();
    ext = await PairedExtension.connect(o.port, key, { origin: EXTENSION_ORIGIN, sessionPrefix: 'approval-bench' });
    // a panel token is issued only once the daemon holds the proof: the fence before the first call
    await ext.panelToken();
    const h = { round_trip: newHistogram(), ask: newHistogram(), grant: newHistogram(), answer: newHistogram() };
    for (let i = -1; i < o.n; i++) {
      const selector = `#bench-approve-${i + 1}`;
      const t0 = performance.now();
      const call = agent.callTool('interact', { action: 'click', selector }, 10_000);
      const ask = await ext.nextCmd('approval_request');
      const asked = at(ext, ask);
      const p = ask.params as { target?: { selector?: string }; action?: string };
      if (p.target?.selector !== selector || p.action !== 'interact click') throw new Error(`approval_request for the wrong call: ${JSON.stringify(p)}`);
      const decided = performance.now();
      ext.answer(ask, { decision: 'approve', tab_id: TAB });
      const run = await ext.nextCmd('interact');
      const ran = at(ext, run);
      if (run.tab_id !== TAB || (run.params as { selector?: string }).selector !== selector) throw new Error(`interact command not the approved one: ${JSON.stringify(run)}`);
      const answered = performance.now();
      ext.answer(run, { action: 'click', url: 'http://127.0.0.1:3000/', title: 'bench', detail: 'clicked' });
      const r = await call;
      const t = toolText(r);
      if (t.isError || !t.text.includes('interact click: done')) throw new Error(`interact answered: ${t.text.slice(0, 300)}`);
      if (i < 0) continue;
      h.round_trip.recordValue(r.us);
      h.ask.recordValue(us(asked - t0));
      h.grant.recordValue(us(ran - decided));
      h.answer.recordValue(us(t0 + r.us / 1000 - answered));
    }
    return { calls: o.n, round_trip: withP95(h.round_trip), ask: withP95(h.ask), grant: withP95(h.grant), answer: withP95(h.answer) };
  } finally {
    ext?.close();
    await agent.stop();
  }
}

function at(ext: PairedExtension, f: Frame): number {
  const t = ext.arrivedAt.get(f);
  if (t === undefined) throw new Error('a frame without its arrival time');
  return t;
}
