/**
 * Redaction throughput on a realistic mixed payload (the load generator's records, a few with
 * secrets): MB/s per core through redactRecord, and the same records through the header strip.
 * Run: `node dist/bench/micro/redaction.bench.js`; `pnpm bench` runs it too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { buildFramePool } from '../load/frames.js';
import { decodeFrame } from '../../src/domain/wire/decode.js';
import { compileRedaction } from '../../src/domain/redaction/index.js';
import { headerStripRedactor } from '../../src/domain/ingest/redactor.js';
import type { Kind } from '../../src/domain/kinds.js';
import type { MicroResult } from './ring.bench.js';

/** records of one kind, 100 at a time: what one batch frame holds */
function byKind(recs: Array<[Kind, Record<string, unknown>]>): Array<[Kind, Array<Record<string, unknown>>]> {
  const out: Array<[Kind, Array<Record<string, unknown>>]> = [];
  for (let i = 0; i < recs.length; i += 100) {
    const groups = new Map<Kind, Array<Record<string, unknown>>>();
    for (const [k, r] of recs.slice(i, i + 100)) {
      let g = groups.get(k);
      if (!g) groups.set(k, (g = []));
      g.push(r);
    }
    out.push(...groups);
  }
  return out;
}

export async function runRedactionBench(): Promise<Array<MicroResult & { mbPerSec?: number }>> {
  const frames = buildFramePool(7, 16).frames;
  const recs: Array<[Kind, Record<string, unknown>]> = [];
  for (const f of frames) {
    const d = decodeFrame(f, { maxDepth: 32, maxElements: 1_000_000 });
    if (!d.ok || d.frame.t !== 'batch') continue;
    for (const k of ['logs', 'network', 'ws_events', 'actions'] as const) for (const r of d.frame[k] ?? []) recs.push([k, r as Record<string, unknown>]);
  }
  // one record in fifty carries a secret, in the places they really show up
  recs.forEach(([, r], i) => {
    if (i % 50 === 0 && typeof r.message === 'string') r.message += ' Authorization: Bearer tK9f2LmQ8xZ4vB7nR1wE0000';
    if (i % 50 === 25 && typeof r.url === 'string') r.url += '?access_token=9f8e7d6c5b4a39281716aa';
  });
  const bytes = recs.reduce((n, [, r]) => n + JSON.stringify(r).length, 0);
  const engine = compileRedaction();
  // from dist/bench/micro or from bench/micro
  const corpusPath = ['../../../test/fixtures/redaction-corpus.jsonl', '../../test/fixtures/redaction-corpus.jsonl'].map((p) => fileURLToPath(new URL(p, import.meta.url))).find((p) => existsSync(p));
  if (!corpusPath) throw new Error('test/fixtures/redaction-corpus.jsonl not found');
  const corpusTexts = readFileSync(corpusPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text);
  const corpusBytes = corpusTexts.reduce((n, t) => n + t.length, 0);
  const copies = (): Array<[Kind, Record<string, unknown>]> => recs.map(([k, r]) => [k, structuredClone(r)]);
  let work = copies();
  const bench = new Bench({ time: 500 });
  bench
    // the ingest path: per batch and kind, the pre-filter over all records, the rules where it fires
    .add(`redaction engine, ${recs.length} records`, () => {
      for (const [k, group] of byKind(work)) {
        const hit = engine.triggered(k, group);
        for (let i = 0; i < group.length; i++) if (hit[i] === 1) engine.redactRecord(k, group[i]!);
      }
    }, { beforeEach: () => void (work = copies()) })
    .add(`header strip only, ${recs.length} records`, () => {
      for (const [k, r] of work) headerStripRedactor.redactRecord(k, r);
    }, { beforeEach: () => void (work = copies()) })
    // worst case for the engine: every string holds a secret or a look-alike (the redaction corpus)
    .add(`redactText, secret-dense corpus (${corpusTexts.length} strings)`, () => {
      for (const t of corpusTexts) engine.redactText(t);
    });
  await bench.run();
  const sizes = [bytes, bytes, corpusBytes];
  return bench.tasks.map((t, i) => {
    const bytes = sizes[i] ?? 0;
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`bench task ${t.name} ended ${r.state}`);
    const meanUs = r.latency.mean * 1000;
    return { name: t.name, opsPerSec: Math.round(r.throughput.mean), meanUs: Math.round(meanUs * 100) / 100, p99Us: Math.round(r.latency.p99 * 100_000) / 100, mbPerSec: Math.round((bytes / meanUs) * 10) / 10 };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await runRedactionBench());
}
