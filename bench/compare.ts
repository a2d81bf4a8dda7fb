/**
 * `pnpm bench --compare <git-ref>`: build the ref in a temporary git worktree (pnpm install
 * --frozen-lockfile --prefer-offline, pnpm build), then run base and head interleaved — A B B A …
 * — on this machine with this bench code, so both see the same neighbours and the same drift.
 * A figure regresses when median(head) / median(base) moves the wrong way by more than its
 * tolerance in slo.json; the tolerances come from `--compare HEAD` (head against itself), whose
 * per-round ratios are the noise (`observed_noise` below). Rounds alternate the order (A B, B A, …).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompareMetric, Figure } from './slo.js';
import { ROOT } from './load/server-proc.js';
import { runSuite } from './suite.js';
import { pairedWorkerPath, type PairedResult } from './micro/paired-worker-path.js';
import { pairedObserve, type PairedObserveResult } from './load/paired-observe.js';
import { pairedIngest, type PairedIngestResult } from './load/paired-ingest.js';
import type { PairedRatios } from './paired-stats.js';

export interface CompareRow extends CompareMetric {
  base: number[];
  head: number[];
  base_median: number | null;
  head_median: number | null;
  /** head / base of the medians */
  ratio: number | null;
  /** max |head_i / base_i − 1| over rounds: what this pair of runs says about noise */
  observed_noise: number | null;
  verdict: 'ok' | 'REGRESSED' | 'not measured';
}

export interface CompareResult {
  ref: string;
  base_commit: string;
  rounds: number;
  rows: CompareRow[];
  /** the two builds' worker paths side by side in one process (paired-worker-path.ts), or why not measured */
  paired_worker_path: PairedResult | string;
  /** the two builds' observe under the same load at once, calls in pairs (paired-observe.ts), or why not measured */
  paired_observe: PairedObserveResult | string;
  /** the two daemons' CPU per event, bursts alternated (paired-ingest.ts), or why not measured */
  paired_ingest: PairedIngestResult | string;
  pass: boolean;
  build_seconds: number;
}

const median = (xs: number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function sh(cmd: string, args: string[], cwd: string, timeoutMs: number): string {
  return execFileSync(cmd, args, { cwd, timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }).toString();
}

/** Checks out and builds `ref`; returns its directory and a cleanup. */
function buildBase(ref: string, log: (m: string) => void): { dir: string; commit: string; seconds: number; cleanup: () => void } {
  const t0 = Date.now();
  const commit = sh('git', ['rev-parse', '--verify', `${ref}^{commit}`], ROOT, 10_000).trim();
  const dir = mkdtempSync(join(tmpdir(), 'gasoline-base-'));
  log(`base ${ref} = ${commit.slice(0, 10)} → ${dir}`);
  sh('git', ['worktree', 'add', '--detach', dir, commit], ROOT, 60_000);
  const cleanup = (): void => {
    try {
      sh('git', ['worktree', 'remove', '--force', dir], ROOT, 60_000);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      try {
        sh('git', ['worktree', 'prune'], ROOT, 10_000);
      } catch {
        // nothing more to do
      }
    }
  };
  try {
    log('base: pnpm install --frozen-lockfile --prefer-offline …');
    sh('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], dir, 300_000);
    log('base: pnpm build …');
    sh('pnpm', ['build'], dir, 300_000);
  } catch (e) {
    cleanup();
    const err = e as Error & { stderr?: Buffer; stdout?: Buffer };
    throw new Error(`building ${ref} failed: ${err.message.split('\n')[0]}\n${(err.stderr ?? err.stdout ?? '').toString().slice(-1500)}`);
  }
  return { dir, commit, seconds: Math.round((Date.now() - t0) / 1000), cleanup };
}

export async function runCompare(o: { ref: string; rounds: number; metrics: CompareMetric[]; log: (m: string) => void }): Promise<CompareResult> {
  const base = buildBase(o.ref, o.log);
  const samples: { base: Array<Record<string, Figure>>; head: Array<Record<string, Figure>> } = { base: [], head: [] };
  let paired: PairedResult | string = 'not run';
  let pairedObs: PairedObserveResult | string = 'not run';
  let pairedIng: PairedIngestResult | string = 'not run';
  try {
    // first, while this process runs nothing else: the per-round ratio is what a whole-daemon
    // figure cannot show beyond this machine's noise
    o.log('worker path, base and head side by side in this process …');
    paired = await pairedWorkerPath(base.dir, ROOT);
    o.log(`  ${typeof paired === 'string' ? `not measured: ${paired}` : `head/base ${paired.ratio} (p25 ${paired.ratio_p25}, p75 ${paired.ratio_p75}); ${paired.base_us} → ${paired.head_us} µs a record`}`);
    o.log('ingest CPU per event, the two daemons side by side, bursts alternated …');
    pairedIng = await pairedIngest(base.dir, ROOT);
    o.log(`  ${typeof pairedIng === 'string' ? `not measured: ${pairedIng}` : `head/base ${pairedIng.ratio} (p25 ${pairedIng.ratio_p25}, p75 ${pairedIng.ratio_p75}); ${pairedIng.base_us} → ${pairedIng.head_us} µs an event`}`);
    o.log('observe, base and head under the same load at once, calls in pairs …');
    try {
      pairedObs = await pairedObserve(base.dir, ROOT);
    } catch (e) {
      pairedObs = (e as Error).message.split('\n')[0]!;
    }
    o.log(`  ${typeof pairedObs === 'string' ? `not measured: ${pairedObs}` : `head/base ${pairedObs.ratio} (p25 ${pairedObs.ratio_p25}, p75 ${pairedObs.ratio_p75}); ${pairedObs.base_ms} → ${pairedObs.head_ms} ms a call`}`);
    for (let i = 0; i < o.rounds; i++) {
      // A B, then B A, …: neither side always runs second (a drift or warm page cache favours one)
      for (const side of i % 2 === 0 ? (['base', 'head'] as const) : (['head', 'base'] as const)) {
        o.log(`round ${i + 1}/${o.rounds}: ${side}`);
        const s = await runSuite({ kind: 'compare', root: side === 'base' ? base.dir : ROOT, selected: () => true, log: (m) => o.log(`  ${side} ${m}`) });
        samples[side].push(s.figures);
      }
    }
  } finally {
    base.cleanup();
  }
  const rows: CompareRow[] = o.metrics.map((m) => {
    if (m.metric === PAIRED_WORKER_PATH) return pairedRow(m, typeof paired === 'string' ? paired : { base: paired.base_us, head: paired.head_us, ...paired });
    if (m.metric === PAIRED_INGEST) return pairedRow(m, typeof pairedIng === 'string' ? pairedIng : { base: pairedIng.base_us, head: pairedIng.head_us, ...pairedIng });
    if (m.metric === PAIRED_OBSERVE) return pairedRow(m, typeof pairedObs === 'string' ? pairedObs : { base: pairedObs.base_ms, head: pairedObs.head_ms, ...pairedObs });
    const pick = (fs: Array<Record<string, Figure>>): Array<number | null> => fs.map((f) => (typeof f[m.metric] === 'number' ? (f[m.metric] as number) : null));
    const b = pick(samples.base);
    const h = pick(samples.head);
    const bn = b.filter((v): v is number => v !== null);
    const hn = h.filter((v): v is number => v !== null);
    const bm = median(bn);
    const hm = median(hn);
    if (bm === null || hm === null || bm === 0 || bn.length !== o.rounds || hn.length !== o.rounds) {
      return { ...m, base: bn, head: hn, base_median: bm, head_median: hm, ratio: null, observed_noise: null, verdict: 'not measured' };
    }
    const ratio = hm / bm;
    const noise = Math.max(...b.map((bv, i) => Math.abs((h[i] as number) / (bv as number) - 1)));
    const regressed = m.better === 'higher' ? ratio < 1 - m.tolerance : ratio > 1 + m.tolerance;
    return { ...m, base: bn, head: hn, base_median: bm, head_median: hm, ratio: Math.round(ratio * 1000) / 1000, observed_noise: Math.round(noise * 1000) / 1000, verdict: regressed ? 'REGRESSED' : 'ok' };
  });
  return { ref: o.ref, base_commit: base.commit, rounds: o.rounds, rows, paired_worker_path: paired, paired_observe: pairedObs, paired_ingest: pairedIng, pass: rows.every((r) => r.verdict !== 'REGRESSED'), build_seconds: base.seconds };
}

/** the compare metrics the paired measurements answer, not the suite's rounds */
export const PAIRED_WORKER_PATH = 'paired.worker_path_us_per_record';
export const PAIRED_OBSERVE = 'paired.observe_ms';
export const PAIRED_INGEST = 'paired.ingest_cpu_us_per_event';

/** what a paired measurement gives a row: the medians per side and the per-pair ratios' median and quartiles */
export interface PairedFigures extends PairedRatios {
  base: number;
  head: number;
}

/**
 * Its row: the medians per side, the median of the per-round ratios (not the ratio of the medians:
 * each round's pair saw the same neighbours), and half the interquartile range of those ratios as
 * this run's noise. Exported for its test.
 */
export function pairedRow(m: CompareMetric, p: PairedFigures | string): CompareRow {
  if (typeof p === 'string') return { ...m, base: [], head: [], base_median: null, head_median: null, ratio: null, observed_noise: null, verdict: 'not measured' };
  const regressed = m.better === 'higher' ? p.ratio < 1 - m.tolerance : p.ratio > 1 + m.tolerance;
  return { ...m, base: [p.base], head: [p.head], base_median: p.base, head_median: p.head, ratio: p.ratio, observed_noise: Math.round(((p.ratio_p75 - p.ratio_p25) / 2) * 1000) / 1000, verdict: regressed ? 'REGRESSED' : 'ok' };
}

export function compareTable(r: CompareResult): string {
  const head = `| figure | better | base (median of ${r.rounds}) | head | head/base | tolerance | noise this run | verdict |\n|---|---|---|---|---|---|---|---|`;
  const fmt = (v: number | null): string => (v === null ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: 3 }));
  const body = r.rows.map((x) => `| ${x.metric} | ${x.better} | ${fmt(x.base_median)} | ${fmt(x.head_median)} | ${fmt(x.ratio)} | ±${Math.round(x.tolerance * 100)} % | ${x.observed_noise === null ? '—' : `${Math.round(x.observed_noise * 100)} %`} | ${x.verdict === 'REGRESSED' ? '**REGRESSED**' : x.verdict} |`);
  const p = r.paired_worker_path;
  const o = r.paired_observe;
  const g = r.paired_ingest;
  const note =
    (typeof p === 'string' ? '' : `\n\n${PAIRED_WORKER_PATH}: both builds' worker task in this process, ${p.rounds} alternated 120 ms CPU rounds on the same frames; head/base is the median of the per-round ratios (p25 ${p.ratio_p25}, p75 ${p.ratio_p75}), its noise half their spread.`) +
    (typeof g === 'string' || g === undefined ? '' : `\n\n${PAIRED_INGEST}: both daemons at once (--server, one ingest worker each), ${g.rounds} rounds of a 400 ms closed-loop burst of the mixed frames into each, the order swapped every round; CPU of every daemon thread per accepted event; head/base is the median of the per-round ratios (p25 ${g.ratio_p25}, p75 ${g.ratio_p75}).`) +
    (typeof o === 'string' || o === undefined ? '' : `\n\n${PAIRED_OBSERVE}: both builds in --standalone at once, each offered the heavy mix at 20 000 events/s, \`observe errors\` (limit 50, what came since the last call) in ${o.pairs} pairs, the order swapped every pair; head/base is the median of the per-pair ratios (p25 ${o.ratio_p25}, p75 ${o.ratio_p75}); slowest call ${o.base_max_ms} → ${o.head_max_ms} ms.`);
  return [head, ...body].join('\n') + note;
}
