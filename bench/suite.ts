/**
 * Issue 7's profiles as one suite, run against the build at `root` (head, or a base worktree
 * under --compare), flattened into named figures the SLO gate (slo.json) and the comparison read.
 *
 *   ci       floor 10 s (the push path with almost no ingest and no observe: what this machine's thread
 *            wake-ups cost, the reference the loaded profiles are read against), steady 20 s, heavy 15 s, burst 15 s, saturate 5 × 3 s, half 15 s (ingest at half the
 *            maximum saturate measured, issue 5's condition for push latency), HTTP routes 3 s each,
 *            POST /logs vs the Go reference 5 s each — the `pnpm bench` gate, ≤ 5 min with micro
 *   full     the same shapes at 60 s (saturate steps 10 s, HTTP 10 s)
 *   soak     steady for 10 minutes
 *   compare  steady 12 s, saturate, POST /logs 4 s: one round of `--compare`
 */
import type { Figure } from './slo.js';
import { runHttpLoad, type HttpLoadResult, type HttpRouteName } from './load/http-load.js';
import { runProfile, runSaturate, type ProfileResult, type SaturateResult } from './load/profiles.js';
import { freePort } from './load/server-proc.js';

export type SuiteKind = 'ci' | 'full' | 'soak' | 'compare';

export interface SuiteOutput {
  figures: Record<string, Figure>;
  unavailable: Record<string, string>;
  ran: Set<string>;
  results: Record<string, unknown>;
  errors: Record<string, string>;
  /** (offered events/s, accepted events/s, push p99 or null, ack p99) points for the chart */
  points: Array<{ profile: string; offered: number; accepted: number; push_p99_ms: number | null; push_p50_ms: number | null; ack_p99_ms: number }>;
}

export interface SuiteOptions {
  kind: SuiteKind;
  root: string;
  selected: (name: string) => boolean;
  log: (msg: string) => void;
  /** HTTP against the Go reference too (the gate does; a comparison round does not) */
  go?: boolean;
}

const SATURATE_RATES = [100_000, 200_000, 300_000, 400_000, 600_000];
/**
 * Push samples are sequential (re-enable, send, wait for the notification); at this spacing a 15 s
 * profile yields ~200 of them, enough for a p99 that is not simply the maximum. It stays under the
 * detectors' per-host allowance of 20 alerts a second.
 */
const PROBE_EVERY_MS = 60;

function durations(kind: SuiteKind): { floor: number; steady: number; heavy: number; burst: number; step: number; half: number; http: number; logs: number } {
  switch (kind) {
    case 'full':
      return { floor: 30_000, steady: 60_000, heavy: 60_000, burst: 60_000, step: 10_000, half: 60_000, http: 10_000, logs: 10_000 };
    case 'soak':
      return { floor: 0, steady: 600_000, heavy: 0, burst: 0, step: 0, half: 0, http: 0, logs: 0 };
    case 'compare':
      return { floor: 0, steady: 12_000, heavy: 0, burst: 0, step: 3000, half: 0, http: 0, logs: 4000 };
    default:
      return { floor: 10_000, steady: 20_000, heavy: 15_000, burst: 15_000, step: 3000, half: 15_000, http: 3000, logs: 5000 };
  }
}

export async function runSuite(o: SuiteOptions): Promise<SuiteOutput> {
  const out: SuiteOutput = { figures: {}, unavailable: {}, ran: new Set(), results: {}, errors: {}, points: [] };
  const d = durations(o.kind);
  const f = out.figures;
  const rssOver: number[] = [];
  const badLines: number[] = [];

  const step = async (name: string, fn: () => Promise<void>): Promise<void> => {
    if (!o.selected(name)) return;
    out.ran.add(name);
    const t0 = Date.now();
    o.log(`${name} …`);
    try {
      await fn();
      o.log(`${name}: ok in ${Math.round((Date.now() - t0) / 100) / 10}s`);
    } catch (e) {
      out.errors[name] = (e as Error).message.split('\n').slice(0, 6).join(' | ');
      o.log(`${name}: ERROR ${out.errors[name]}`);
    }
  };

  const profileFigures = (p: string, r: ProfileResult): void => {
    out.results[p] = r;
    f[`${p}.offered_events_per_s`] = r.offered_events_per_s;
    f[`${p}.accepted_events_per_s`] = r.accepted_events_per_s;
    f[`${p}.nacked_events_per_s`] = r.nacked_events_per_s;
    f[`${p}.dropped_events`] = r.accounting.dropped_delta;
    f[`${p}.ack_p50_ms`] = r.ack_latency.p50_ms;
    f[`${p}.ack_p99_ms`] = r.ack_latency.p99_ms;
    f[`${p}.ack_p999_ms`] = r.ack_latency.p999_ms;
    f[`${p}.observe_p50_ms`] = r.observe_latency.p50_ms;
    f[`${p}.observe_p99_ms`] = r.observe_latency.p99_ms;
    f[`${p}.configure_p99_ms`] = Math.max(r.configure_latency.p99_ms, r.push.configure_latency?.p99_ms ?? 0);
    f[`${p}.cpu_pct`] = r.server_cpu_pct;
    f[`${p}.alerts_suppressed_at_source`] = r.alerts_suppressed_at_source;
    f[`${p}.rss_mb`] = r.server_peak_rss_mb;
    const nacks = Object.values(r.nacks).reduce((a, b) => a + b, 0) + Object.values(r.burst?.nacks ?? {}).reduce((a, b) => a + b, 0);
    f[`${p}.loss_free`] = r.accounting.ok && nacks === 0 && r.observe_errors === 0;
    if (r.push.status === 'ok' && r.push.push_latency) {
      f[`${p}.push_p50_ms`] = r.push.push_latency.p50_ms;
      f[`${p}.push_p99_ms`] = r.push.push_latency.p99_ms;
      f[`${p}.push_max_ms`] = r.push.push_latency.max_ms;
      f[`${p}.push_missed`] = r.push.missed;
      // the server's own view (edge → stdout write), from streaming status
      const lat = (r.push.server_status as { latency_ms?: { p50?: number; p99?: number; max?: number } } | null | undefined)?.latency_ms;
      if (lat) {
        f[`${p}.push_server_p50_ms`] = lat.p50 ?? null;
        f[`${p}.push_server_p99_ms`] = lat.p99 ?? null;
        f[`${p}.push_server_max_ms`] = lat.max ?? null;
      }
      // where the server's time went: edge → worker published, → main read, → line written
      const stages = (r.push.server_status as { latency_stages_ms?: Record<string, { p50?: number; p99?: number }> } | null | undefined)?.latency_stages_ms;
      for (const [stage, v] of Object.entries(stages ?? {})) {
        f[`${p}.push_stage_${stage}_p50_ms`] = v.p50 ?? null;
        f[`${p}.push_stage_${stage}_p99_ms`] = v.p99 ?? null;
      }
    } else if (r.push.status === 'unavailable') {
      for (const k of ['push_p50_ms', 'push_p99_ms', 'push_max_ms']) out.unavailable[`${p}.${k}`] = r.push.reason ?? 'unavailable';
    } else {
      // streaming exists but the probe failed: a missing figure that must fail the gate
      f[`${p}.push_p99_ms`] = null;
      out.errors[`${p}.push`] = r.push.reason ?? 'push probe failed';
    }
    rssOver.push(r.server_peak_rss_mb - r.ring_budget_mb);
    badLines.push(r.stdout_bad_lines);
    out.points.push({ profile: p, offered: r.offered_events_per_s + (r.burst ? r.burst.offered_events / 2 : 0), accepted: r.accepted_events_per_s + (r.burst?.events_per_s ?? 0), push_p99_ms: r.push.push_latency?.p99_ms ?? null, push_p50_ms: r.push.push_latency?.p50_ms ?? null, ack_p99_ms: r.ack_latency.p99_ms });
  };

  if (d.floor) {
    await step('floor', async () => {
      const port = await freePort();
      profileFigures('floor', await runProfile({ name: 'floor', root: o.root, port, durationMs: d.floor, load: { rate: 100, mix: 'mixed', connections: 1 }, observeEveryMs: 0, probeEveryMs: PROBE_EVERY_MS }));
    });
  }
  await step('steady', async () => {
    const port = await freePort();
    profileFigures('steady', await runProfile({ name: 'steady', root: o.root, port, durationMs: d.steady, load: { rate: 2000, mix: 'mixed', connections: 2 }, observeEveryMs: 1000, probeEveryMs: PROBE_EVERY_MS }));
  });
  if (d.heavy) {
    await step('heavy', async () => {
      const port = await freePort();
      profileFigures('heavy', await runProfile({ name: 'heavy', root: o.root, port, durationMs: d.heavy, load: { rate: 20_000, mix: 'heavy', connections: 4 }, observeEveryMs: 1000, probeEveryMs: PROBE_EVERY_MS }));
    });
  }
  if (d.burst) {
    await step('burst', async () => {
      const port = await freePort();
      // 50 000 5xx network records in 2 s (25 000/s) on top of steady, a third of the way in
      const burst = { rate: 25_000, mix: 'errors5xx' as const, connections: 4, atMs: Math.round(d.burst / 3), durationMs: 2000 };
      profileFigures('burst', await runProfile({ name: 'burst', root: o.root, port, durationMs: d.burst, load: { rate: 2000, mix: 'mixed', connections: 2 }, burst, observeEveryMs: 1000, probeEveryMs: PROBE_EVERY_MS }));
    });
  }
  if (d.step) {
    await step('saturate', async () => {
      const port = await freePort();
      const r: SaturateResult = await runSaturate({ root: o.root, port, rates: SATURATE_RATES, stepMs: d.step, probeEveryMs: 200, serverThreads: 2 });
      out.results.saturate = r;
      f['saturate.max_accepted_events_per_s'] = r.max_accepted_events_per_s;
      f['saturate.max_sustained_offered'] = r.max_sustained_offered;
      f['saturate.overload_refused_cleanly'] = r.overload_refused_cleanly;
      f['saturate.rss_mb'] = r.server_peak_rss_mb;
      rssOver.push(r.server_peak_rss_mb - r.ring_budget_mb);
      badLines.push(r.stdout_bad_lines);
      for (const s of r.steps) out.points.push({ profile: 'saturate', offered: s.offered_events_per_s, accepted: s.accepted_events_per_s, push_p99_ms: s.push.push_latency?.p99_ms ?? null, push_p50_ms: s.push.push_latency?.p50_ms ?? null, ack_p99_ms: s.ack_latency.p99_ms });
    });
  }
  // Issue 5's condition for push latency: ingest at half of its measured maximum — the maximum the
  // saturate step just measured, on the same server configuration (2 workers).
  const max = Number(f['saturate.max_accepted_events_per_s'] ?? 0);
  if (d.half && max > 0) {
    await step('half', async () => {
      const port = await freePort();
      const rate = Math.round(max / 2 / 1000) * 1000;
      profileFigures('half', await runProfile({ name: 'half', root: o.root, port, durationMs: d.half, load: { rate, mix: 'mixed', connections: 8 }, observeEveryMs: 1000, probeEveryMs: PROBE_EVERY_MS, serverThreads: 2 }));
    });
  }
  // the loaded p99s against the idle path's, measured minutes apart in the same run
  const floorP99 = f['floor.push_p99_ms'];
  for (const p of ['heavy', 'half']) {
    const v = f[`${p}.push_p99_ms`];
    if (typeof v === 'number' && typeof floorP99 === 'number' && floorP99 > 0) f[`${p}.push_p99_over_floor`] = Math.round((v / floorP99) * 100) / 100;
  }
  if (d.http) {
    await step('http', async () => {
      const routes: HttpRouteName[] = ['/logs', '/network-bodies', '/ci-result', '/health'];
      const res: Record<string, HttpLoadResult> = {};
      for (const route of routes) {
        const port = await freePort();
        const r = await runHttpLoad({ target: 'gasoline', port, durationMs: d.http, connections: 4, route, root: o.root });
        res[route] = r;
        const key = route.slice(1).replace(/-/g, '_');
        if (route === '/ci-result' && (r.status_codes['404'] ?? 0) > 0 && r.ok_2xx === 0) {
          out.unavailable['http.ci_result_p99_ms'] = 'POST /ci-result answers 404 on this build';
          continue;
        }
        f[`http.${key}_req_per_s`] = r.req_per_s;
        f[`http.${key}_p50_ms`] = r.latency_p50_ms;
        f[`http.${key}_p99_ms`] = r.ok_2xx > 0 && r.non2xx === 0 ? r.latency_p99_ms : null;
      }
      out.results.http_routes = res;
    });
  }
  if (d.logs) {
    await step('http', async () => {
      const port = await freePort();
      const r = await runHttpLoad({ target: 'gasoline', port, durationMs: d.logs, connections: 10, root: o.root });
      out.results.http_logs = r;
      f['http.logs_entries_per_s'] = r.entries_per_s;
      if (o.go) {
        const gp = await freePort();
        const g = await runHttpLoad({ target: 'go', port: gp, durationMs: d.logs, connections: 10 });
        out.results.http_logs_go = g;
        if (g.skipped) out.unavailable['go.logs_entries_per_s'] = g.skipped;
        else {
          f['go.logs_entries_per_s'] = g.entries_per_s;
          f['go.logs_p99_ms'] = g.latency_p99_ms;
          f['http.logs_vs_go_ratio'] = g.entries_per_s > 0 ? Math.round((r.entries_per_s / g.entries_per_s) * 10) / 10 : null;
        }
      }
    });
  }
  if (rssOver.length) f['all.rss_over_ring_budget_mb'] = Math.max(...rssOver);
  if (badLines.length) f['all.stdout_bad_lines'] = Math.max(...badLines);
  if (rssOver.length) out.ran.add('all');
  return out;
}
