/**
 * `pnpm bench`: the SLO gate. Micro benchmarks, then issue 7's load profiles in their CI form
 * (suite.ts: steady, heavy, burst, saturate, HTTP routes, POST /logs beside the Go reference),
 * judged against bench/slo.json. Prints the SLO and profile tables, writes
 * bench/results/<timestamp>.json (not tracked), and exits 1 when an SLO gated "absolute" is missed.
 * A plain run leaves the git tree as it found it, so CI can run it on every commit.
 *
 *   node dist/bench/run.js [--full | --soak] [--only NAME[,NAME]] [--record | --no-write] [--no-gate] [--threads N]
 *   node dist/bench/run.js --compare <git-ref> [--rounds N]
 *   node dist/bench/run.js --help
 *
 * --record also rewrites the tracked record of a whole run: latest.json, latency-vs-load.svg and
 *          the measured section of PERFORMANCE.md (not with --only or --soak: partial runs)
 * --no-write  writes no file at all
 * --full   issue 7 profiles at 60 s, plus issue 2's throughput profiles (ws-ceiling, ws-gasoline,
 *          ws-gasoline-default-pool, ws-gasoline-paced, observe-under-load, http-ceiling)
 * --quick  with --full: issue 2's profiles at 2 s (smoke)
 * --soak   steady for 10 minutes
 * --threads N  pool.threads of the server idle_rss starts (default 4: a 5-core config on any machine)
 * NAME matches a profile or a prefix of one: dispatch ring index_entry pipeline http_body redaction model_egress notify steady
 * (steady through a bridge, and steady_standalone) bridge_start cold_start heavy burst saturate half clients3
 * http floor push_ref ingest_ref idle_rss panel approval (e.g. `--only steady,saturate`). clients3 without saturate in the same run loads a
 * fixed 50 000 events/s instead of half the maximum.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { runDispatchBench, type DispatchResult } from './micro/dispatch.bench.js';
import { runHttpLoad, type HttpLoadResult } from './load/http-load.js';
import { ROOT } from './load/server-proc.js';
import { runWsLoad, type WsLoadResult } from './load/ws-load.js';
import { runObserveLoad } from './load/observe-load.js';
import { latencyVsLoadSvg } from './chart.js';
import { compareTable, runCompare } from './compare.js';
import { runNotifyBench } from './micro/notify.bench.js';
import { judge, loadSlos, sloTable, type Figure, type SloResult } from './slo.js';
import { runSuite, type SuiteOutput } from './suite.js';
import { LOADED_WARMUP_CALLS, type ProfileResult, type SaturateResult } from './load/profiles.js';
import { bridgeSection } from './bridge-report.js';
import { installCleanup } from './load/procs.js';

export const SCHEMA_VERSION = 1;

/** Issue 2 targets on this 2-core machine. */
export const TARGETS = {
  ws_events_per_s: 300_000,
  http_entries_per_s: 150_000,
  rss_over_ring_budget_mb: 200,
  /** issue 4: observe p99 while ingest runs at half its measured maximum */
  observe_p99_ms: 10,
} as const;

export interface Row {
  profile: string;
  metric: string;
  value: number | string | boolean | null;
  unit?: string;
  /** for the table: the target beside the figure */
  target?: string;
  pass?: boolean;
  note?: string;
}

export interface TargetResult {
  id: string;
  profile: string;
  metric: string;
  value: number | null;
  op: '>=' | '<=' | '==';
  threshold: number | boolean;
  pass: boolean;
}

interface ProfileOutcome {
  status: 'ok' | 'skipped' | 'error';
  reason?: string;
  result?: unknown;
  seconds: number;
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const full = argv.includes('--full');
const soak = argv.includes('--soak');
const noGate = argv.includes('--no-gate');
const compareRef = argv.includes('--compare') ? (argv[argv.indexOf('--compare') + 1] ?? '') : '';
const roundsArg = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 0;
const noWrite = argv.includes('--no-write');
const record = argv.includes('--record');
const onlyArg = argv.includes('--only') ? (argv[argv.indexOf('--only') + 1] ?? '') : '';
const only = onlyArg ? onlyArg.split(',').filter(Boolean) : [];
const selected = (name: string): boolean => only.length === 0 || only.some((o) => name === o || name.startsWith(o));

const LOAD_MS = quick ? 2000 : 10_000;
const PORT_BASE = Number(process.env.GASOLINE_BENCH_PORT_BASE ?? 7940);

const profiles: Record<string, ProfileOutcome> = {};
const rows: Row[] = [];
const targets: TargetResult[] = [];

function log(msg: string): void {
  process.stdout.write(`[bench] ${msg}\n`);
}

async function profile(name: string, fn: () => Promise<{ status: 'ok' | 'skipped'; reason?: string; result?: unknown }>): Promise<void> {
  if (!selected(name)) return;
  log(`${name} …`);
  const t0 = Date.now();
  try {
    const out = await fn();
    profiles[name] = { ...out, seconds: Math.round((Date.now() - t0) / 100) / 10 };
    if (out.status === 'skipped') rows.push({ profile: name, metric: 'skipped', value: null, note: out.reason ?? '' });
  } catch (e) {
    const reason = (e as Error).message.split('\n').slice(0, 6).join(' | ');
    profiles[name] = { status: 'error', reason, seconds: Math.round((Date.now() - t0) / 100) / 10 };
    rows.push({ profile: name, metric: 'error', value: null, note: reason.slice(0, 300) });
  }
  log(`${name}: ${profiles[name]!.status}${profiles[name]!.reason ? ` (${profiles[name]!.reason})` : ''} in ${profiles[name]!.seconds}s`);
}

function target(t: Omit<TargetResult, 'pass'>): boolean {
  const v = t.value;
  const pass =
    v !== null && typeof t.threshold === 'number' ? (t.op === '>=' ? v >= t.threshold : t.op === '<=' ? v <= t.threshold : v === t.threshold) : false;
  targets.push({ ...t, pass });
  return pass;
}

const fmt = (n: number): string => n.toLocaleString('en-US');

// ── micro ────────────────────────────────────────────────────────────────────────────────────

/** `generic`: list the result's numeric leaves as rows (off where a figures function writes its own row) */
async function microOther(name: string, file: string, exportName: string, generic = true): Promise<void> {
  await profile(name, async () => {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(file)) as Record<string, unknown>;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(file.replace('./', ''))) return { status: 'skipped', reason: 'not built' };
      throw e;
    }
    const fn = mod[exportName];
    if (typeof fn !== 'function') return { status: 'skipped', reason: `not built (no ${exportName} export)` };
    const result = (await (fn as (o: { quick: boolean }) => unknown)({ quick })) as unknown;
    if (generic) for (const r of genericRows(name, result)) rows.push(r);
    return { status: 'ok', result };
  });
}

/**
 * Issue 17's worker-path figures from the pipeline micro result: CPU µs per record by stage (one
 * row, the generic rows stop at 24) and the two figures slo.json reports beside their targets.
 */
function pipelineFigures(figures: Record<string, Figure>): void {
  const out = profiles.pipeline;
  if (out?.status !== 'ok' || !Array.isArray(out.result)) return;
  const st = (out.result as Array<Record<string, unknown>>).find((r) => typeof r.whole === 'number' && typeof r.redactPct === 'number');
  if (!st) return;
  const names = ['decode', 'validate', 'redact', 'normalize', 'detect', 'encode', 'commit'];
  rows.push({ profile: 'pipeline', metric: `worker path by stage, ${names.join(' / ')} = sum; whole (untimed)`, value: `${names.map((n) => st[n]).join(' / ')} = ${st.sum}; ${st.whole}`, unit: 'µs/record (CPU)' });
  figures['pipeline.worker_us_per_record'] = st.whole as number;
  figures['pipeline.redaction_pct_of_path'] = st.redactPct as number;
  figures['pipeline.decode_us_per_record'] = st.bareDecode as number;
  figures['pipeline.worker_over_decode'] = st.wholeOverDecode as number;
}

/**
 * `POST /logs` in a worker (http-body.bench.ts): one row by stage, and the figures beside the
 * load profile's entries/s, which the machine moves too much to show a small change of this path.
 */
function httpBodyFigures(figures: Record<string, Figure>): void {
  const out = profiles.http_body;
  if (out?.status !== 'ok' || !Array.isArray(out.result)) return;
  const c = (out.result as Array<Record<string, unknown>>)[0];
  const stages = c?.stages as Record<string, number> | undefined;
  if (!c || !stages || typeof c.whole !== 'number') return;
  const names = Object.keys(stages);
  rows.push({ profile: 'http_body', metric: `POST /logs body path by stage, ${names.join(' / ')} = sum; whole (untimed); ÷ a bare JSON.parse`, value: `${names.map((n) => stages[n]).join(' / ')} = ${String(c.sum)}; ${c.whole}; ${String(c.wholeOverParse)} ×`, unit: 'µs/entry (CPU)' });
  figures['http_body.us_per_entry'] = c.whole;
  figures['http_body.parse_us_per_entry'] = c.bareParse as number;
  figures['http_body.over_parse'] = c.wholeOverParse as number;
  figures['http_body.redaction_pct_of_path'] = c.redactPct as number;
}

/** Issue 19's context build + redaction of a 100 KB triage payload: the p95 slo.json reports. */
function modelEgressFigures(figures: Record<string, Figure>): void {
  const out = profiles.model_egress;
  if (out?.status !== 'ok' || !Array.isArray(out.result)) return;
  const r = (out.result as Array<Record<string, unknown>>)[0];
  if (typeof r?.p95_ms === 'number') figures['model_egress.p95_ms'] = r.p95_ms;
}

/** Other engineers' micro results have their own shapes: show their numeric leaves, two levels deep. */
function genericRows(profileName: string, result: unknown): Row[] {
  const out: Row[] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (out.length >= 24) return;
    if (typeof v === 'number' || typeof v === 'boolean') {
      out.push({ profile: profileName, metric: path || 'value', value: typeof v === 'number' ? Math.round(v * 1000) / 1000 : v });
      return;
    }
    if (depth >= 3 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        const label = item && typeof item === 'object' && 'name' in item ? String((item as { name: unknown }).name) : String(i);
        walk(item, path ? `${path}.${label}` : label, depth + 1);
      });
      return;
    }
    for (const [k, x] of Object.entries(v)) if (k !== 'name' && k !== 'samples') walk(x, path ? `${path}.${k}` : k, depth + 1);
  };
  walk(result, '', 0);
  return out;
}

function dispatchRows(d: DispatchResult): void {
  for (const m of d.modes) {
    rows.push({ profile: 'dispatch', metric: `${m.mode} frames/s (${m.description})`, value: m.frames_per_s, unit: 'frames/s', note: `1024-frame sample p50 ${m.sample_p50_ms} ms, p99 ${m.sample_p99_ms} ms` });
  }
  rows.push({ profile: 'dispatch', metric: 'ratio b/a (micro-batch vs task per frame)', value: d.ratios.b_over_a, unit: '×' });
  rows.push({ profile: 'dispatch', metric: 'ratio c/a (SAB ring vs task per frame)', value: d.ratios.c_over_a, unit: '×' });
  rows.push({ profile: 'dispatch', metric: 'ratio c/b (SAB ring vs micro-batch)', value: d.ratios.c_over_b, unit: '×' });
}

// ── load ─────────────────────────────────────────────────────────────────────────────────────

function wsRows(name: string, r: WsLoadResult, isTarget: boolean): void {
  const lat = r.ack_latency;
  let pass: boolean | undefined;
  if (isTarget) {
    const sustained = r.verification?.ok === true ? r.events_per_s : 0;
    pass = target({ id: 'ws_ingest_events_per_s', profile: name, metric: 'events/s accepted, all readable or evicted', value: sustained, op: '>=', threshold: TARGETS.ws_events_per_s });
  }
  rows.push({
    profile: name,
    metric: `events/s accepted (${r.connected}×conn, W=${r.window}, ${r.mode}${r.targetRate ? ` @${fmt(r.targetRate)}/s` : ''}, ${r.server_threads ?? 'default'} workers)`,
    value: r.events_per_s,
    unit: 'events/s',
    ...(isTarget ? { target: `≥ ${fmt(TARGETS.ws_events_per_s)}`, pass: pass! } : {}),
  });
  rows.push({ profile: name, metric: 'MB/s accepted (msgpack)', value: r.mb_per_s, unit: 'MB/s' });
  rows.push({ profile: name, metric: 'ack latency p50 / p99 / p99.9', value: `${lat.p50_ms} / ${lat.p99_ms} / ${lat.p999_ms}`, unit: 'ms' });
  const nacks = Object.values(r.nacks).reduce((a, b) => a + b, 0) + Object.values(r.errorFrames).reduce((a, b) => a + b, 0);
  rows.push({ profile: name, metric: 'nacks+errors / resent batches', value: `${nacks} / ${r.resends}`, ...(nacks ? { note: JSON.stringify({ ...r.nacks, ...r.errorFrames }) } : {}) });
  rows.push({ profile: name, metric: 'server CPU (all threads) / producer CPU', value: `${r.server_cpu_pct} / ${r.client_cpu_pct}`, unit: '%', note: `producer thread ELU max ${r.producer_elu_max}` });
  if (r.ring_budget_mb !== null) {
    const limit = r.ring_budget_mb + TARGETS.rss_over_ring_budget_mb;
    const ok = target({ id: `rss_${name}`, profile: name, metric: 'peak RSS MB', value: r.server_peak_rss_mb, op: '<=', threshold: limit });
    rows.push({ profile: name, metric: 'server peak RSS (VmHWM)', value: r.server_peak_rss_mb, unit: 'MB', target: `≤ ${limit} (rings ${r.ring_budget_mb} + 200)`, pass: ok });
  } else {
    rows.push({ profile: name, metric: 'server peak RSS (VmHWM)', value: r.server_peak_rss_mb, unit: 'MB' });
  }
  if (r.verification) {
    const v = r.verification;
    target({ id: `accounting_${name}`, profile: name, metric: 'accepted == stored delta; stored − evicted == ring records', value: v.ok ? 1 : 0, op: '==', threshold: 1 });
    rows.push({
      profile: name,
      metric: 'every accepted event readable or evicted',
      value: v.ok,
      target: 'true',
      pass: v.ok,
      note: `acks accepted ${fmt(v.accepted_from_acks)}, stored Δ ${fmt(v.stored_delta)}; stored−evicted ${fmt(v.stored_minus_evicted)}, ring records ${fmt(v.ring_records)}; unacked ${r.unacked}`,
    });
  }
  const badCloses = Object.entries(r.closes).filter(([c]) => c !== '1000' && c !== '1005');
  if (badCloses.length || r.connected < r.connections) rows.push({ profile: name, metric: 'connection problems', value: `${r.connected}/${r.connections} connected`, note: JSON.stringify(Object.fromEntries(badCloses)) });
}

function httpRows(name: string, r: HttpLoadResult, isTarget: boolean): void {
  let pass: boolean | undefined;
  if (isTarget) pass = target({ id: 'http_logs_entries_per_s', profile: name, metric: 'POST /logs entries/s at 10 connections', value: r.entries_per_s, op: '>=', threshold: TARGETS.http_entries_per_s });
  rows.push({ profile: name, metric: `POST /logs entries/s (${r.connections} conns, 50/req)`, value: r.entries_per_s, unit: 'entries/s', ...(isTarget ? { target: `≥ ${fmt(TARGETS.http_entries_per_s)}`, pass: pass! } : {}) });
  rows.push({ profile: name, metric: 'req/s (2xx)', value: r.req_per_s, unit: 'req/s' });
  rows.push({ profile: name, metric: 'latency p50 / p99 / p99.9 (autocannon, 1 ms resolution)', value: `${r.latency_p50_ms} / ${r.latency_p99_ms} / ${r.latency_p999_ms}`, unit: 'ms' });
  if (r.non2xx || r.errors) rows.push({ profile: name, metric: 'non-2xx / errors', value: `${r.non2xx} / ${r.errors}`, note: JSON.stringify(r.status_codes) });
  if (r.server_cpu_pct !== null) rows.push({ profile: name, metric: 'server CPU / peak RSS', value: `${r.server_cpu_pct} % / ${r.server_peak_rss_mb} MB` });
}

// ── report ───────────────────────────────────────────────────────────────────────────────────

function machine(): Record<string, unknown> {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  return { nproc: availableParallelism(), cpu_model: model, node: process.version, total_mem_gb: Math.round(totalmem() / 1e9), platform: `${process.platform}-${process.arch}` };
}

function git(): Record<string, unknown> {
  const run = (args: string[]): string | null => {
    try {
      return execFileSync('git', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    } catch {
      return null;
    }
  };
  return { commit: run(['rev-parse', 'HEAD']), dirty: (run(['status', '--porcelain']) ?? '') !== '' };
}

function table(rs: Row[]): string {
  const head = ['profile', 'metric', 'value', 'target', 'pass'];
  const body = rs.map((r) => [
    r.profile,
    r.metric,
    r.value === null ? (r.note ?? '') : `${typeof r.value === 'number' ? fmt(r.value) : String(r.value)}${r.unit ? ` ${r.unit}` : ''}`,
    r.target ?? '',
    r.pass === undefined ? '' : r.pass ? 'PASS' : 'FAIL',
  ]);
  const md = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((b) => `| ${b.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`)];
  return md.join('\n');
}

function ratioLines(): string[] {
  const out: string[] = [];
  const wc = profiles['ws-ceiling']?.result as WsLoadResult | undefined;
  const wg = profiles['ws-gasoline']?.result as WsLoadResult | undefined;
  if (wc && wg) out.push(`- WebSocket: Gasoline accepted **${Math.round((wg.events_per_s / wc.events_per_s) * 1000) / 10} %** of the bare-uWS ceiling (${fmt(wg.events_per_s)} vs ${fmt(wc.events_per_s)} events/s, same producer, same run).`);
  const hc = profiles['http-ceiling']?.result as HttpLoadResult | undefined;
  const hg = profiles['http-gasoline']?.result as HttpLoadResult | undefined;
  if (hc && hg && !hc.skipped) out.push(`- HTTP POST /logs: Gasoline did **${Math.round((hg.entries_per_s / hc.entries_per_s) * 1000) / 10} %** of the ceiling server (which answers without parsing).`);
  const hgo = profiles['http-go']?.result as HttpLoadResult | undefined;
  if (hgo && hg && !hgo.skipped) out.push(`- HTTP POST /logs: Gasoline / Go reference = **${Math.round((hg.entries_per_s / hgo.entries_per_s) * 10) / 10}×**.`);
  const d = profiles.dispatch?.result as DispatchResult | undefined;
  if (d) out.push(`- Dispatch (${d.workers} worker, 16 KB frames, trivial work): micro-batched piscina **${d.ratios.b_over_a}×** task-per-frame; raw SAB ring **${d.ratios.c_over_a}×** task-per-frame and **${d.ratios.c_over_b}×** micro-batched.`);
  return out;
}

function updatePerformanceMd(section: string): void {
  const file = join(ROOT, 'PERFORMANCE.md');
  const begin = '<!-- bench:begin -->';
  const end = '<!-- bench:end -->';
  const text = existsSync(file) ? readFileSync(file, 'utf8') : `# Performance\n\n${begin}\n${end}\n`;
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i < 0 || j < i) {
    log('PERFORMANCE.md has no bench markers; section not updated');
    return;
  }
  writeFileSync(file, `${text.slice(0, i + begin.length)}\n${section}\n${text.slice(j)}`);
}

// ── issue 7 tables ───────────────────────────────────────────────────────────────────────────

const lat3 = (a: number | undefined, b: number | undefined, c: number | undefined): string => [a, b, c].map((v) => (v === undefined ? '—' : String(v))).join(' / ');

/** the daemon's own part of the observe calls against the hops around it, and the slowest call's parts */
function observeSplit(r: ProfileResult): string {
  const x = r.observe_split;
  if (!x) return '';
  return `; the daemon part ${x.server.p50_ms} / ${x.server.p99_ms}, the hops ${x.hops.p50_ms} / ${x.hops.p99_ms}; the slowest ${x.slowest.total_ms} = ${x.slowest.server_ms} + ${x.slowest.hops_ms}`;
}

function profileTable(s: SuiteOutput): string {
  const head = `| profile | offered ev/s | accepted ev/s | nacked ev/s | dropped | ack p50 / p99 / p99.9 ms | push p50 / p99 / max ms | observe p50 / p99 ms (calls, timed after ${LOADED_WARMUP_CALLS} under the same load; under 100 the p99 is the slowest; split into the daemon part, from its client trail, and the hops around it) | configure p99 ms | server CPU % | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|`;
  const lines: string[] = [head];
  for (const name of ['floor', 'steady', 'steady_standalone', 'heavy', 'burst', 'half']) {
    const r = s.results[name] as ProfileResult | undefined;
    if (!r) continue;
    const label = r.mode === 'bridge' ? `${name} (bridge)` : name;
    const srv = (r.push.server_status as { latency_ms?: { p50?: number; p99?: number; max?: number } } | null | undefined)?.latency_ms;
    const stages = (r.push.server_status as { latency_stages_ms?: Record<string, { p50?: number | null; p99?: number | null }> } | null | undefined)?.latency_stages_ms;
    const split = stages ? `; p50/p99 by stage: ${Object.entries(stages).map(([k, v]) => `${k} ${v.p50 ?? '—'}/${v.p99 ?? '—'}`).join(', ')}` : '';
    const push = r.push.push_latency ? `${lat3(r.push.push_latency.p50_ms, r.push.push_latency.p99_ms, r.push.push_latency.max_ms)} (${r.push.samples} samples${r.push.missed ? `, ${r.push.missed} missed` : ''}${srv ? `; server-side ${lat3(srv.p50, srv.p99, srv.max)}${split}` : ''}${r.alerts_suppressed_at_source ? `; ${fmt(r.alerts_suppressed_at_source)} alerts suppressed at source` : ''})` : r.push.status === 'unavailable' ? 'unavailable' : `error: ${r.push.reason ?? ''}`;
    const offered = r.burst ? `${fmt(r.offered_events_per_s)} + burst ${fmt(r.burst.offered_events)} in 2 s` : fmt(r.offered_events_per_s);
    const accepted = r.burst ? `${fmt(r.accepted_events_per_s)} + burst ${fmt(r.burst.acceptedReported)}` : fmt(r.accepted_events_per_s);
    lines.push(`| ${label} | ${offered} | ${accepted} | ${fmt(r.nacked_events_per_s)} | ${fmt(r.accounting.dropped_delta)} | ${lat3(r.ack_latency.p50_ms, r.ack_latency.p99_ms, r.ack_latency.p999_ms)} | ${push} | ${r.observe_latency.p50_ms} / ${r.observe_latency.p99_ms} (${r.observe_latency.count}${observeSplit(r)}) | ${Math.max(r.configure_latency.p99_ms, r.push.configure_latency?.p99_ms ?? 0)} (${r.configure_action}) | ${r.server_cpu_pct} | ${r.server_peak_rss_mb} (budget ${r.ring_budget_mb}) |`);
  }
  const sat = s.results.saturate as SaturateResult | undefined;
  if (sat) {
    for (const st of sat.steps) {
      const push = st.push.push_latency
        ? `${lat3(st.push.push_latency.p50_ms, st.push.push_latency.p99_ms, st.push.push_latency.max_ms)} (${st.push.samples}${st.push.missed ? `, ${st.push.missed} > 2 s` : ''}${st.push.refused ? `, ${st.push.refused} probe frames nacked` : ''})`
        : st.push.status;
      lines.push(`| saturate @${fmt(st.offered_events_per_s)}${st.hold ? ' (hold)' : ''} | ${fmt(st.offered_events_per_s)} | ${fmt(st.accepted_events_per_s)} | ${fmt(Math.round((st.nacked_batches * 100) / (sat.step_ms / 1000)))} (${st.nacked_batches} nacks) | — | ${lat3(st.ack_latency.p50_ms, st.ack_latency.p99_ms, st.ack_latency.p999_ms)} | ${push} | — | — | ${st.server_cpu_pct} | ${st.rss_mb} (budget ${sat.ring_budget_mb}) |`);
    }
  }
  return lines.join('\n');
}

function httpTable(s: SuiteOutput): string {
  const rs = Object.values((s.results.http_routes ?? {}) as Record<string, HttpLoadResult>);
  const logs = s.results.http_logs as HttpLoadResult | undefined;
  const go = s.results.http_logs_go as HttpLoadResult | undefined;
  const lines = ['| server | route | conns | req/s (2xx) | entries/s | p50 / p99 / p99.9 ms | non-2xx | server CPU % | peak RSS MB |', '|---|---|---|---|---|---|---|---|---|'];
  const row = (who: string, r: HttpLoadResult): string =>
    r.skipped ? `| ${who} | ${r.route} | — | skipped: ${r.skipped} | | | | | |` : `| ${who} | ${r.route} | ${r.connections} | ${fmt(r.req_per_s)} | ${fmt(r.entries_per_s)} | ${r.latency_p50_ms} / ${r.latency_p99_ms} / ${r.latency_p999_ms} | ${r.non2xx}${r.non2xx ? ` ${JSON.stringify(r.status_codes)}` : ''} | ${r.server_cpu_pct ?? '—'} | ${r.server_peak_rss_mb ?? '—'} |`;
  for (const r of rs) lines.push(row('gasoline', r));
  if (logs) lines.push(row('gasoline', logs));
  if (go) lines.push(row('Go reference 0.7.9', go));
  return lines.length > 2 ? lines.join('\n') : '';
}

function goLine(s: SuiteOutput): string {
  const logs = s.results.http_logs as HttpLoadResult | undefined;
  const go = s.results.http_logs_go as HttpLoadResult | undefined;
  if (!logs || !go) return '';
  if (go.skipped) return `- Go reference on POST /logs: skipped — ${go.skipped}.`;
  // the warm-up second each served, so a start-up regression still shows beside the steady figure
  const warm = logs.warmup_s && logs.warmup_entries_per_s !== null && go.warmup_entries_per_s !== null ? ` after ${logs.warmup_s} s of the same load unmeasured (in which they served ${fmt(logs.warmup_entries_per_s)} and ${fmt(go.warmup_entries_per_s)})` : '';
  const rounds = s.results.http_logs_rounds as Array<{ a_entries_per_s: number; b_entries_per_s: number }> | undefined;
  const ratio = s.figures['http.logs_vs_go_ratio'];
  const paired = rounds?.length && typeof ratio === 'number' ? `**${ratio}×**, the median of ${rounds.length} alternating rounds (${rounds.map((r) => `${Math.round((r.a_entries_per_s / Math.max(1, r.b_entries_per_s)) * 10) / 10}`).join(', ')})` : `**${Math.round((logs.entries_per_s / Math.max(1, go.entries_per_s)) * 10) / 10}×**`;
  return `- POST /logs, 10 connections, 50 entries per request, same run${warm}: Gasoline **${fmt(logs.entries_per_s)}** entries/s (p99 ${logs.latency_p99_ms} ms) vs the Go reference 0.7.9 **${fmt(go.entries_per_s)}** (p99 ${go.latency_p99_ms} ms): ${paired}.`;
}

// ── main ─────────────────────────────────────────────────────────────────────────────────────

function writeResults(name: string, data: unknown): string {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const json = JSON.stringify(data, null, 2);
  const file = join(dir, name);
  writeFileSync(file, json);
  return file;
}

async function compareMain(): Promise<number> {
  const slo = loadSlos();
  const rounds = roundsArg || slo.compare.rounds;
  log(`compare ${compareRef} (base) with the working tree (head), ${rounds} interleaved rounds`);
  const r = await runCompare({ ref: compareRef, rounds, metrics: slo.compare.metrics, log });
  const md = compareTable(r);
  process.stdout.write(`\n${md}\n\n${r.pass ? 'compare: PASS' : 'compare: FAIL (a figure regressed beyond its tolerance)'}\n`);
  if (!noWrite) log(`wrote ${writeResults(`compare-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, { schema: SCHEMA_VERSION, machine: machine(), git: git(), ...r })}`);
  return r.pass ? 0 : 1;
}

async function legacyProfiles(): Promise<void> {
  const ws = { durationMs: LOAD_MS, threads: 1, connectionsPerThread: 4, window: 16 };
  await profile('ws-ceiling', async () => {
    const r = await runWsLoad({ server: 'ceiling', port: PORT_BASE + 1, ...ws });
    wsRows('ws-ceiling', r, false);
    return { status: 'ok', result: r };
  });
  // The default pool is cores − 1 workers (1 here), which keeps a core for the main thread's
  // latency; the throughput target is judged with both cores working, the default shown beside it.
  await profile('ws-gasoline', async () => {
    const r = await runWsLoad({ server: 'gasoline', port: PORT_BASE + 2, ...ws, serverThreads: 2 });
    wsRows('ws-gasoline', r, true);
    return { status: 'ok', result: r };
  });
  await profile('ws-gasoline-default-pool', async () => {
    const r = await runWsLoad({ server: 'gasoline', port: PORT_BASE + 7, ...ws });
    wsRows('ws-gasoline-default-pool', r, false);
    return { status: 'ok', result: r };
  });
  await profile('ws-gasoline-paced', async () => {
    const r = await runWsLoad({ server: 'gasoline', port: PORT_BASE + 3, ...ws, rate: TARGETS.ws_events_per_s / 2 });
    wsRows('ws-gasoline-paced', r, false);
    return { status: 'ok', result: r };
  });
  await profile('observe-under-load', async () => {
    const rate = TARGETS.ws_events_per_s / 2;
    const r = await runObserveLoad({ port: PORT_BASE + 8, rate, durationMs: LOAD_MS });
    const l = r.observe_latency;
    const pass = target({ id: 'observe_p99_ms', profile: 'observe-under-load', metric: 'observe errors p99 ms', value: l.p99_ms, op: '<=', threshold: TARGETS.observe_p99_ms });
    rows.push({ profile: 'observe-under-load', metric: `observe({what:"errors"}) over stdio, ${r.observe_calls} calls, p50 / p99 / max`, value: `${l.p50_ms} / ${l.p99_ms} / ${l.max_ms}`, unit: 'ms', target: `p99 ≤ ${TARGETS.observe_p99_ms}`, pass });
    rows.push({ profile: 'observe-under-load', metric: 'ingest meanwhile (WS, open loop)', value: r.ingest_events_per_s, unit: 'events/s', note: `target rate ${fmt(rate)}/s` });
    // the same call on the idle server just before: what is the load's, not the machine's
    const idle = r.observe_idle_latency;
    rows.push({ profile: 'observe-under-load', metric: 'observe_idle_p99: the same call before the load, p50 / p99', value: `${idle.p50_ms} / ${idle.p99_ms}`, unit: 'ms', note: idle.p99_ms > 0 ? `loaded p99 ÷ idle p99 = ${Math.round((l.p99_ms / idle.p99_ms) * 100) / 100}` : '' });
    return { status: 'ok', result: r };
  });
  await profile('http-ceiling', async () => {
    const r = await runHttpLoad({ target: 'ceiling', port: PORT_BASE + 4, durationMs: LOAD_MS, connections: 10 });
    httpRows('http-ceiling', r, false);
    return { status: 'ok', result: r };
  });
}

/** The usage block at the top of this file, so `--help` and the code cannot drift apart. */
function usage(): string {
  const src = readFileSync(join(ROOT, 'bench', 'run.ts'), 'utf8');
  const doc = /\/\*\*([\s\S]*?)\*\//.exec(src)?.[1] ?? '';
  return `${doc.split('\n').map((l) => l.replace(/^ \* ?/, '')).join('\n').trim()}\n`;
}

/** Flag combinations that would write a misleading record, refused before minutes of load. */
function badFlags(): string | null {
  if (record && noWrite) return '--record and --no-write contradict each other';
  if (record && (only.length || soak)) return '--record records whole runs only (not --only or --soak): the record must show every SLO';
  if (record && compareRef) return '--record does not apply to --compare (its JSON goes to bench/results/compare-<time>.json)';
  return null;
}

async function main(): Promise<number> {
  // detached daemons started through bridges must not outlive the bench, also on Ctrl-C
  installCleanup();
  if (argv.includes('--help')) {
    process.stdout.write(usage());
    return 0;
  }
  const bad = badFlags();
  if (bad) {
    process.stderr.write(`bench: ${bad}\n`);
    return 2;
  }
  if (compareRef) return compareMain();
  const started = new Date();
  const kind = soak ? 'soak' : full ? 'full' : 'ci';
  log(`${kind} run${only.length ? `, only ${only.join(',')}` : ''}`);
  const figures: Record<string, Figure> = {};

  await profile('dispatch', async () => {
    const d = await runDispatchBench({ quick: !full });
    dispatchRows(d);
    return { status: 'ok', result: d };
  });
  await microOther('ring', './micro/ring.bench.js', 'runRingBench');
  await microOther('index_entry', './micro/index-entry.bench.js', 'runIndexEntryBench');
  await microOther('pipeline', './micro/pipeline.bench.js', 'runPipelineBench');
  pipelineFigures(figures);
  await microOther('http_body', './micro/http-body.bench.js', 'runHttpBodyBench', false);
  httpBodyFigures(figures);
  await microOther('redaction', './micro/redaction.bench.js', 'runRedactionBench');
  await microOther('model_egress', './micro/model-egress.bench.js', 'runModelEgressBench');
  modelEgressFigures(figures);
  await profile('notify', async () => {
    const n = await runNotifyBench({ quick: !full });
    for (const x of n) rows.push({ profile: 'notify', metric: `${x.name}, ${fmt(x.calls)} calls, ${x.line_bytes} B line, p50 / p99 / max`, value: `${x.latency.p50_ms} / ${x.latency.p99_ms} / ${x.latency.max_ms}`, unit: 'ms' });
    figures['notify.serialize_p99_ms'] = n[0]!.latency.p99_ms; // the StreamState path
    return { status: 'ok', result: n };
  });

  const threadsArg = argv.includes('--threads') ? Number(argv[argv.indexOf('--threads') + 1]) : undefined;
  const suite = await runSuite({ kind, root: ROOT, selected, log, go: !argv.includes('--no-go'), ...(threadsArg && threadsArg > 0 ? { threads: threadsArg } : {}) });
  Object.assign(figures, suite.figures);
  for (const [k, v] of Object.entries(suite.errors)) rows.push({ profile: k, metric: 'error', value: null, note: v.slice(0, 300) });
  if (full) await legacyProfiles();

  const ran = new Set(suite.ran);
  if (profiles.notify?.status === 'ok') ran.add('notify');
  if (profiles.pipeline?.status === 'ok') ran.add('pipeline');
  if (profiles.http_body?.status === 'ok') ran.add('http_body');
  if (profiles.model_egress?.status === 'ok') ran.add('model_egress');
  if (selected('notify') && !ran.has('notify')) ran.add('notify'); // selected but failed: its SLO fails
  const slo = loadSlos();
  const judged: SloResult[] = judge(slo.slos, figures, suite.unavailable, ran);
  const failed = judged.filter((j) => j.blocking);
  const mach = machine();
  const results = {
    schema: SCHEMA_VERSION,
    timestamp: started.toISOString(),
    kind,
    only,
    machine: mach,
    git: git(),
    slos: judged,
    gate: { enforced: !noGate, pass: failed.length === 0, failed: failed.map((f) => f.id) },
    figures,
    unavailable: suite.unavailable,
    suite: suite.results,
    suite_errors: suite.errors,
    points: suite.points,
    micro: profiles,
    rows,
    targets,
  };

  const sloMd = sloTable(judged);
  const profMd = profileTable(suite);
  const bridgeMd = bridgeSection(suite);
  const httpMd = httpTable(suite);
  const microMd = table(rows);
  process.stdout.write(`\n${sloMd}\n\n${profMd}\n\n${bridgeMd}\n\n${httpMd}\n\n${microMd}\n\n${[goLine(suite), ...ratioLines()].filter(Boolean).join('\n')}\n\n`);
  process.stdout.write(failed.length ? `gate: FAIL — ${failed.map((f) => `${f.id} (${f.value === null ? f.reason : f.value})`).join(', ')}\n` : 'gate: PASS\n');

  if (!noWrite) {
    log(`wrote ${writeResults(`${started.toISOString().replace(/[:.]/g, '-')}.json`, results)}`);
    if (record) {
      writeResults('latest.json', results);
      const subtitle = `${started.toISOString().slice(0, 16)}Z · ${mach.nproc} × ${String(mach.cpu_model).split(' ').slice(0, 2).join(' ')} · Node ${String(mach.node)} · ${kind} profiles`;
      writeFileSync(join(ROOT, 'bench', 'results', 'latency-vs-load.svg'), latencyVsLoadSvg(suite.points, subtitle));
      const section = [
        `Last run: ${started.toISOString()} (${kind === 'ci' ? '`pnpm bench --record`, the CI form' : '`pnpm bench --full --record`'}) · ${mach.nproc} × ${mach.cpu_model} · Node ${mach.node} · commit ${(results.git.commit as string | null)?.slice(0, 10) ?? 'none'}${results.git.dirty ? ' (dirty)' : ''} · gate **${failed.length ? 'FAIL' : 'PASS'}**`,
        '',
        '### SLOs',
        '',
        sloMd,
        '',
        '### Load profiles',
        '',
        profMd,
        '',
        '![throughput and p99 latency against offered load](bench/results/latency-vs-load.svg)',
        '',
        '### Through the bridge (issue 16)',
        '',
        bridgeMd,
        '',
        '### HTTP routes and the Go reference',
        '',
        httpMd,
        '',
        goLine(suite),
        '',
        '### Micro benchmarks',
        '',
        microMd,
        '',
        ...ratioLines(),
      ].join('\n');
      updatePerformanceMd(section);
      log('--record: latest.json, latency-vs-load.svg and the measured section of PERFORMANCE.md regenerated');
    } else {
      log('tracked record left as is (pass --record on a whole run to regenerate PERFORMANCE.md)');
    }
  }
  return failed.length && !noGate ? 1 : 0;
}

const code = await main();
// Worker threads and sockets are all closed.
process.exit(code);
