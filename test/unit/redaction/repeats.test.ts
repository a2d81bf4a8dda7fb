/**
 * The batch pre-filter looks at a field that repeats the previous record's (the page URL) once,
 * on its own, and remembers the repeated strings it found clean from batch to batch (issue 17).
 * What must hold: a record it lets through is one the rules leave unchanged, whatever repeats,
 * whatever the engine remembers; and a repeat does not mark records for what a neighbour holds.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../fixtures/shm-gen.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import type { RedactionEngine } from '../../../src/domain/redaction/engine.js';
import type { Kind } from '../../../src/domain/kinds.js';
import { loadCorpus } from '../../helpers/redaction-carry.js';

/** the field of each kind that repeats, as the engine reads it */
const PAGE: Array<[Kind, string]> = [
  ['logs', 'url'],
  ['ext_logs', 'url'],
  ['network', 'page_url'],
  ['ws_events', 'url'],
  ['actions', 'url'],
  ['perf', 'url'],
];
const AWS = 'AKIAABCDEFGHIJKLMNOP';
const CLEAN = 'https://app.example.test/dashboard';

function record(kind: Kind, field: string, value: string, message = 'plain words'): Record<string, unknown> {
  const rec: Record<string, unknown> = { ts: 1, [field]: value };
  if (kind === 'logs' || kind === 'ext_logs') rec.message = message;
  return rec;
}

/** records the pre-filter lets through come out of the rules unchanged; returns how many the rules changed */
function checkSkips(engine: RedactionEngine, kind: Kind, recs: Array<Record<string, unknown>>, hit: Uint8Array): number {
  let changed = 0;
  recs.forEach((rec, i) => {
    const before = JSON.stringify(rec);
    const after = JSON.stringify(engine.redactRecord(kind, structuredClone(rec)));
    if (after !== before) {
      changed++;
      expect(hit[i], `${kind} record ${i} of ${recs.length}: ${before}`).toBe(1);
    }
  });
  return changed;
}

describe('repeated fields in a batch', () => {
  it('marks every record that repeats a field holding a secret, and none that repeats a clean one', () => {
    for (const [kind, field] of PAGE) {
      const engine = compileRedaction();
      const secret = `https://app.example.test/?id=${AWS}`;
      const recs = [CLEAN, CLEAN, CLEAN, secret, secret, secret, CLEAN, CLEAN].map((v) => record(kind, field, v));
      expect([...engine.triggered(kind, recs)], kind).toEqual([0, 0, 0, 1, 1, 1, 0, 0]);
      // the same batch again: the clean page URL is now remembered, the secret one never is
      expect([...engine.triggered(kind, recs)], kind).toEqual([0, 0, 0, 1, 1, 1, 0, 0]);
    }
  });

  it('tells apart repeats that differ by one character, at the end, in the middle or in a non-ASCII character', () => {
    const engine = compileRedaction();
    const cases: Array<[string, string]> = [
      // one character short of an AWS key id at the very end of the string, then the whole id
      [`https://app.example.test/${AWS.slice(0, -1)}`, `https://app.example.test/${AWS}`],
      // the id at the very start
      [`${AWS.slice(0, -1)}é`, `${AWS}é`],
      // a pair one character off
      ['https://app.example.test/?token~abcdefghijklmnopqrstuvwx12', 'https://app.example.test/?token=abcdefghijklmnopqrstuvwx12'],
      // a non-ASCII neighbour of a secret, and a short pair
      ['https://ü.example.test/?pwd~1234', 'https://ü.example.test/?pwd=1234'],
      // base64 of "password=hunter22" at the end, and the same run with its first character changed
      [`https://app.example.test/#${Buffer.from('xassword=hunter22').toString('base64')}`, `https://app.example.test/#${Buffer.from('password=hunter22').toString('base64')}`],
    ];
    for (const [clean, secret] of cases) {
      for (const [kind, field] of PAGE) {
        // first batch: the clean one repeated (and so remembered), then the secret one repeated
        const first = [clean, clean, clean].map((v) => record(kind, field, v));
        expect([...engine.triggered(kind, first)], `${kind} ${clean}`).toEqual([0, 0, 0]);
        const second = [clean, clean, secret, secret, clean, secret].map((v) => record(kind, field, v));
        const hit = engine.triggered(kind, second);
        expect([...hit], `${kind} ${secret}`).toEqual([0, 0, 1, 1, 0, 1]);
        expect(checkSkips(engine, kind, second, hit), `${kind} ${secret}`).toBe(3);
      }
    }
  });

  it('reads a batch that holds one value throughout once, and tells a same-length difference anywhere in it', () => {
    const secret = `https://app.example.test/?id=${AWS}`;
    for (const [kind, field] of PAGE) {
      const engine = compileRedaction();
      // one value in all 40 records (the batch-wide comparison), clean then secret
      expect([...engine.triggered(kind, Array.from({ length: 40 }, () => record(kind, field, CLEAN)))], kind).toEqual(Array(40).fill(0));
      const all = Array.from({ length: 40 }, () => record(kind, field, secret));
      expect([...engine.triggered(kind, all)], kind).toEqual(Array(40).fill(1));
      expect(checkSkips(engine, kind, all, engine.triggered(kind, all))).toBe(40);
      // the same length, one character different, at the start, the middle or the end of one record's value
      const twin = `https://app.example.test/?id=${AWS.slice(0, 10)}X${AWS.slice(11)}`;
      for (const at of [0, 17, 39]) {
        const recs = Array.from({ length: 40 }, (_, i) => record(kind, field, i === at ? secret : CLEAN.padEnd(secret.length, '/')));
        const hit = engine.triggered(kind, recs);
        expect(hit[at], `${kind} secret at ${at}`).toBe(1);
        expect(hit.reduce((a, b) => a + b, 0), `${kind} secret at ${at}`).toBe(1);
        const twins = Array.from({ length: 40 }, (_, i) => record(kind, field, i === at ? secret : twin));
        expect([...engine.triggered(kind, twins)], `${kind} twin at ${at}`).toEqual(Array(40).fill(1));
      }
    }
  });

  it('does not mark a record for what another field of the first record that held the repeat holds', () => {
    const engine = compileRedaction();
    const recs = [record('logs', 'url', CLEAN, `token: ${'x'.repeat(30)}`), record('logs', 'url', CLEAN), record('logs', 'url', CLEAN)];
    expect([...engine.triggered('logs', recs)]).toEqual([1, 0, 0]);
  });

  it('lets through only records the rules leave unchanged, on seeded batches of repeats drawn from the corpus', () => {
    const rnd = mulberry32(1717);
    const corpus = loadCorpus().map((l) => l.text);
    const pool = [CLEAN, `${CLEAN}/`, 'https://app.example.test/dashboard?tab=2', `https://app.example.test/${AWS}`, `wss://u:${'p'.repeat(8)}@rt.example.test/`, ...corpus];
    // one engine throughout, so that its memory of clean strings fills, turns over and is used
    const engine = compileRedaction();
    let changed = 0;
    let skipped = 0;
    for (let round = 0; round < 400; round++) {
      const [kind, field] = PAGE[Math.floor(rnd() * PAGE.length)]!;
      const n = 1 + Math.floor(rnd() * 24);
      const recs: Array<Record<string, unknown>> = [];
      let v = pool[Math.floor(rnd() * pool.length)]!;
      for (let i = 0; i < n; i++) {
        // runs of repeats, broken now and then by another value (a corpus line, a page URL)
        if (rnd() < 0.3) v = pool[Math.floor(rnd() * pool.length)]!;
        const message = rnd() < 0.2 ? corpus[Math.floor(rnd() * corpus.length)]! : 'plain words';
        recs.push(record(kind, field, v, message));
      }
      const hit = engine.triggered(kind, recs);
      changed += checkSkips(engine, kind, recs, hit);
      skipped += hit.filter((h) => h === 0).length;
    }
    // the batches hold secrets the rules change and clean records the filter lets through
    expect(changed).toBeGreaterThan(500);
    expect(skipped).toBeGreaterThan(500);
  });
});
