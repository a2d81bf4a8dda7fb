/**
 * Micro benchmark of `POST /logs` in a worker: the load profile's own bodies (50 console entries
 * each, http-load.ts `logsBody`) through the ingest task function, and stage by stage (parse,
 * spans, validate, redact, normalize, detect, encode, commit), in CPU µs per entry.
 *
 * Why beside the load profile: there, `POST /logs` entries/s (and its ratio to the Go reference)
 * moved ±30 % within one run on this shared machine, so a 5 % change of the path could not be
 * seen. Here the reference is a bare `JSON.parse` of the same bodies in the same rounds, and the
 * ratio to it holds within a few per cent while the machine's speed moves.
 * Run: `node dist/bench/micro/http-body.bench.js`; `pnpm bench` runs it too.
 */
import { pathToFileURL } from 'node:url';
import { logsBody } from '../load/http-load.js';
import { noteJsonBody } from '../../src/domain/wire/json-spans.js';
import { HTTP_BODY, kindId } from '../../src/domain/kinds.js';
import type { HttpItem } from '../../src/pool/messages.js';
import { stagedRounds } from './cpu-round.js';
import { stageRig } from './stage-rig.js';
import { copyToArena, taskCycle } from './task-rig.js';

const ROUTE = '/logs';
const { bodyKey, kind } = HTTP_BODY[ROUTE];
const STAGES = ['parse', 'spans', 'validate', 'redact', 'normalize', 'detect', 'encode', 'commit'] as const;
type Stage = (typeof STAGES)[number];

export interface HttpBodyCost {
  name: string;
  /** entries per body */
  entries: number;
  /** CPU µs per stored entry by stage, median over rounds; parse is the body's UTF-8 decode and JSON.parse */
  stages: Record<Stage, number>;
  /** the stages' sum (timers around each stage) */
  sum: number;
  /** the worker's task function, a body per task, no timer inside */
  whole: number;
  /** the reference: a bare UTF-8 decode + JSON.parse of the same bodies, CPU µs per entry */
  bareParse: number;
  /** whole ÷ bareParse per round, then the median */
  wholeOverParse: number;
  /** redact ÷ sum, in % */
  redactPct: number;
  rounds: number;
}

/**
 * The ingest task function in this thread over a pool's shared buffers, one body per task; each
 * run resets the body's item slot, so every run stores the body again.
 */
export function httpTaskRig(bodies: readonly Uint8Array[]): { runNext(): number } {
  return taskCycle(
    bodies,
    (off, slot, b): HttpItem => ({ src: 'http', route: ROUTE, off, len: b.length, slot, shed: false }),
    (o) => {
      if (o?.kind !== 'stored' || o.rejected !== 0) throw new Error(`bench body was not stored whole: ${JSON.stringify(o)}`);
      return o.accepted;
    },
  );
}

/**
 * Stage by stage on the product's functions (what processHttpBody calls, in its order, with
 * detection and the commit into a real store), rounds of it alternating with rounds of the
 * untimed task function and of the bare parse.
 */
export function httpBodyCosts(bodies: readonly Uint8Array[], rounds = 16, msPerRound = 120): HttpBodyCost {
  const { views } = copyToArena(bodies);
  const rig = stageRig();
  const { spans } = rig;
  const id = kindId(kind);
  const acc = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  let b = 0;
  const text = (v: Uint8Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
  const timed = (): number => {
    let t = performance.now();
    const lap = (s: Stage): void => {
      const now = performance.now();
      acc[s] += now - t;
      t = now;
    };
    const body = views[b++ % views.length]!;
    const json = text(body);
    const arr = (JSON.parse(json) as Record<string, unknown[]>)[bodyKey]!;
    lap('parse');
    const out = rig.begin();
    noteJsonBody(json, body, bodyKey, id, spans);
    lap('spans');
    rig.kind(kind, arr, undefined, -1, out, lap);
    return rig.commit(out, lap);
  };
  const task = httpTaskRig(bodies);
  const whole = (): number => task.runNext();
  // what a server that only parses does with a body
  const bare = (): number => (JSON.parse(text(views[b++ % views.length]!)) as Record<string, unknown[]>)[bodyKey]!.length;
  const c = stagedRounds(STAGES, acc, { timed, whole, bare }, rounds, msPerRound);
  return {
    name: 'POST /logs body in a worker, µs per entry by stage',
    entries: (JSON.parse(text(views[0]!)) as Record<string, unknown[]>)[bodyKey]!.length,
    stages: c.stages,
    sum: c.sum,
    whole: c.whole,
    bareParse: c.bare,
    wholeOverParse: Math.round(c.ratio * 100) / 100,
    redactPct: Math.round((c.stages.redact / c.sum) * 1000) / 10,
    rounds,
  };
}

/** The load profile's bodies (http-load.ts), several seeds so no single body's shape decides. */
export function logsBodies(n = 8): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => Buffer.from(logsBody(7 + i)));
}

export async function runHttpBodyBench(o: { quick?: boolean } = {}): Promise<HttpBodyCost[]> {
  return [httpBodyCosts(logsBodies(), o.quick ? 4 : 16, o.quick ? 60 : 120)];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await runHttpBodyBench(), null, 2));
}
