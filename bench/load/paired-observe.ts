/**
 * observe of two builds side by side, for `--compare` (issue 17's "shows the observe gains beyond
 * the noise"). In the compare's rounds the two builds' `heavy` profiles run one after the other, and
 * a profile's observe p99 is the slowest of ~14 calls: it swung 2× between identical builds. Here
 * both builds run at once in `--standalone` under the same offered load (the heavy mix at 20 000
 * events/s each) and answer heavy's read (`observe errors`, limit 50, what came since the last
 * call) in pairs, the order swapped every pair. The figure is the median of the per-pair ratios:
 * each pair saw the same neighbours. It speaks only the MCP and wire protocols, so any base with
 * `observe` and `--standalone` can be measured.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RpcReply } from './mcp-client.js';
import { toolText, type McpProc } from './mcp-client.js';
import { producers, startServer } from './profiles.js';
import { freePort } from './server-proc.js';
import { pairedStats, r3, type PairedRatios } from '../paired-stats.js';

/** `ratio`: head ÷ base per pair, then the median: below 1 is faster */
export interface PairedObserveResult extends PairedRatios {
  /** wall ms a call, median per side */
  base_ms: number;
  head_ms: number;
  pairs: number;
  /** the slowest call per side: a tail the median hides */
  base_max_ms: number;
  head_max_ms: number;
  /** characters of the last answer per side (both answer the same question over the same records) */
  base_answer_chars: number;
  head_answer_chars: number;
  /** events each build accepted during the pairs (the same offered load) */
  accepted_events: number;
  head_accepted_events: number;
}

export interface PairedObserveOptions {
  pairs?: number;
  /** wall ms from one pair's start to the next */
  pairEveryMs?: number;
  /** untimed calls per side while its seed comes in */
  warmCalls?: number;
  /** events/s offered to each build, heavy mix */
  rate?: number;
}

const READ = { what: 'errors', limit: 50 } as const;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** The summary of paired samples (`base[i]` and `head[i]` taken together); exported for its test. */
export function pairedSummary(base: readonly number[], head: readonly number[]): Pick<PairedObserveResult, 'base_ms' | 'head_ms' | 'ratio' | 'ratio_p25' | 'ratio_p75' | 'pairs' | 'base_max_ms' | 'head_max_ms'> {
  const { base: base_ms, head: head_ms, ...ratios } = pairedStats(base, head);
  return { base_ms, head_ms, ...ratios, pairs: base.length, base_max_ms: r3(Math.max(...base)), head_max_ms: r3(Math.max(...head)) };
}

function answered(side: string, r: RpcReply): string {
  const t = toolText(r);
  if (t.isError) throw new Error(`${side}: observe answered an error: ${t.text.slice(0, 300)}`);
  return t.text;
}

/** The observe read of the builds in `baseRoot` and `headRoot`, paired; or why it was not measured. */
export async function pairedObserve(baseRoot: string, headRoot: string, o: PairedObserveOptions = {}): Promise<PairedObserveResult | string> {
  const sides: Array<{ name: 'base' | 'head'; proc: McpProc; port: number }> = [];
  const rate = o.rate ?? 20_000;
  const pairs = o.pairs ?? 80;
  const every = o.pairEveryMs ?? 400;
  try {
    const roots = [['base', baseRoot], ['head', headRoot]] as const;
    for (const [name, root] of roots) if (!existsSync(join(root, 'dist'))) return `${name}: ${join(root, 'dist')} is missing (not built)`;
    for (const [name, root] of roots) {
      const port = await freePort();
      try {
        sides.push({ name, proc: await startServer(root, port, undefined, 'standalone'), port });
      } catch (e) {
        return `${name}: did not start in --standalone (${(e as Error).message.split('\n')[0]})`;
      }
    }
    const [base, head] = [sides[0]!.proc, sides[1]!.proc];
    // a seed of the same records, one build after the other, read as it comes: the first full
    // fold compiles the read path, which a daemon pays once
    for (const s of sides) {
      const seeding = producers(s.port, { rate, mix: 'heavy', connections: 4, totalEvents: rate }, 2000, 11, 5000);
      seeding.catch(() => undefined); // thrown by the await below, not unhandled while the calls run
      for (let i = 0; i < (o.warmCalls ?? 8); i++) {
        await sleep(150);
        answered(s.name, await s.proc.callTool('observe', READ));
      }
      await seeding;
    }
    // then the same load on both at once, and a read of what came since the last one, in pairs.
    // Exactly the same number of events to each, scheduled to end 500 ms before the load's time
    // is up: bounded by time alone, a producer slowed by a busy machine sent a few batches fewer
    // to one side than to the other (8 400 against 8 800 in a full test run).
    const loadMs = pairs * every + 1000;
    const loads = sides.map((s, i) => producers(s.port, { rate, mix: 'heavy', connections: 4, totalEvents: Math.round((rate * (loadMs - 500)) / 1000) }, loadMs, 21 + i, 5000));
    const failed = Promise.all(loads).then(
      () => 'ended' as const,
      () => 'ended' as const, // the reason is thrown by the await below
    );
    const b: number[] = [];
    const h: number[] = [];
    let bChars = 0;
    let hChars = 0;
    await sleep(500);
    const t0 = performance.now();
    for (let i = 0; i < pairs; i++) {
      const wait = t0 + i * every - performance.now();
      if (wait > 0) await sleep(wait);
      for (const side of i % 2 === 0 ? ([base, head] as const) : ([head, base] as const)) {
        const r = await side.callTool('observe', READ);
        const text = answered(side === base ? 'base' : 'head', r);
        if (side === base) {
          b.push(r.us / 1000);
          bChars = text.length;
        } else {
          h.push(r.us / 1000);
          hChars = text.length;
        }
      }
    }
    const ended = await Promise.race([failed, sleep(0).then(() => 'running' as const)]);
    const runs = await Promise.all(loads);
    const accepted = runs.map((r) => r.acceptedReported);
    if (ended === 'ended') return `the load ended before the last pair (accepted ${accepted.join(' / ')})`;
    return { ...pairedSummary(b, h), base_answer_chars: bChars, head_answer_chars: hChars, accepted_events: accepted[0]!, head_accepted_events: accepted[1]! } as PairedObserveResult;
  } finally {
    await Promise.all(sides.map((s) => s.proc.stop()));
  }
}
