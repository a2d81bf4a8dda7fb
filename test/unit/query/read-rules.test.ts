/**
 * The user rules reads apply (#18 item 3): each decoded record, before filters, noise rules and
 * renderers, on main through the reader's binding and in the scan worker through the query's
 * spec; only the rules added at run time, only the user rules.
 */
import { describe, expect, it } from 'vitest';
import { LiveRedaction } from '../../../src/domain/redaction/index.js';
import { bindReadRules, compiledReadRules, lastMatching, runFoldQuery, scan } from '../../../src/query/index.js';
import { allocateStore, StoreReader, StoreWriter } from '../../../src/shm/index.js';

const SECRET = 'acme-SECRET1234567890';

function store(messages: string[]): StoreReader {
  const buffers = allocateStore([1024 * 1024, 4096, 4096, 4096, 4096, 4096, 4096]);
  const records = messages.map((m, i) => ({ kind: 0, clientTime: i, tab: 1, payload: Buffer.from(JSON.stringify({ level: 'error', type: 'console', message: m, args: [m] })) }));
  new StoreWriter(buffers, 1).commit({ recvTime: 1, records, received: [records.length], rejected: [] });
  return new StoreReader(buffers);
}

const rule = { name: 'acme_key', pattern: 'acme-[A-Z0-9]{16}' };
const contains = (s: string) => (r: { message?: unknown }) => JSON.stringify(r).includes(s);

describe('read rules', () => {
  it('only rules added at run time are applied at read time; a config rule removed or replaced is', () => {
    const live = new LiveRedaction({ rules: [{ name: 'from_config', pattern: 'cfg-[0-9]{8}' }], allowlist: [] });
    expect(live.readSpec()).toBeUndefined();
    expect(live.reads).toBeUndefined();
    live.add(rule);
    expect(live.readSpec()?.rules.map((r) => r.name)).toEqual(['acme_key']);
    live.remove('acme_key');
    expect(live.reads).toBeUndefined();
    live.add({ name: 'from_config', pattern: 'cfg-[0-9]{8}' });
    expect(live.readSpec()?.rules.map((r) => r.name)).toEqual(['from_config']);
  });

  it('on main, scans and lastMatching see the records as the rules bound to the reader would have stored them', () => {
    const reader = store([`key ${SECRET} end`, 'plain']);
    const live = new LiveRedaction({ rules: [], allowlist: [] });
    bindReadRules(reader, () => live.reads);
    expect(scan(reader, { kind: 0, from: 0, limit: 10, maxScan: 10, match: contains('acme-SECRET12') }).matched).toBe(1);
    live.add(rule);
    expect(scan(reader, { kind: 0, from: 0, limit: 10, maxScan: 10, match: contains('acme-SECRET12') }).matched).toBe(0);
    const hits = lastMatching(reader, { kind: 0, from: 0, n: 2, maxScan: 10, where: () => true });
    expect(hits[0]!.rec).toMatchObject({ message: 'key [REDACTED:acme_key] end', args: ['key [REDACTED:acme_key] end'] });
    live.remove('acme_key');
    expect(scan(reader, { kind: 0, from: 0, limit: 10, maxScan: 10 }).hits[0]!.rec.message).toBe(`key ${SECRET} end`);
  });

  it('a fold query applies the rules it carries before its filter (the scan worker has no binding)', async () => {
    const reader = store([`key ${SECRET} end`, `other ${SECRET}`]);
    const q = { kinds: [0], start: [0], maxScan: 100, filter: { what: 'logs', contains: 'acme-SECRET12' }, fold: false };
    expect((await runFoldQuery(reader, q)).records).toBe(2);
    const reads = { version: 1, rules: [rule], allowlist: [] };
    expect((await runFoldQuery(reader, { ...q, reads })).records).toBe(0);
    const all = await runFoldQuery(reader, { ...q, filter: { what: 'logs' }, reads });
    expect(all.groups.map((g) => g.example.rec.message)).toEqual(['key [REDACTED:acme_key] end', 'other [REDACTED:acme_key]']);
  });

  it('compiles once per version, and applies the user rules only (built-in rules ran at ingest)', () => {
    const spec = { version: 3, rules: [rule], allowlist: [] };
    expect(compiledReadRules(spec)).toBe(compiledReadRules({ ...spec, rules: [{ ...rule }] }));
    expect(compiledReadRules({ ...spec, version: 4 })).not.toBe(compiledReadRules(spec));
    const engine = compiledReadRules(spec);
    // what only a built-in rule would touch stays as stored
    expect(engine.redactText('password=hunter2-secret ghp_Qw7eR9tY2uI4oP6aS8dF1gH3jK5lZ0xC7vB9')).toBe('password=hunter2-secret ghp_Qw7eR9tY2uI4oP6aS8dF1gH3jK5lZ0xC7vB9');
    expect(engine.redactText(`a ${SECRET}`)).toBe('a [REDACTED:acme_key]');
    // a user secret in base64, as at ingest
    expect(engine.redactText(`b ${Buffer.from(`k=${SECRET}`).toString('base64')} c`)).toBe('b [REDACTED:base64_secret] c');
  });
});
