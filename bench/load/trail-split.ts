/**
 * Where a profile's observe calls spent their time: the daemon's own part of each call (its client
 * trail's `ms`, arguments parsed → result built, src/clients/trail.ts) against the rest, which is
 * the way there and back (the bench → bridge → daemon's HTTP and MCP layers, and back). A slow call
 * whose own part was fast waited in the hops, not in the read (PERFORMANCE.md, observe's passes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newHistogram, percentiles, type Percentiles } from './histogram.js';

export interface CallSplit {
  /** the daemon's part of each call */
  server: Percentiles;
  /** end to end less the daemon's part */
  hops: Percentiles;
  /** the slowest call end to end, and its two parts */
  slowest: { total_ms: number; server_ms: number; hops_ms: number };
}

/**
 * The `ms` of the last `n` calls of `tool` in the trails under `<stateDir>/clients`, oldest first;
 * null when the trails hold fewer (a trail that rotated or dropped lines cannot be paired).
 */
export function trailedCalls(stateDir: string, tool: string, n: number): number[] | null {
  const dir = join(stateDir, 'clients');
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return null;
  }
  // one client per profile: with several, their calls cannot be told apart by order
  if (files.length !== 1) return null;
  const ms: number[] = [];
  for (const line of readFileSync(join(dir, files[0]!), 'utf8').split('\n')) {
    if (!line) continue;
    try {
      const e = JSON.parse(line) as { tool?: unknown; ms?: unknown };
      if (e.tool === tool && typeof e.ms === 'number') ms.push(e.ms);
    } catch {
      // a line cut by a crash is not a call
    }
  }
  return ms.length >= n ? ms.slice(ms.length - n) : null;
}

/** what the daemon's part may exceed its call's total by (the trail rounds to 0.01 ms) before the pairing is called wrong */
const SLACK_MS = 0.5;

/**
 * Pairs each call's end-to-end time with the daemon's part of it, in the order they were made; null
 * when they do not pair: a daemon's part longer than its whole call means a line was lost or extra.
 */
export function splitCalls(totalMs: readonly number[], serverMs: readonly number[]): CallSplit | null {
  if (!totalMs.length || totalMs.length !== serverMs.length) return null;
  if (serverMs.some((s, i) => s > totalMs[i]! + SLACK_MS)) return null;
  const server = newHistogram();
  const hops = newHistogram();
  let worst = 0;
  for (let i = 0; i < totalMs.length; i++) {
    server.recordValue(Math.round(serverMs[i]! * 1000));
    // two processes' timings of one call, the trail's rounded to 0.01 ms: never below zero
    hops.recordValue(Math.round(Math.max(0, totalMs[i]! - serverMs[i]!) * 1000));
    if (totalMs[i]! > totalMs[worst]!) worst = i;
  }
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    server: percentiles(server),
    hops: percentiles(hops),
    slowest: { total_ms: r2(totalMs[worst]!), server_ms: r2(serverMs[worst]!), hops_ms: r2(Math.max(0, totalMs[worst]! - serverMs[worst]!)) },
  };
}
