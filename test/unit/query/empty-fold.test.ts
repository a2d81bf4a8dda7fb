/**
 * A fold with every cursor at its ring's head is answered without the scan worker
 * (src/query/empty-fold.ts): the answer must be the one the worker's own function gives for the
 * same query — indexed or scanned, one kind or two, folded or not, with noise rules, read-time
 * rules and a range that ends at the head — and nothing is answered there that the worker would
 * answer otherwise: a record past the cursor, a range ending before the head, a cursor past it, a
 * kind the store lacks, a noise rule the worker refuses.
 */
import { describe, expect, it } from 'vitest';
import { kindId } from '../../../src/domain/kinds.js';
import { emptyFold, MAX_NOISE_PATTERN, ReadIndexes, runFoldQuery, type FoldQuery } from '../../../src/query/index.js';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';

const LOGS = kindId('logs');
const NET = kindId('network');

function store(): { reader: StoreReader; write(n: number): void } {
  const buffers = allocateStore([64 * 1024, 64 * 1024, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  let t = 0;
  const write = (n: number): void => {
    const records = Array.from({ length: n }, (_, i) => {
      const kind = i % 3 === 2 ? NET : LOGS;
      const rec = kind === LOGS ? { level: i % 2 ? 'error' : 'warn', type: 'console', message: `TypeError: thing${i % 5} failed` } : { method: 'GET', url: `http://api.test/${i % 4}`, status: 500 };
      return { kind, clientTime: t++, tab: i % 2, payload: Buffer.from(JSON.stringify(rec)) };
    });
    writer.commit({ recvTime: 1000 + t, records, received: [n], rejected: [] });
  };
  return { reader: new StoreReader(buffers), write };
}

const heads = (r: StoreReader, kinds: number[]): number[] => kinds.map((k) => r.latestOrd(k));

describe('a fold with nothing to read', () => {
  it('answers what the worker answers, for every shape of query at the heads', async () => {
    const { reader, write } = store();
    const indexes = new ReadIndexes(reader, { background: false });
    for (const round of [0, 1]) {
      if (round) {
        write(60);
        indexes.tick();
      }
      const queries: FoldQuery[] = [
        { kinds: [LOGS], start: heads(reader, [LOGS]), maxScan: 20_000, filter: { what: 'errors' }, fold: true, examples: 50 },
        { kinds: [LOGS, NET], start: heads(reader, [LOGS, NET]), maxScan: 20_000, filter: { what: 'timeline' }, fold: false },
        { kinds: [NET], start: heads(reader, [NET]), maxScan: 20_000, filter: { what: 'failing' }, fold: true, by: 'signature' },
        { kinds: [LOGS], start: heads(reader, [LOGS]), to: heads(reader, [LOGS]), maxScan: 100, filter: { what: 'logs', contains: 'thing' }, fold: true },
        { kinds: [LOGS], start: heads(reader, [LOGS]), maxScan: 20_000, filter: { what: 'errors' }, fold: true, noise: [{ id: 'n1', field: 'message', pattern: 'thing1' }], scope: { tabs: [1] } },
        { kinds: [LOGS], start: heads(reader, [LOGS]), maxScan: 20_000, filter: { what: 'errors' }, fold: true, reads: { version: 3, rules: [{ name: 'thing', pattern: 'thing\\d' }], allowlist: [] } },
      ];
      for (const q of queries) {
        const here = emptyFold(reader, q);
        expect(here, JSON.stringify(q)).toBeDefined();
        expect(here).toEqual(await runFoldQuery(reader, q, indexes));
        expect(here).toEqual(await runFoldQuery(reader, q));
      }
    }
  });

  it('leaves to the worker every query it would answer otherwise', async () => {
    const { reader, write } = store();
    write(30);
    const [logs, net] = heads(reader, [LOGS, NET]) as [number, number];
    const base: FoldQuery = { kinds: [LOGS, NET], start: [logs, net], maxScan: 20_000, filter: { what: 'errors' }, fold: true };
    expect(emptyFold(reader, base)).toBeDefined();
    // one record past one cursor
    expect(emptyFold(reader, { ...base, start: [logs, net - 1] })).toBeUndefined();
    // a range that ends before the head, and a cursor past it (an earlier daemon's ordinals)
    expect(emptyFold(reader, { ...base, start: [logs - 5, net], to: [logs - 1, net] })).toBeUndefined();
    expect(emptyFold(reader, { ...base, start: [logs + 10, net] })).toBeUndefined();
    // a kind the store does not have, and a malformed query
    expect(emptyFold(reader, { ...base, kinds: [LOGS, 99] })).toBeUndefined();
    expect(emptyFold(reader, { ...base, start: [logs] })).toBeUndefined();
    expect(emptyFold(reader, { ...base, kinds: [], start: [] })).toBeUndefined();
    // a noise rule the worker refuses before it reads: the refusal is the worker's answer
    const refused = { ...base, noise: [{ id: 'long', field: 'message' as const, pattern: 'x'.repeat(MAX_NOISE_PATTERN + 1) }] };
    expect(emptyFold(reader, refused)).toBeUndefined();
    await expect(runFoldQuery(reader, refused)).rejects.toThrow();
    // new records: the same query is the worker's again
    write(1);
    expect(emptyFold(reader, base)).toBeUndefined();
  });
});
