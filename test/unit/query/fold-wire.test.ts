/**
 * The scan worker's answers travel packed (src/query/fold-wire.ts): main must rebuild exactly what
 * a structured clone of the answer gave it before — on real folds of seeded data (indexed and
 * scanned, with and without `examples`, several kinds) and on the edges a typed column could bend
 * (-0, NaN, infinities, an undefined record, no groups at all).
 */
import { describe, expect, it } from 'vitest';
import { kindId } from '../../../src/domain/kinds.js';
import { UNREAD } from '../../../src/query/indexed-scan.js';
import { packFold, ReadIndexes, runFoldQuery, unpackFold, type FoldAnswer, type FoldQuery } from '../../../src/query/index.js';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';
import { mulberry32 } from '../../fixtures/shm-gen.js';

const LOGS = kindId('logs');
const NET = kindId('network');

/** what main received before: a structured clone of the whole answer */
const oldWire = (a: FoldAnswer): FoldAnswer => structuredClone(a);
/** what main receives now: the packed answer, its buffer transferred, rebuilt */
const newWire = (a: FoldAnswer): FoldAnswer => {
  const { packed, transfer } = packFold(a);
  return unpackFold(structuredClone(packed, { transfer }));
};

/** a reader, and what writes the seeded records into it */
function seeded(seed: number): { reader: StoreReader; write(): void } {
  const r = mulberry32(seed);
  const buffers = allocateStore([256 * 1024, 256 * 1024, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  const write = (): void => {
  for (let b = 0; b < 20; b++) {
    const records = Array.from({ length: 50 }, (_, i) => {
      const kind = r() < 0.7 ? LOGS : NET;
      const n = Math.floor(r() * 40);
      const rec =
        kind === LOGS
          ? { level: r() < 0.6 ? 'error' : 'warn', type: 'console', message: `TypeError: thing${n} failed ${'x'.repeat(n)}`, stack: r() < 0.5 ? `at f (http://app.test/${n}.js:1:2)` : undefined }
          : { method: 'GET', url: `http://api.test/${n}`, status: r() < 0.5 ? 500 : 200 };
      return { kind, clientTime: b * 50 + i + r(), tab: Math.floor(r() * 3) - 1, payload: Buffer.from(JSON.stringify(rec)) };
    });
    writer.commit({ recvTime: 1000 + b, records, received: [records.length], rejected: [] });
  }
  };
  return { reader: new StoreReader(buffers), write };
}

describe('fold wire', () => {
  it('rebuilds what a structured clone gave, for real folds: indexed or scanned, examples or not, one kind or two', async () => {
    let groups = 0;
    for (const seed of [1, 2, 3, 4, 5]) {
      const { reader, write } = seeded(seed);
      const indexes = new ReadIndexes(reader, { background: false });
      // the indexes are made before the records come, so they hold them all
      for (const [kind, what] of [[LOGS, 'errors'], [NET, 'failing']] as const) await runFoldQuery(reader, { kinds: [kind], start: [0], maxScan: 10, filter: { what }, fold: true }, indexes);
      write();
      indexes.tick();
      let unread = 0;
      const queries: FoldQuery[] = [
        { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true, examples: 5 },
        { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true },
        { kinds: [LOGS, NET], start: [0, 0], maxScan: 20_000, filter: { what: 'timeline' }, fold: false },
        { kinds: [NET], start: [0], maxScan: 20_000, filter: { what: 'failing' }, fold: true, examples: 0 },
      ];
      for (const index of [undefined, indexes]) {
        for (const q of queries) {
          const a = await runFoldQuery(reader, structuredClone(q), index);
          expect(newWire(a), `seed ${seed} ${JSON.stringify(q)}`).toEqual(oldWire(a));
          groups += a.groups.length;
          unread += a.groups.filter((g) => g.example.rec === UNREAD).length;
        }
      }
      // the index answered from its columns: examples past the first 5 (or 0) were never read
      expect(unread).toBeGreaterThan(0);
    }
    expect(groups).toBeGreaterThan(500);
  });

  it('an example the answer cannot show arrives as an empty record of its own, as a clone of UNREAD did', () => {
    const hit = (seq: number, rec: FoldAnswer['groups'][number]['example']['rec']) => ({ seq, ord: seq, kind: LOGS, recvTime: 1, clientTime: 2, tab: 0, rec });
    const a: FoldAnswer = {
      fold: true,
      records: 3,
      groups: [
        { key: 'a', count: 1, firstTime: 2, lastTime: 2, lastSeq: 1, severity: 3, example: hit(1, UNREAD) },
        { key: 'b', count: 2, firstTime: 2, lastTime: 2, lastSeq: 2, severity: 4, example: hit(2, { level: 'error', message: 'shown' }) },
        { key: 'c', count: 1, firstTime: 2, lastTime: 2, lastSeq: 3, severity: 3, example: hit(3, UNREAD) },
      ],
      results: [{ matched: 3, hidden: 0, scanned: 3, missed: 0, next: 3, atEnd: true, stopped: false }],
      noiseHits: { n1: 4 },
    };
    const got = newWire(a);
    expect(got).toEqual(oldWire(a));
    expect(got.groups[1]!.example.rec).toEqual({ level: 'error', message: 'shown' });
    const [x, , z] = got.groups;
    expect(x!.example.rec).not.toBe(z!.example.rec);
    expect(Object.isFrozen(x!.example.rec)).toBe(false);
  });

  it('keeps every number a double holds and an answer without groups', () => {
    const odd = [-0, NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER, 1e-300, -1];
    const a: FoldAnswer = {
      fold: false,
      records: odd.length,
      groups: odd.map((v, i) => ({ key: `k${i}\u0000\ud800|"`, count: i + 1, firstTime: v, lastTime: -v, lastSeq: i, severity: 0, example: { seq: i, ord: v, kind: NET, recvTime: v, clientTime: v, tab: -1, rec: i === 0 ? (undefined as unknown as Record<string, unknown>) : { v } } })),
      results: [],
      noiseHits: {},
    };
    const got = newWire(a);
    expect(got).toEqual(oldWire(a));
    expect(Object.is(got.groups[0]!.firstTime, -0)).toBe(true);
    expect(got.groups[0]!.example.rec).toBeUndefined();
    expect(newWire({ ...a, groups: [], records: 0 })).toEqual(oldWire({ ...a, groups: [], records: 0 }));
  });
});
