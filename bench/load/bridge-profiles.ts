/**
 * Issue 16's own profiles, about the bridge an agent's MCP config runs:
 *
 *   bridge_start  spawn() → the `initialize` result line on stdout, with a daemon running (warm)
 *                 and with none (cold: the bridge starts one; stopped between spawns), beside
 *                 `node -e 0` spawn → exit, interleaved: the floor no bridge can go below
 *   clients3      3 bridges (3 client ids) on one daemon, each calling observe once a second and
 *                 running its own push probe, while ingest runs at half the measured maximum;
 *                 before the load, the daemon's RSS with the 3 bridges connected against a
 *                 standalone process's idle RSS (same warm-up calls, same run), and each bridge's
 *
 * Every process started here is stopped here (finally blocks), and procs.ts ends what is left
 * if the bench itself dies.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { newHistogram, percentiles, type Percentiles } from './histogram.js';
import { gasolineArgs, healthPid, McpProc, rssOf, stopDaemonOf, toolText } from './mcp-client.js';
import { accounting, producers, settled, startServer, type Accounting } from './profiles.js';
import { scratchStateDir, trackChild } from './procs.js';
import { detectStreaming, startPushProbe, type PushProbeResult } from './push-probe.js';
import { cpuSeconds, getHealth, waitPortFree } from './server-proc.js';
import { daemonEnv } from '../../src/bridge/daemon.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface BridgeStartResult {
  /** spawn → initialize result, a daemon already running */
  warm: Percentiles;
  /** spawn → initialize result, no daemon (the bridge starts one meanwhile) */
  cold: Percentiles;
  /** cold: spawn → the first tools/call answered by the daemon the bridge started */
  cold_first_call: Percentiles;
  /** `node -e 0` spawn → exit, interleaved with the warm spawns */
  node_floor: Percentiles;
  /** warm p99 ÷ node floor p99, and the same at p50 */
  warm_over_node_p99: number | null;
  warm_over_node_p50: number | null;
}

/** Spawns a bridge with its initialize request already on stdin; resolves at the result line. */
function timeInitialize(root: string, port: number, stateDir: string, mode: 'bridge' | 'standalone' = 'bridge'): Promise<{ ms: number; child: ReturnType<typeof spawn>; out: () => string[] }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, GASOLINE_LOG_LEVEL: 'warn', ...(mode === 'standalone' ? { GASOLINE_PORT: String(port), GASOLINE_STATE_DIR: stateDir, GASOLINE_THREADS: '1' } : {}) };
    const t0 = performance.now();
    const child = spawn(process.execPath, gasolineArgs({ root, port, mode }, stateDir), { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    trackChild(child);
    // written before the bridge runs: the pipe holds it, as an agent's client does
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gasoline-bench', version: '1' } } })}\n`);
    const lines: string[] = [];
    let buf = '';
    let err = '';
    let done = false;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (err = (err + d).slice(-4000)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      const at = performance.now();
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        if (!done && line.includes('"id":1') && line.includes('"result"')) {
          done = true;
          resolve({ ms: at - t0, child, out: () => lines });
        }
      }
    });
    child.once('exit', (code) => {
      if (!done) reject(new Error(`the bridge exited with ${code} before answering initialize; stderr: ${err.slice(-1500)}`));
    });
  });
}

async function endBridge(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.stdin!.end();
  const t = setTimeout(() => child.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(t);
}

function nodeFloor(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    trackChild(c);
    c.once('exit', () => resolve(performance.now() - t0));
    c.once('error', reject);
  });
}

const ratio = (a: number, b: number): number | null => (b > 0 ? Math.round((a / b) * 100) / 100 : null);

export async function runBridgeStart(o: { root: string; port: number; warm: number; cold: number }): Promise<BridgeStartResult> {
  const stateDir = scratchStateDir();
  const us = (ms: number): number => Math.max(1, Math.round(ms * 1000));
  const cold = newHistogram();
  const coldCall = newHistogram();
  for (let i = 0; i < o.cold; i++) {
    const { ms, child } = await timeInitialize(o.root, o.port, stateDir);
    cold.recordValue(us(ms));
    try {
      // how long an agent then waits for its first real answer: the daemon's start
      const t0 = performance.now();
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      const end = Date.now() + 60_000;
      for (let id = 2; ; id++) {
        if (Date.now() > end) throw new Error('cold bridge: no tool answer from a daemon within 60 s');
        const ok = await callOnce(child, id);
        if (ok) break;
        await sleep(50);
      }
      coldCall.recordValue(us(performance.now() - t0));
    } finally {
      await endBridge(child);
      await stopDaemonOf(stateDir, await healthPid(o.port));
      await waitPortFree(o.port, 15_000);
    }
  }
  const warm = newHistogram();
  const floor = newHistogram();
  const owner = new McpProc({ root: o.root, port: o.port, mode: 'bridge', stateDir });
  try {
    await owner.start();
    // one spawn of each, untimed: the page cache holds node and the bridge's modules after it
    await endBridge((await timeInitialize(o.root, o.port, stateDir)).child);
    await nodeFloor();
    for (let i = 0; i < o.warm; i++) {
      floor.recordValue(us(await nodeFloor()));
      const { ms, child } = await timeInitialize(o.root, o.port, stateDir);
      warm.recordValue(us(ms));
      await endBridge(child);
    }
  } finally {
    await owner.stop();
  }
  const w = percentiles(warm);
  const f = percentiles(floor);
  return { warm: w, cold: percentiles(cold), cold_first_call: percentiles(coldCall), node_floor: f, warm_over_node_p99: ratio(w.p99_ms, f.p99_ms), warm_over_node_p50: ratio(w.p50_ms, f.p50_ms) };
}

export interface StandaloneStartResult {
  /** spawn → the initialize result line of a `--standalone` process (issue 17: < 150 ms) */
  standalone: Percentiles;
  /** `node -e 0` spawn → exit, interleaved */
  node_floor: Percentiles;
  standalone_over_node_p50: number | null;
  standalone_over_node_p99: number | null;
}

/**
 * A standalone's cold start: spawn → its first initialize answered, `n` times, each followed by
 * its exit (stdin ended: it stops its workers and frees the port) and a `node -e 0` spawn, the
 * floor no Node process goes below, interleaved so both see the same machine.
 */
export async function runStandaloneStart(o: { root: string; port: number; n: number }): Promise<StandaloneStartResult> {
  const us = (ms: number): number => Math.max(1, Math.round(ms * 1000));
  const h = newHistogram();
  const floor = newHistogram();
  const stateDir = scratchStateDir();
  // a start is what is measured: each process is killed once it answered (threads die with it),
  // rather than waiting seconds for a graceful stop in the middle of its workers' warm-up
  const kill = async (child: ReturnType<typeof spawn>): Promise<void> => {
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await exited;
    await waitPortFree(o.port, 15_000);
  };
  // untimed first spawn: the page cache holds node and the modules after it
  await kill((await timeInitialize(o.root, o.port, stateDir, 'standalone')).child);
  for (let i = 0; i < o.n; i++) {
    floor.recordValue(us(await nodeFloor()));
    const { ms, child } = await timeInitialize(o.root, o.port, stateDir, 'standalone');
    h.recordValue(us(ms));
    await kill(child);
  }
  const s = percentiles(h);
  const f = percentiles(floor);
  return { standalone: s, node_floor: f, standalone_over_node_p50: ratio(s.p50_ms, f.p50_ms), standalone_over_node_p99: ratio(s.p99_ms, f.p99_ms) };
}

/** One tools/call on a raw bridge child: true when the daemon answered it without error. */
function callOnce(child: ReturnType<typeof spawn>, id: number): Promise<boolean> {
  return new Promise((resolve) => {
    let buf = '';
    const onData = (d: Buffer | string): void => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.includes(`"id":${id}`)) continue;
        child.stdout!.off('data', onData);
        const msg = JSON.parse(line) as { result?: { isError?: boolean }; error?: unknown };
        resolve(Boolean(msg.result) && !msg.result?.isError);
        return;
      }
    };
    child.stdout!.on('data', onData);
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'configure', arguments: { action: 'health' } } })}\n`);
  });
}

export interface ClientFigures {
  client_id: string;
  push: PushProbeResult;
  observe_latency: Percentiles;
  observe_errors: number;
  bridge_idle_rss_mb: number;
  bridge_peak_rss_mb: number;
}

export interface ClientsResult {
  clients: ClientFigures[];
  offered_events_per_s: number;
  accepted_events_per_s: number;
  /** where the rate came from: half of saturate's maximum, or a fixed rate when saturate did not run */
  rate_basis: string;
  ack_latency: Percentiles;
  standalone_idle_rss_mb: number;
  /** VmRSS of the daemon, idle, with the 3 bridges connected and warmed up as the standalone was */
  daemon_idle_rss_mb: number;
  daemon_rss_over_standalone_idle_mb: number;
  bridge_idle_rss_max_mb: number;
  daemon_peak_rss_mb: number;
  bridge_peak_rss_max_mb: number;
  /** the least any Node relay costs here, same run: node holding stdin open after one HTTP request to the daemon */
  node_floor_rss_mb: number;
  daemon_cpu_pct: number;
  accounting: Accounting;
  stdout_bad_lines: number;
}

/**
 * Before the idle reading, both sides take the same second of telemetry and then the same untimed
 * calls runProfile makes (an agent's first calls compile the query path): a standalone warms its
 * ingest worker at start, a `--server` daemon starts it on the first producer, so without the seed
 * the figure compared a started worker with one not yet started (daemon − standalone read −29 to
 * −32 MB, 2026-12-02).
 */
async function warmUp(m: McpProc, port: number): Promise<void> {
  await producers(port, { rate: 5000, mix: 'mixed', connections: 2 }, 1000, 4242);
  await warmUpCalls(m);
}

async function warmUpCalls(m: McpProc): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await m.callTool('observe', { what: 'errors', limit: 50 });
    await m.callTool('configure', { action: 'health' });
  }
}

export async function runClients(o: {
  root: string;
  port: number;
  standalonePort: number;
  clients: number;
  rate: number;
  rateBasis: string;
  durationMs: number;
  probeEveryMs: number;
  serverThreads: number;
}): Promise<ClientsResult> {
  // standalone idle first, alone on the machine's share of the cores, then gone. It runs with the
  // allocator settings a bridge gives its daemon (daemonEnv), so the difference is what the daemon
  // loads, not what two allocators keep.
  const solo = await startServer(o.root, o.standalonePort, o.serverThreads, 'standalone', daemonEnv({ ...process.env }));
  let standaloneIdle: number;
  try {
    await warmUp(solo, o.standalonePort);
    await sleep(1000);
    standaloneIdle = rssOf(solo.pid).rss_mb;
  } finally {
    await solo.stop();
  }

  const stateDir = scratchStateDir();
  const ids = Array.from({ length: o.clients }, (_, i) => `bench-${String.fromCharCode(97 + i)}`);
  const bridges: McpProc[] = [];
  try {
    for (const [i, clientId] of ids.entries()) {
      const m = new McpProc({ root: o.root, port: o.port, mode: 'bridge', stateDir, clientId, threads: o.serverThreads, ownsDaemon: i === 0 });
      bridges.push(m);
      await m.start();
    }
    await warmUp(bridges[0]!, o.port);
    for (const m of bridges.slice(1)) await warmUpCalls(m);
    await sleep(1000);
    const daemonPid = bridges[0]!.pid;
    const daemonIdle = rssOf(daemonPid).rss_mb;
    const bridgeIdle = bridges.map((m) => m.clientRss().rss_mb);
    const nodeFloor = await nodeFloorRss(o.port);

    const support = await detectStreaming(bridges[0]!);
    const before = await getHealth(o.port);
    const cpu0 = cpuSeconds(daemonPid);
    const t0 = performance.now();
    const probes = await Promise.all(bridges.map((m, i) => startPushProbe({ mcp: m, port: o.port, support, intervalMs: o.probeEveryMs, tag: ids[i]!, host: `probe-${ids[i]}.example.test` })));
    const load = producers(o.port, { rate: o.rate, mix: 'mixed', connections: 8 }, o.durationMs, 4343);
    let running = true;
    const obs = bridges.map(() => ({ h: newHistogram(), errors: 0 }));
    const observing = bridges.map(async (m, i) => {
      // staggered, so the three agents' calls do not line up on the same tick
      await sleep(Math.round((1000 * i) / bridges.length));
      while (running) {
        const r = await m.callTool('observe', { what: 'errors', limit: 50 });
        obs[i]!.h.recordValue(r.us);
        if (toolText(r).isError) obs[i]!.errors++;
        await sleep(1000);
      }
    });
    const m = await load;
    running = false;
    await Promise.all(observing);
    const pushes = await Promise.all(probes.map((p) => p.stop()));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(daemonPid) - cpu0;
    await settled(o.port, 5000);
    await sleep(300);
    const after = await getHealth(o.port);
    const acct = accounting(before, after, m.acceptedReported + pushes.reduce((a, p) => a + p.accepted, 0), m.unacked);
    const daemonPeak = rssOf(daemonPid).hwm_mb;
    const clients: ClientFigures[] = bridges.map((b, i) => ({
      client_id: ids[i]!,
      push: pushes[i]!,
      observe_latency: percentiles(obs[i]!.h),
      observe_errors: obs[i]!.errors,
      bridge_idle_rss_mb: bridgeIdle[i]!,
      bridge_peak_rss_mb: b.clientRss().hwm_mb,
    }));
    return {
      clients,
      offered_events_per_s: o.rate,
      accepted_events_per_s: m.events_per_s,
      rate_basis: o.rateBasis,
      ack_latency: m.ack_latency,
      standalone_idle_rss_mb: standaloneIdle,
      daemon_idle_rss_mb: daemonIdle,
      daemon_rss_over_standalone_idle_mb: daemonIdle - standaloneIdle,
      bridge_idle_rss_max_mb: Math.max(...bridgeIdle),
      daemon_peak_rss_mb: daemonPeak,
      bridge_peak_rss_max_mb: Math.max(...clients.map((c) => c.bridge_peak_rss_mb)),
      node_floor_rss_mb: nodeFloor,
      daemon_cpu_pct: Math.round((cpu / seconds) * 100),
      accounting: acct,
      stdout_bad_lines: Math.max(...bridges.map((b) => b.badLines)),
    };
  } finally {
    // the joiners first, the bridge that owns the daemon last (it stops the daemon)
    for (const b of [...bridges].reverse()) await b.stop();
  }
}

/**
 * RSS of the least a Node process relaying stdio to the daemon must be: node itself, stdin read,
 * node:http loaded and one request made. Measured in the same run as the bridges, so a bridge's
 * RSS is read against what Node alone costs on this machine today.
 */
async function nodeFloorRss(port: number): Promise<number> {
  const { spawn } = await import('node:child_process');
  const script = `process.stdin.on('data', () => {}); require('node:http').get('http://127.0.0.1:${port}/health', (r) => r.resume()).on('error', () => {});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'ignore', 'ignore'] });
  try {
    await sleep(1000);
    return rssOf(child.pid!).rss_mb;
  } finally {
    child.kill('SIGKILL');
  }
}

