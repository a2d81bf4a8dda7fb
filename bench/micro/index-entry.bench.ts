/**
 * What the read index pays per record it takes in (src/query/match-index.ts): the record's fields
 * for its fold key, severity, flags and built-in noise bits, from the record decoded against the
 * same fields read from its bytes (src/domain/wire/skim-record.ts), side by side in one run over
 * the bench's heavy mix as it is stored: console errors as msgpackr records with their signature
 * in front, and failing requests.
 * Run: `node dist/bench/micro/index-entry.bench.js` (after `pnpm build`); `pnpm bench` runs it too.
 */
import { pathToFileURL } from 'node:url';
import { Packr } from 'msgpackr';
import { Bench } from 'tinybench';
import { kindId } from '../../src/domain/kinds.js';
import { signatureHash } from '../../src/domain/signals/signature-hash.js';
import { topFrame } from '../../src/domain/signals/signature.js';
import { RecordSkim } from '../../src/domain/wire/skim-record.js';
import { readStoredRecord, SIG_BYTES, writeSig } from '../../src/domain/wire/stored-record.js';
import { foldKey, severity } from '../../src/query/fold-key.js';
import { isError, isFailing } from '../../src/query/filter.js';
import { BUILTIN_NOISE, compileNoise, noiseField } from '../../src/query/noise.js';
import type { Rec } from '../../src/query/scan.js';
import { logRecord, prng } from '../load/frames.js';

const RECORDS = 1000;
const LOGS = kindId('logs');
const NET = kindId('network');

/** what the ingest worker stores for an error: its signature (detect.ts) as an int32/uint32, then the producer's bytes */
function stored(rec: Record<string, unknown>, sig: number | undefined): Uint8Array {
  const body = new Packr({ useRecords: true }).pack(rec);
  if (sig === undefined) return body;
  const out = Buffer.alloc(SIG_BYTES + body.length);
  writeSig(out, 0, sig);
  out.set(body, SIG_BYTES);
  return out;
}

function corpus(): Array<{ kind: number; payload: Uint8Array }> {
  const r = prng(17);
  const out: Array<{ kind: number; payload: Uint8Array }> = [];
  for (let i = 0; i < RECORDS; i++) {
    if (i % 4 === 3) {
      const rec = { ts: 1_732_280_000_000 + i, method: r() < 0.7 ? 'GET' : 'POST', url: `https://api.example.test/v1/orders/${Math.floor(r() * 1e5)}`, status: r() < 0.5 ? 500 : 404, duration: 12.5, initiator_type: 'fetch', transfer_size: 900, page_url: 'https://app.example.test/dashboard' };
      out.push({ kind: NET, payload: stored(rec, undefined) });
      continue;
    }
    const rec = { ...logRecord(r, 1_732_280_000_000 + i), level: 'error' } as Record<string, unknown>;
    if (typeof rec.stack !== 'string') rec.stack = `Error: boom\n    at f (index.js:${i}:1)`;
    out.push({ kind: LOGS, payload: stored(rec, signatureHash(topFrame(rec.stack as string), signatureHash(String(rec.message)))) });
  }
  return out;
}

const TESTS = BUILTIN_NOISE.map(([field, pattern]) => ({ field, re: compileNoise(pattern) }));

/** the entry's derived fields, as the index computes them; summed so nothing is optimised away */
function derive(kind: number, rec: Rec): number {
  let bits = 0;
  for (let b = 0; b < TESTS.length; b++) {
    const v = noiseField(rec, TESTS[b]!.field);
    if (typeof v === 'string' && TESTS[b]!.re.test(v)) bits |= 1 << b;
  }
  return foldKey(kind, rec).length + severity(kind, rec) + (isError(rec) ? 1 : 0) + (isFailing(rec) ? 2 : 0) + bits;
}

export interface IndexEntryResult {
  name: string;
  usPerRecord: number;
}

export async function runIndexEntryBench(o: { quick?: boolean } = {}): Promise<Array<IndexEntryResult | { name: string; decoded_over_read: number }>> {
  const recs = corpus();
  const skim = new RecordSkim();
  let sink = 0;
  const decoded = () => {
    for (const { kind, payload } of recs) sink += derive(kind, readStoredRecord(payload) as Rec);
  };
  const read = () => {
    for (const { kind, payload } of recs) {
      if (!skim.read(payload)) throw new Error('a record of the corpus was not read from its bytes');
      sink += derive(kind, skim.rec as Rec);
    }
  };
  const bench = new Bench({ time: o.quick === false ? 1500 : 500 });
  bench.add('entry fields, record decoded', decoded).add('entry fields, read from its bytes', read);
  await bench.run();
  if (sink === 0) throw new Error('nothing derived');
  const us = bench.tasks.map((t) => {
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`bench task ${t.name} ended ${r.state}`);
    return { name: t.name, usPerRecord: Math.round((r.latency.mean * 1000 * 1000) / RECORDS) / 1000 };
  });
  return [...us, { name: 'ratio', decoded_over_read: Math.round((us[0]!.usPerRecord / us[1]!.usPerRecord) * 100) / 100 }];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stderr.write(`${JSON.stringify(await runIndexEntryBench(), null, 1)}\n`);
}
