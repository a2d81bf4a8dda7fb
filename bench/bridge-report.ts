/**
 * The "Through the bridge" tables (issue 16): the bridge beside --standalone from the same run as
 * ratios with the raw ms, bridge start-up beside node's own, and three clients on one daemon.
 */
import type { BridgeStartResult, ClientsResult } from './load/bridge-profiles.js';
import type { Percentiles } from './load/histogram.js';
import type { ProfileResult } from './load/profiles.js';
import type { SuiteOutput } from './suite.js';

const fmt = (n: number): string => n.toLocaleString('en-US');
const ratio = (a: number | undefined, b: number | undefined): string => (a !== undefined && b !== undefined && b > 0 ? `${Math.round((a / b) * 100) / 100} ×` : '—');
const pct = (p: Percentiles | null | undefined): string => (p ? `${p.p50_ms} / ${p.p99_ms}` : '—');

function sideBySide(s: SuiteOutput): string[] {
  const b = s.results.steady as ProfileResult | undefined;
  const a = s.results.steady_standalone as ProfileResult | undefined;
  const nm = s.unavailable['steady.push_p99_ms'];
  if (!b || !a) return nm ? [`Bridge vs standalone: not measured — ${nm}.`] : [];
  const conf = (r: ProfileResult): number => Math.max(r.configure_latency.p99_ms, r.push.configure_latency?.p99_ms ?? 0);
  const rows: Array<[string, string, string, string]> = [
    ['push p50 / p99 ms', pct(b.push.push_latency), pct(a.push.push_latency), ratio(b.push.push_latency?.p99_ms, a.push.push_latency?.p99_ms)],
    ['push p50 ratio', '', '', ratio(b.push.push_latency?.p50_ms, a.push.push_latency?.p50_ms)],
    ['observe p50 / p99 ms', pct(b.observe_latency), pct(a.observe_latency), ratio(b.observe_latency.p99_ms, a.observe_latency.p99_ms)],
    ['configure p99 ms', String(conf(b)), String(conf(a)), ratio(conf(b), conf(a))],
    ['ack p50 / p99 ms (ingest, unaffected by the front)', pct(b.ack_latency), pct(a.ack_latency), ratio(b.ack_latency.p99_ms, a.ack_latency.p99_ms)],
    ['server CPU % (daemon / single process)', String(b.server_cpu_pct), String(a.server_cpu_pct), ratio(b.server_cpu_pct, a.server_cpu_pct)],
    ['server peak RSS MB', String(b.server_peak_rss_mb), String(a.server_peak_rss_mb), ratio(b.server_peak_rss_mb, a.server_peak_rss_mb)],
    ['bridge peak RSS MB', String(b.bridge_peak_rss_mb ?? '—'), '—', ''],
  ];
  return [
    `steady (2 000 events/s, observe + configure every second, push probe every 60 ms), through a bridge and then --standalone, back to back in this run (${b.push.samples} / ${a.push.samples} push samples):`,
    '',
    '| figure | through the bridge | standalone | bridge ÷ standalone (p99) |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

function startTable(r: BridgeStartResult | undefined): string[] {
  if (!r) return [];
  const row = (what: string, p: Percentiles): string => `| ${what} | ${p.count} | ${p.p50_ms} | ${p.p99_ms} | ${p.max_ms} |`;
  return [
    '',
    'Bridge start-up: spawn() → the `initialize` result line on its stdout (the request is already in the pipe at spawn, as an agent writes it):',
    '',
    '| measured | n | p50 ms | p99 ms | max ms |',
    '|---|---|---|---|---|',
    row('with a daemon running (target p99 < 50 ms)', r.warm),
    row('without a daemon (the bridge starts one meanwhile)', r.cold),
    row('without a daemon: spawn → first tool answer from the daemon it started', r.cold_first_call),
    row('`node -e 0` spawn → exit, interleaved with the warm spawns (the floor)', r.node_floor),
    `| warm bridge ÷ node floor | | ${r.warm_over_node_p50 ?? '—'} × | ${r.warm_over_node_p99 ?? '—'} × | |`,
  ];
}

function clientsTable(r: ClientsResult | undefined, unavailable: string | undefined): string[] {
  if (!r) return unavailable ? ['', `Three clients on one daemon: not measured — ${unavailable}.`] : [];
  const rows = r.clients.map((c) => {
    const p = c.push.push_latency;
    const push = p ? `${p.p50_ms} / ${p.p99_ms} / ${p.max_ms} (${c.push.samples}${c.push.missed ? `, ${c.push.missed} missed` : ''})` : `${c.push.status}${c.push.reason ? `: ${c.push.reason}` : ''}`;
    return `| ${c.client_id} | ${push} | ${pct(c.observe_latency)} (${c.observe_latency.count}${c.observe_errors ? `, ${c.observe_errors} errors` : ''}) | ${c.bridge_idle_rss_mb} / ${c.bridge_peak_rss_mb} |`;
  });
  return [
    '',
    `Three bridges (clients bench-a, -b, -c) on one daemon (2 workers), each calling observe once a second and probing push every 100 ms on its own host, while ingest ran at ${fmt(r.offered_events_per_s)} events/s (${r.rate_basis}; accepted ${fmt(r.accepted_events_per_s)}, ack p99 ${r.ack_latency.p99_ms} ms, every accepted event readable: ${r.accounting.ok}):`,
    '',
    '| client | push p50 / p99 / max ms (samples) | observe p50 / p99 ms (calls) | bridge RSS idle / peak MB (≤ 45) |',
    '|---|---|---|---|',
    ...rows,
    '',
    `Memory, idle after the same second of telemetry and warm-up calls: daemon with 3 bridges connected **${r.daemon_idle_rss_mb} MB** vs a standalone process **${r.standalone_idle_rss_mb} MB**: **+${r.daemon_rss_over_standalone_idle_mb} MB** (target ≤ +30). Under the load: daemon peak ${r.daemon_peak_rss_mb} MB, CPU ${r.daemon_cpu_pct} %.`,
  ];
}

export function bridgeSection(s: SuiteOutput): string {
  const lines = [...sideBySide(s), ...startTable(s.results.bridge_start as BridgeStartResult | undefined), ...clientsTable(s.results.clients3 as ClientsResult | undefined, s.unavailable['clients3.push_p99_max_ms'])];
  return lines.join('\n').trim();
}
