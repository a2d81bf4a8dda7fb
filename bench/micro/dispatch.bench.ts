/**
 * How frames get from the uWS thread to the workers (issue 2, ARCHITECTURE §7). Same worker
 * count for all three, same one copy per frame on the main thread, trivial per-frame work:
 *
 *   a  one piscina task per frame, the copied frame in the transfer list
 *   b  micro-batched piscina tasks: 64 frames per task named by (offset, len) in a shared
 *      SharedArrayBuffer arena, concurrentTasksPerWorker 2 — what the product does
 *   c  a raw SAB input ring per worker drained by one long-lived task (Atomics.wait in the
 *      worker, Atomics.notify from main)
 *
 * One tinybench sample = push 1024 frames of 16 KB and wait until all are processed; the three
 * modes are interleaved in rounds and each round reports frames/s from the sample median, so the
 * ratios come from side-by-side measurements.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { Bench } from 'tinybench';
import { checksum, HEAD, HEADER_BYTES, ringBytes, STOP, SUM, TAIL, type DispatchTask } from './dispatch-worker.js';

export interface DispatchOptions {
  quick?: boolean;
  workers?: number;
  rounds?: number;
  timeMs?: number;
}

export interface DispatchModeResult {
  mode: 'a_task_per_frame' | 'b_microbatch_arena' | 'c_sab_ring';
  description: string;
  frames_per_s: number;
  /** per 1024-frame sample, ms */
  sample_p50_ms: number;
  sample_p99_ms: number;
  rounds_frames_per_s: number[];
  samples: number;
}

export interface DispatchResult {
  workers: number;
  frame_bytes: number;
  frames_per_sample: number;
  items_per_task: number;
  modes: DispatchModeResult[];
  ratios: { b_over_a: number; c_over_a: number; c_over_b: number };
}

const FRAME_BYTES = 16 * 1024;
const FRAMES = 1024;
const ITEMS_PER_TASK = 64;
const RING_SLOTS = 256;

/** Atomics.waitAsync (Node ≥ 16) is not in the ES2023 lib this project compiles against. */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, i: number, v: number, t: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;

const workerFile = new URL('./dispatch-worker.js', import.meta.url).href;

function makeFrames(): Uint8Array[] {
  const out: Uint8Array[] = [];
  let x = 12345;
  for (let f = 0; f < 16; f++) {
    const b = new Uint8Array(FRAME_BYTES);
    for (let i = 0; i < b.length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) | 0;
      b[i] = x >>> 24;
    }
    out.push(b);
  }
  return out;
}

export async function runDispatchBench(o: DispatchOptions = {}): Promise<DispatchResult> {
  const workers = o.workers ?? Math.max(1, availableParallelism() - 1);
  const rounds = o.rounds ?? (o.quick ? 1 : 3);
  const timeMs = o.timeMs ?? (o.quick ? 400 : 1500);
  const frames = makeFrames();
  const frameAt = (i: number): Uint8Array => frames[i % frames.length]!;
  let expected = 0;
  for (let i = 0; i < FRAMES; i++) expected = (expected + checksum(new Int32Array(frameAt(i).buffer))) | 0;
  const check = (got: number, mode: string): void => {
    if (got !== expected) throw new Error(`dispatch ${mode}: checksum ${got} != ${expected}; frames were lost or corrupted`);
  };

  // a: one task per frame
  const poolA = new Piscina<DispatchTask, number>({ filename: workerFile, minThreads: workers, maxThreads: workers, concurrentTasksPerWorker: 2, idleTimeout: Number.MAX_SAFE_INTEGER });
  const runA = async (): Promise<void> => {
    const ps: Promise<number>[] = new Array(FRAMES);
    for (let i = 0; i < FRAMES; i++) {
      const buf = new ArrayBuffer(FRAME_BYTES);
      new Uint8Array(buf).set(frameAt(i));
      ps[i] = poolA.run({ kind: 'frame', buf }, { transferList: [buf] });
    }
    const sums = await Promise.all(ps);
    check(sums.reduce((h, s) => (h + s) | 0, 0), 'a');
  };

  // b: micro-batches over a shared arena
  const arena = new SharedArrayBuffer(FRAMES * FRAME_BYTES);
  const arenaBytes = new Uint8Array(arena);
  const poolB = new Piscina<DispatchTask, number>({ filename: workerFile, minThreads: workers, maxThreads: workers, concurrentTasksPerWorker: 2, idleTimeout: Number.MAX_SAFE_INTEGER, workerData: { arena } });
  const runB = async (): Promise<void> => {
    const ps: Promise<number>[] = [];
    for (let t = 0; t < FRAMES; t += ITEMS_PER_TASK) {
      const offs = new Int32Array(ITEMS_PER_TASK * 2);
      for (let j = 0; j < ITEMS_PER_TASK; j++) {
        const off = (t + j) * FRAME_BYTES;
        arenaBytes.set(frameAt(t + j), off);
        offs[j * 2] = off;
        offs[j * 2 + 1] = FRAME_BYTES;
      }
      ps.push(poolB.run({ kind: 'items', offs }));
    }
    const sums = await Promise.all(ps);
    check(sums.reduce((h, s) => (h + s) | 0, 0), 'b');
  };

  // c: a SAB input ring per worker, drained by one long-lived task each
  const poolC = new Piscina<DispatchTask, number>({ filename: workerFile, minThreads: workers, maxThreads: workers, concurrentTasksPerWorker: 1, idleTimeout: Number.MAX_SAFE_INTEGER });
  const rings = Array.from({ length: workers }, () => {
    const sab = new SharedArrayBuffer(ringBytes(RING_SLOTS, FRAME_BYTES));
    return { sab, hdr: new Int32Array(sab, 0, HEADER_BYTES / 4), lens: new Int32Array(sab, HEADER_BYTES, RING_SLOTS), bytes: new Uint8Array(sab, HEADER_BYTES + RING_SLOTS * 4) };
  });
  const drains = rings.map((r) => poolC.run({ kind: 'drain', ring: r.sab, slots: RING_SLOTS, slotBytes: FRAME_BYTES }));
  const runC = async (): Promise<void> => {
    for (const r of rings) Atomics.store(r.hdr, SUM, 0);
    for (let i = 0; i < FRAMES; i++) {
      const r = rings[i % workers]!;
      let tail = Atomics.load(r.hdr, TAIL);
      let head = Atomics.load(r.hdr, HEAD);
      while (tail - head >= RING_SLOTS) {
        // full: main never blocks, it awaits the worker's notify (bounded)
        const w = waitAsync(r.hdr, HEAD, head, 100);
        if (w.async) await w.value;
        head = Atomics.load(r.hdr, HEAD);
      }
      const s = tail % RING_SLOTS;
      r.bytes.set(frameAt(i), s * FRAME_BYTES);
      r.lens[s] = FRAME_BYTES;
      Atomics.store(r.hdr, TAIL, ++tail);
      Atomics.notify(r.hdr, TAIL);
    }
    for (const r of rings) {
      const tail = Atomics.load(r.hdr, TAIL);
      for (let head = Atomics.load(r.hdr, HEAD); head !== tail; head = Atomics.load(r.hdr, HEAD)) {
        const w = waitAsync(r.hdr, HEAD, head, 100);
        if (w.async) await w.value;
      }
    }
    check(rings.reduce((h, r) => (h + Atomics.load(r.hdr, SUM)) | 0, 0), 'c');
  };

  const modes = [
    { mode: 'a_task_per_frame' as const, description: 'piscina task per frame, transferList', fn: runA },
    { mode: 'b_microbatch_arena' as const, description: `piscina, ${ITEMS_PER_TASK} frames/task via SAB arena, ctpw 2`, fn: runB },
    { mode: 'c_sab_ring' as const, description: 'SAB input ring + long-lived worker loop', fn: runC },
  ];
  const perRound = new Map<string, number[]>();
  const samples = new Map<string, number[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      const bench = new Bench({ name: `dispatch round ${round + 1}`, time: timeMs, warmupTime: 200, retainSamples: true });
      for (const m of modes) bench.add(m.mode, m.fn);
      await bench.run();
      for (const t of bench.tasks) {
        const r = t.result;
        if (r.state !== 'completed') throw new Error(`dispatch ${t.name}: ${r.state}${r.state === 'errored' ? `: ${String(r.error)}` : ''}`);
        const fps = FRAMES / (r.latency.p50 / 1000);
        perRound.set(t.name, [...(perRound.get(t.name) ?? []), fps]);
        samples.set(t.name, [...(samples.get(t.name) ?? []), ...(r.latency.samples ?? [])]);
      }
    }
  } finally {
    for (const r of rings) {
      Atomics.store(r.hdr, STOP, 1);
      Atomics.notify(r.hdr, TAIL);
    }
    await Promise.allSettled(drains);
    await Promise.all([poolA.destroy(), poolB.destroy(), poolC.destroy()]);
  }
  const median = (a: number[]): number => {
    const s = [...a].sort((x, y) => x - y);
    return s[Math.floor((s.length - 1) / 2)] ?? 0;
  };
  const pct = (a: number[], p: number): number => {
    const s = [...a].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
  };
  const results: DispatchModeResult[] = modes.map((m) => {
    const fps = perRound.get(m.mode) ?? [];
    const lat = samples.get(m.mode) ?? [];
    return {
      mode: m.mode,
      description: m.description,
      frames_per_s: Math.round(median(fps)),
      sample_p50_ms: Math.round(pct(lat, 50) * 1000) / 1000,
      sample_p99_ms: Math.round(pct(lat, 99) * 1000) / 1000,
      rounds_frames_per_s: fps.map(Math.round),
      samples: lat.length,
    };
  });
  const by = (m: DispatchModeResult['mode']): number => results.find((r) => r.mode === m)?.frames_per_s ?? NaN;
  const ratio = (x: number, y: number): number => Math.round((x / y) * 100) / 100;
  return {
    workers,
    frame_bytes: FRAME_BYTES,
    frames_per_sample: FRAMES,
    items_per_task: ITEMS_PER_TASK,
    modes: results,
    ratios: {
      b_over_a: ratio(by('b_microbatch_arena'), by('a_task_per_frame')),
      c_over_a: ratio(by('c_sab_ring'), by('a_task_per_frame')),
      c_over_b: ratio(by('c_sab_ring'), by('b_microbatch_arena')),
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  console.log(JSON.stringify(await runDispatchBench({ quick }), null, 2));
}
