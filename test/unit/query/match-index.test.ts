/**
 * Issue 17 item 3: observe's filtered reads served from an index kept as records arrive give the
 * answer a full scan gives, on the same data — through wrap-around of tiny rings, a clear, noise
 * rules added after the records were indexed, tab filters, read-time redaction rules, checkpoints,
 * cursors that fell behind the overwritten tail, fold-map and scan bounds. Seeded, so a failure
 * names its seed and step.
 */
import { Packr, pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { kindId } from '../../../src/domain/kinds.js';
import { IndexLapped, readOne } from '../../../src/query/indexed-scan.js';
import { BUILTIN_NOISE, bySeverityThenNewest, errorKeysBefore, MatchIndex, ReadIndexes, runFoldQuery, type FoldAnswer, type FoldQuery } from '../../../src/query/index.js';
import { TICK_IDLE_MAX_MS } from '../../../src/query/match-index.js';
import { ERROR_BYTES } from '../../../src/query/filter.js';
import { recordFlags } from '../../../src/domain/record-flags.js';
import { allocateStore, REC_ERROR, REC_MSGPACK, StoreReader, StoreWriter } from '../../../src/shm/index.js';
import { signatureHash } from '../../../src/domain/signals/signature-hash.js';
import { mulberry32 } from '../../fixtures/shm-gen.js';
import { withSig } from '../../fixtures/stored-record.js';

const LOGS = kindId('logs');
const NET = kindId('network');
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'order', 'cart', 'token', 'favicon.ico', '[vite] hot', 'acme-SECRET1234567890AB'];
const PAGES = ['http://app.test/shop', 'http://app.test/admin', 'http://other.test/'];

function logRec(r: () => number, ts: number): Record<string, unknown> {
  const t = r();
  if (t < 0.15) return { ts, level: 'error', type: 'exception', message: `TypeError: ${pick(r, WORDS)} ${Math.floor(r() * 5)}`, stack: `at f (http://app.test/${pick(r, ['a', 'b'])}.js:1:2)`, url: pick(r, PAGES) };
  if (t < 0.25) return { ts, level: 'error', type: 'network', message: 'request failed', status: pick(r, [404, 500, 0]), url: `http://api.test/${pick(r, WORDS)}/${Math.floor(r() * 99)}`, request_url: 'http://api.test/x', page_url: pick(r, PAGES) };
  const level = pick(r, ['debug', 'log', 'info', 'warn', 'error', 'error']);
  return { ts, level, type: 'console', message: `${pick(r, WORDS)} ${pick(r, WORDS)} ${Math.floor(r() * 20)}`, source: pick(r, ['app.js', 'vendor.js']), url: pick(r, PAGES) };
}

function netRec(r: () => number, ts: number): Record<string, unknown> {
  const status = pick(r, [200, 200, 200, 201, 304, 404, 500, 502, 0]);
  return { ts, method: pick(r, ['GET', 'POST']), url: `http://api.test/${pick(r, WORDS)}/${Math.floor(r() * 50)}`, status, ...(r() < 0.05 ? { error: 'net::ERR_FAILED' } : {}), page_url: pick(r, PAGES) };
}

interface World {
  reader: StoreReader;
  write(n: number): void;
  clear(): void;
}

/**
 * Tiny rings (a few hundred records), so a few steps wrap them several times. `classified`: which
 * records carry header flags (recordFlags), as an ingest worker writes them; the others are tested
 * by their bytes. Its own generator, so the records are the same whichever is chosen.
 */
/**
 * How a record is stored: JSON as the tests wrote it before signatures; JSON with the error
 * signature the ingest worker adds (`_sig`, last); or as its msgpack bytes ("verbatim"), a
 * msgpackr record or a plain map, the signature in front (stored-record.ts).
 */
type Form = 'json' | 'json+sig' | 'msgpack';

const sigOf = (rec: Record<string, unknown>): number | undefined =>
  rec.level === 'error' || rec.type === 'exception' ? signatureHash(typeof rec.stack === 'string' ? rec.stack : '', signatureHash(String(rec.message ?? ''))) : undefined;

function stored(rec: Record<string, unknown>, form: Form, alt: boolean): { payload: Uint8Array; msgpack: boolean } {
  const sig = form === 'json' ? undefined : sigOf(rec);
  if (form !== 'msgpack') return { payload: Buffer.from(JSON.stringify(sig === undefined ? rec : { ...rec, _sig: sig })), msgpack: false };
  const body = alt ? pack(rec) : new Packr({ useRecords: true }).pack(rec);
  return { payload: sig === undefined ? body : withSig(sig, body), msgpack: true };
}

function world(seed: number, ringBytes = 24 * 1024, classified: 'all' | 'none' | 'some' = 'some', form: Form = 'json'): World {
  const r = mulberry32(seed);
  const c = mulberry32(seed ^ 0x5bd1e995);
  const buffers = allocateStore([ringBytes, ringBytes, 4096, 4096, 4096, 4096, 4096]);
  const writer = new StoreWriter(buffers, 1);
  const reader = new StoreReader(buffers);
  let ts = 1_000_000;
  return {
    reader,
    write(n) {
      const records = Array.from({ length: n }, () => {
        const kind = r() < 0.6 ? LOGS : NET;
        const rec = kind === LOGS ? logRec(r, ts++) : netRec(r, ts++);
        const classify = classified === 'all' || (classified === 'some' && c() < 0.7);
        const { payload, msgpack } = stored(rec, form, c() < 0.3);
        const flags = (classify ? recordFlags(rec) : 0) | (msgpack ? REC_MSGPACK : 0);
        return { kind, clientTime: ts, tab: pick(r, [1, 2, 3, -1]), payload, ...(flags ? { flags } : {}) };
      });
      writer.commit({ recvTime: ts, records, received: [n], rejected: [] });
    },
    clear() {
      expect(reader.tryClear([LOGS, NET])).toBe(true);
    },
  };
}

function randomQuery(r: () => number, reader: StoreReader): FoldQuery {
  const kind = r() < 0.65 ? LOGS : NET;
  const what = kind === LOGS ? pick(r, ['errors', 'errors', 'errors', 'logs']) : pick(r, ['failing', 'failing', 'network']);
  const tail = reader.tailOrd(kind);
  const head = reader.latestOrd(kind);
  // a cursor anywhere from well behind the overwritten tail to the head
  const start = Math.max(0, tail - Math.floor(r() * 200) + Math.floor(r() * (head - tail + 200)));
  const q: FoldQuery = { kinds: [kind], start: [Math.min(start, head)], maxScan: r() < 0.15 ? 1 + Math.floor(r() * 100) : 20_000, filter: { what }, fold: r() < 0.85, wallMs: 60_000 };
  if (r() < 0.2) q.to = [Math.min(head, q.start[0]! + Math.floor(r() * 150))];
  if (r() < 0.4) q.noise = [{ id: 'n1', field: 'message', pattern: pick(r, ['alpha', '^TypeError', 'cart \\d']) }, { id: 'n2', field: 'url', pattern: 'favicon' }];
  // every client's defaults: answered from the index's built-in noise bits, in the caller's order
  else if (r() < 0.6) q.noise = BUILTIN_NOISE.map(([field, pattern], i) => ({ id: `b${i}`, field, pattern })).sort(() => r() - 0.5);
  if (r() < 0.3) q.examples = Math.floor(r() * 8);
  if (r() < 0.2) q.scope = { tabs: [pick(r, [1, 2])] };
  else if (r() < 0.15) q.scope = { tabs: [3], url: 'admin' };
  if (r() < 0.15) q.tab = pick(r, [1, 2, 3]);
  if (r() < 0.15) q.filter.url = pick(r, ['api.test/order', 'app.test/shop', '/cart/']);
  if (r() < 0.15) q.filter.contains = pick(r, ['alpha', 'SECRET', '50']);
  if (r() < 0.1) q.filter.min_level = 'error';
  if (r() < 0.15) q.maxGroups = 1 + Math.floor(r() * 6);
  if (r() < 0.1) q.by = 'signature';
  if (r() < 0.15) q.reads = { version: 1, rules: [{ name: 'acme', pattern: 'acme-[A-Z0-9]{16}' }], allowlist: [] };
  return q;
}

const clone = (q: FoldQuery): FoldQuery => structuredClone(q);
/**
 * `scanned` is the records examined: every ordinal a scan passes, only the entries an index part
 * examines (and a scan's read-ahead past a fold map that refused a record); no answer shows it.
 */
const comparable = (a: FoldAnswer) => ({ ...a, results: a.results.map((r) => ({ ...r, scanned: -1 })) });

/**
 * The index's answer against a scan's over the same range. A read bounded by `maxScan` counts the
 * index's entries, not every ordinal, so it may get further than a scan with the same bound: the
 * scan is given the range the index read instead (through the record a full fold refused, which a
 * scan then refuses too). Unbounded, the two read the same range.
 */
async function sameAsScan(reader: StoreReader, q: FoldQuery, indexes: ReadIndexes, label: string): Promise<void> {
  const indexed = await runFoldQuery(reader, clone(q), indexes);
  const bounded = await runFoldQuery(reader, clone(q));
  const r = indexed.results[0]!;
  const over = await runFoldQuery(reader, { ...clone(q), maxScan: Number.MAX_SAFE_INTEGER, to: [r.stopped ? r.next + 1 : r.next] });
  const o = over.results[0]!;
  expect({ ...comparable(indexed), results: [{ ...r, scanned: -1, atEnd: -1 }] }, label).toEqual({ ...comparable(over), results: [{ ...o, scanned: -1, atEnd: -1 }] });
  if (q.maxScan >= 10_000) expect(comparable(indexed), label).toEqual(comparable(bounded));
  else {
    // bounded: never fewer records examined than the bound allows, nor more
    expect(r.scanned, label).toBeLessThanOrEqual(q.maxScan);
    expect(r.next, label).toBeGreaterThanOrEqual(bounded.results[0]!.next);
  }
}

describe('MatchIndex', () => {
  it('serves what a full scan finds, whatever the seed: wrap-around, clears, noise, tabs, read rules, bounds', async () => {
    let compared = 0;
    let fromIndex = 0;
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const w = world(seed);
      const r = mulberry32(seed * 7919);
      const indexes = new ReadIndexes(w.reader, { background: false, maxEntries: seed % 2 ? 10 : undefined });
      w.write(50);
      for (let step = 0; step < 60; step++) {
        const t = r();
        if (t < 0.5) w.write(1 + Math.floor(r() * 120));
        else if (t < 0.53) w.clear();
        else if (t < 0.65) indexes.tick();
        const q = randomQuery(r, w.reader);
        await sameAsScan(w.reader, q, indexes, `seed ${seed} step ${step} ${JSON.stringify(q)}`);
        compared++;
        if (indexes.count) fromIndex++;
      }
    }
    expect(compared).toBe(480);
    expect(fromIndex).toBeGreaterThan(300);
  });

  it('header flags give the answers the records\' bytes give: written by a worker that classifies or by one that does not', async () => {
    let compared = 0;
    for (const seed of [21, 22, 23, 24]) {
      const flagged = world(seed, 24 * 1024, 'all');
      const plain = world(seed, 24 * 1024, 'none');
      const r = mulberry32(seed * 104_729);
      const idxF = new ReadIndexes(flagged.reader, { background: false });
      const idxP = new ReadIndexes(plain.reader, { background: false });
      for (let step = 0; step < 40; step++) {
        const t = r();
        if (t < 0.6) {
          const n = 1 + Math.floor(r() * 120);
          flagged.write(n);
          plain.write(n);
        } else if (t < 0.75) {
          idxF.tick();
          idxP.tick();
        }
        const q = randomQuery(r, flagged.reader);
        const want = comparable(await runFoldQuery(plain.reader, clone(q)));
        expect(comparable(await runFoldQuery(flagged.reader, clone(q))), `seed ${seed} step ${step} scanned`).toEqual(want);
        expect(comparable(await runFoldQuery(flagged.reader, clone(q), idxF)), `seed ${seed} step ${step} indexed`).toEqual(comparable(await runFoldQuery(plain.reader, clone(q), idxP)));
        compared++;
      }
    }
    expect(compared).toBe(160);
  });

  it('records kept as their msgpack bytes, signature in front, give the answers their JSON gives, indexed and scanned', async () => {
    // the index reads a few fields from such bytes without decoding the record (skim-record.ts).
    // The forms differ in size, so the two are compared in rings that never wrap; a tiny ring of
    // the bytes is held to a scan's answer through wrap-around.
    let compared = 0;
    for (const seed of [31, 32, 33, 34]) {
      const bytes = world(seed, 4 * 1024 * 1024, 'some', 'msgpack');
      const json = world(seed, 4 * 1024 * 1024, 'some', 'json+sig');
      const tiny = world(seed, 24 * 1024, 'some', 'msgpack');
      const r = mulberry32(seed * 15_485_863);
      const maxEntries = seed % 2 ? 10 : undefined;
      const idxB = new ReadIndexes(bytes.reader, { background: false, maxEntries });
      const idxJ = new ReadIndexes(json.reader, { background: false, maxEntries });
      const idxT = new ReadIndexes(tiny.reader, { background: false, maxEntries });
      for (let step = 0; step < 40; step++) {
        const t = r();
        if (t < 0.6) {
          const n = 1 + Math.floor(r() * 120);
          for (const w of [bytes, json, tiny]) w.write(n);
        } else if (t < 0.75) for (const i of [idxB, idxJ, idxT]) i.tick();
        // unbounded: a bound counts what the byte pre-filter let through, and its needles differ
        // between the forms for records written without header flags
        const q = { ...randomQuery(r, bytes.reader), maxScan: 20_000 };
        const label = `seed ${seed} step ${step} ${JSON.stringify(q)}`;
        expect(comparable(await runFoldQuery(bytes.reader, clone(q), idxB)), label).toEqual(comparable(await runFoldQuery(json.reader, clone(q), idxJ)));
        await sameAsScan(tiny.reader, randomQuery(r, tiny.reader), idxT, `tiny ${label}`);
        compared++;
      }
      expect(bytes.reader.tailOrd(LOGS), 'the large rings never wrapped').toBe(0);
      expect(tiny.reader.tailOrd(LOGS), 'the tiny ring wrapped').toBeGreaterThan(0);
    }
    expect(compared).toBe(160);
  });

  it('a cursor that fell behind the overwritten tail is told what it missed, and never served an overwritten record', async () => {
    const w = world(11);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const q = (start: number): FoldQuery => ({ kinds: [LOGS], start: [start], maxScan: 20_000, filter: { what: 'errors' }, fold: false });
    await runFoldQuery(w.reader, q(0), indexes);
    w.write(100);
    indexes.tick();
    const idx = indexes.get(LOGS, ERROR_BYTES)!;
    expect(idx.size).toBeGreaterThan(0);
    // the ring wraps several times after the index read those records
    for (let i = 0; i < 20; i++) w.write(100);
    const tail = w.reader.tailOrd(LOGS);
    expect(tail).toBeGreaterThan(100);
    const a = await runFoldQuery(w.reader, q(0), indexes);
    expect(comparable(a)).toEqual(comparable(await runFoldQuery(w.reader, q(0))));
    expect(a.results[0]!.missed).toBe(tail);
    for (const g of a.groups) expect(g.example.ord).toBeGreaterThanOrEqual(tail);
  });

  it('noise rules added after the records were indexed hide them, and count per rule', async () => {
    const w = world(12);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const base: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true };
    await runFoldQuery(w.reader, base, indexes);
    w.write(150);
    indexes.tick();
    const start = [w.reader.tailOrd(LOGS)];
    const before = await runFoldQuery(w.reader, { ...base, start }, indexes);
    const noisy: FoldQuery = { ...base, start, noise: [{ id: 'r', field: 'message', pattern: 'TypeError' }] };
    const after = await runFoldQuery(w.reader, noisy, indexes);
    expect(comparable(after)).toEqual(comparable(await runFoldQuery(w.reader, noisy)));
    expect(after.noiseHits.r).toBeGreaterThan(0);
    expect(after.records).toBe(before.records - after.noiseHits.r!);
  });

  it('a checkpoint names the same new signatures whichever way the groups were found', async () => {
    const w = world(13, 256 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true };
    await runFoldQuery(w.reader, q, indexes);
    w.write(200);
    const cp = { created_at: '2026-11-24T00:00:00Z', ords: [w.reader.latestOrd(LOGS), w.reader.latestOrd(NET)] };
    w.write(200);
    indexes.tick();
    const before = await errorKeysBefore(w.reader, cp);
    const fresh = (a: FoldAnswer) => a.groups.filter((g) => !before.has(g.key)).map((g) => g.key);
    const indexed = await runFoldQuery(w.reader, q, indexes);
    expect(fresh(indexed)).toEqual(fresh(await runFoldQuery(w.reader, q)));
    expect(fresh(indexed).length).toBeGreaterThan(0);
    expect(fresh(indexed).length).toBeLessThan(indexed.groups.length);
  });

  it('is bounded by entries: the oldest go and coverage starts after them', () => {
    const w = world(14, 1024 * 1024);
    const idx = new MatchIndex(w.reader, LOGS, ERROR_BYTES, REC_ERROR, 10);
    for (let i = 0; i < 10; i++) w.write(100);
    idx.catchUp(Infinity);
    expect(idx.size).toBeGreaterThan(0);
    expect(idx.size).toBeLessThan(20);
    expect(idx.size).toBe(10);
    expect(idx.from).toBeGreaterThan(0);
    expect(idx.to).toBe(w.reader.latestOrd(LOGS));
  });

  it('an index no query used drops out and stops catching up', async () => {
    const w = world(15);
    const indexes = new ReadIndexes(w.reader, { background: false, idleMs: 0 });
    await runFoldQuery(w.reader, { kinds: [LOGS], start: [0], maxScan: 100, filter: { what: 'errors' }, fold: true }, indexes);
    expect(indexes.count).toBe(1);
    await new Promise((r) => setTimeout(r, 2));
    indexes.tick();
    expect(indexes.count).toBe(0);
  });

  it('catches up in the background soon while records arrive, later and later while none do, at once again on a read; stops with its last index', async () => {
    const w = world(20);
    const indexes = new ReadIndexes(w.reader, { tickMs: 5 });
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true };
    try {
      await runFoldQuery(w.reader, q, indexes);
      expect(indexes.nextTickMs).toBe(5);
      // nothing new: each step waits twice as long, up to the bound (not 40 wake-ups a second)
      const waits: number[] = [];
      for (let i = 0; i < 8; i++) waits.push(indexes.tick()!);
      expect(waits).toEqual([10, 20, 40, 80, 160, TICK_IDLE_MAX_MS, TICK_IDLE_MAX_MS, TICK_IDLE_MAX_MS]);
      // a record arrives: the next step reads it and the pace is back at once
      w.write(50);
      expect(indexes.tick()).toBe(5);
      expect(indexes.tick()).toBe(10);
      // a read brings the pace back too, and the timer with it
      await runFoldQuery(w.reader, q, indexes);
      expect(indexes.nextTickMs).toBe(5);
      // driven by its own timer: it slows down by itself while nothing arrives
      await new Promise((r) => setTimeout(r, 200));
      expect(indexes.nextTickMs).toBeGreaterThanOrEqual(40);
    } finally {
      indexes.stop();
    }
    // the last index gone, no step is pending
    const once = new ReadIndexes(w.reader, { tickMs: 5, idleMs: 0 });
    await runFoldQuery(w.reader, q, once);
    await new Promise((r) => setTimeout(r, 60));
    expect(once.count).toBe(0);
    expect(once.nextTickMs).toBe(-1);
  });

  it('behind the rings, steps follow one another after as long as they worked (not every TICK_MS), until it has caught up', async () => {
    const w = world(21, 1024 * 1024);
    // workMs 0: each step reads one chunk and stops at its deadline
    const indexes = new ReadIndexes(w.reader, { tickMs: 25, workMs: 0, background: false });
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true };
    await runFoldQuery(w.reader, q, indexes);
    w.write(2000);
    const waits: number[] = [];
    for (let i = 0; i < 40 && (waits.length === 0 || waits.at(-1) === 1); i++) waits.push(indexes.tick()!);
    // ~1 200 logs, a step reads at most 1 024: some steps behind, then the usual pace once caught up
    expect(waits.length).toBeGreaterThan(2);
    expect(waits.slice(0, -1).every((ms) => ms === 1)).toBe(true);
    expect(waits.at(-1)).toBe(25);
    const idx = indexes.get(LOGS, [], undefined);
    expect(idx).toBeDefined();
    // what it holds once caught up is what a scan finds
    const viaIndex = await runFoldQuery(w.reader, { ...q, start: [w.reader.tailOrd(LOGS)] }, indexes);
    const scanned = await runFoldQuery(w.reader, { ...q, start: [w.reader.tailOrd(LOGS)] });
    expect(comparable(viaIndex)).toEqual(comparable(scanned));
    indexes.stop();
  });

  it('a background step gives way to a waiting read at its next chunk, and goes on after it', async () => {
    const w = world(22, 1024 * 1024);
    let waiting = false;
    const indexes = new ReadIndexes(w.reader, { tickMs: 25, workMs: 60_000, background: false, queryWaiting: () => waiting });
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true };
    await runFoldQuery(w.reader, q, indexes);
    const idx = indexes.get(LOGS, ERROR_BYTES)!;
    w.write(2000);
    const head = w.reader.latestOrd(LOGS);
    waiting = true;
    // a step with all the time in the world reads one chunk, and says it is behind
    expect(indexes.tick()).toBe(60_000);
    expect(idx.to).toBeGreaterThan(0);
    expect(idx.to).toBeLessThan(head);
    expect(idx.lagging).toBe(true);
    waiting = false;
    indexes.tick();
    expect(idx.to).toBe(head);
    expect(idx.lagging).toBe(false);
    indexes.stop();
  });

  it('a read catches the index up only when it gets to the index\'s end; both answer as a scan', async () => {
    const w = world(23, 1024 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const q = (start: number, to?: number): FoldQuery => ({ kinds: [LOGS], start: [start], ...(to !== undefined ? { to: [to] } : {}), maxScan: 20_000, filter: { what: 'errors' }, fold: true, wallMs: 60_000 });
    await runFoldQuery(w.reader, q(0), indexes);
    w.write(600);
    indexes.tick();
    const idx = indexes.get(LOGS, ERROR_BYTES)!;
    const covered = idx.to;
    w.write(600);
    // a range that ends well inside what is indexed (a caller behind a flood, stopped by its bounds)
    const tail = w.reader.tailOrd(LOGS);
    const near = await runFoldQuery(w.reader, q(tail, tail + 100), indexes);
    expect(idx.to).toBe(covered);
    expect(comparable(near)).toEqual(comparable(await runFoldQuery(w.reader, q(tail, tail + 100))));
    // one that gets there
    const far = await runFoldQuery(w.reader, q(tail), indexes);
    // (within the read's 2 ms slice: a remainder is scanned)
    expect(idx.to).toBeGreaterThan(covered);
    expect(comparable(far)).toEqual(comparable(await runFoldQuery(w.reader, q(tail))));
    indexes.stop();
  });

  it('a bound on records examined counts the index\'s entries: one read covers what a scan under the same bound covers in many', async () => {
    const w = world(24, 1024 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const q = (start: number, maxScan: number): FoldQuery => ({ kinds: [LOGS], start: [start], maxScan, filter: { what: 'errors' }, fold: true, wallMs: 60_000 });
    await runFoldQuery(w.reader, q(0, 20_000), indexes);
    w.write(2000);
    const idx = indexes.get(LOGS, ERROR_BYTES)!;
    // caught up to the head, however slow this machine's steps are
    while (idx.to < w.reader.latestOrd(LOGS)) indexes.tick();
    const from = w.reader.tailOrd(LOGS);
    const entries = idx.seek(idx.to) - idx.seek(from);
    const ordinals = idx.to - from;
    expect(entries).toBeLessThan(ordinals - 10);
    // a bound between the two: the index reads to the end, a scan stops part way
    const bound = entries + 5;
    const indexed = await runFoldQuery(w.reader, q(from, bound), indexes);
    const scanned = await runFoldQuery(w.reader, q(from, bound));
    expect(indexed.results[0]).toMatchObject({ next: idx.to, atEnd: true, scanned: entries });
    expect(scanned.results[0]!.next).toBe(from + bound);
    expect(scanned.results[0]!.atEnd).toBe(false);
    // and over the range it read, its answer is a scan's
    expect(comparable(indexed)).toEqual(comparable(await runFoldQuery(w.reader, q(from, Number.MAX_SAFE_INTEGER))));
    // a bound below the entries stops at an entry, and the next read goes on from it
    const first = await runFoldQuery(w.reader, q(from, 3), indexes);
    expect(first.results[0]!.scanned).toBe(3);
    expect(first.results[0]!.atEnd).toBe(false);
    const rest = await runFoldQuery(w.reader, { ...q(first.results[0]!.next, 20_000) }, indexes);
    expect(first.records + rest.records).toBe(indexed.records);
    indexes.stop();
  });

  it('its columns wrap and grow while the oldest entries go: every answer is still the scan\'s, keys are released with their entries', async () => {
    const w = world(16, 4 * 1024 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false, maxEntries: 3000 });
    const builtin = BUILTIN_NOISE.map(([field, pattern], i) => ({ id: `b${i}`, field, pattern }));
    const q = (start: number): FoldQuery => ({ kinds: [LOGS], start: [start], maxScan: 20_000, filter: { what: 'errors' }, fold: true, noise: builtin, maxGroups: 5000, wallMs: 60_000 });
    await runFoldQuery(w.reader, q(0), indexes);
    const idx = indexes.get(LOGS, ERROR_BYTES)!;
    let dropped = false;
    for (let step = 0; step < 40; step++) {
      w.write(400);
      indexes.tick();
      // past 3 000 entries the oldest go (the columns' first slot moves on), past 1 024 and 2 048 they grow
      if (idx.from > 0) dropped = true;
      expect(idx.size).toBeLessThanOrEqual(3000);
      expect(idx.keyCount).toBeLessThanOrEqual(idx.size);
      for (const start of [0, idx.from - 7, idx.from, Math.floor((idx.from + idx.to) / 2), idx.to]) {
        const a = await runFoldQuery(w.reader, q(Math.max(0, start)), indexes);
        expect(comparable(a), `step ${step} start ${start}`).toEqual(comparable(await runFoldQuery(w.reader, q(Math.max(0, start)))));
      }
    }
    expect(dropped).toBe(true);
    expect(idx.size).toBe(3000);
  });

  it('a tab filter by tab ids is answered from the columns, with the built-in noise rules hiding what they hide', async () => {
    const w = world(17, 256 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const noise = BUILTIN_NOISE.map(([field, pattern], i) => ({ id: `b${i}`, field, pattern }));
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: false, noise, scope: { tabs: [2] }, wallMs: 60_000 };
    await runFoldQuery(w.reader, q, indexes);
    for (let i = 0; i < 8; i++) w.write(150);
    indexes.tick();
    const a = await runFoldQuery(w.reader, q, indexes);
    expect(comparable(a)).toEqual(comparable(await runFoldQuery(w.reader, q)));
    expect(a.groups.length).toBeGreaterThan(0);
    for (const g of a.groups) expect(g.example.tab).toBe(2);
    expect(Object.values(a.noiseHits).reduce((n, x) => n + x, 0)).toBe(a.results[0]!.hidden);
    expect(a.results[0]!.hidden).toBeGreaterThan(0);
  });

  it('`examples`: only the groups an answer can show carry their record, the first ones in fill order', async () => {
    const w = world(18, 256 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true, wallMs: 60_000 };
    await runFoldQuery(w.reader, q, indexes);
    for (let i = 0; i < 8; i++) w.write(150);
    const all = await runFoldQuery(w.reader, q, indexes);
    const some = await runFoldQuery(w.reader, { ...q, examples: 3 }, indexes);
    expect(all.groups.length).toBeGreaterThan(3);
    const first = new Set([...all.groups].sort(bySeverityThenNewest).slice(0, 3).map((g) => g.key));
    expect(some.groups.map((g) => g.key)).toEqual(all.groups.map((g) => g.key));
    some.groups.forEach((g, i) => {
      if (first.has(g.key)) expect(g.example).toEqual(all.groups[i]!.example);
      else expect(g.example.rec).toEqual({});
      expect({ ...g, example: undefined }).toEqual({ ...all.groups[i]!, example: undefined });
    });
  });

  it('an example is read back from where the index saw it, without walking the ring to it; the answer does not carry the position', async () => {
    const w = world(20, 256 * 1024);
    const indexes = new ReadIndexes(w.reader, { background: false });
    const q: FoldQuery = { kinds: [LOGS], start: [0], maxScan: 20_000, filter: { what: 'errors' }, fold: true, wallMs: 60_000, examples: 40 };
    await runFoldQuery(w.reader, q, indexes);
    for (let i = 0; i < 8; i++) w.write(150);
    indexes.tick();
    const hops = w.reader.walkStats.hops;
    const a = await runFoldQuery(w.reader, q, indexes);
    const shown = a.groups.filter((g) => Object.keys(g.example.rec).length > 0);
    expect(shown.length).toBe(40);
    // 40 records read back by ordinal alone would hop from the sparse index's entries (stride 64)
    expect(w.reader.walkStats.hops - hops).toBe(0);
    for (const g of a.groups) expect('at' in g.example).toBe(false);
    expect(comparable(a)).toEqual(comparable(await runFoldQuery(w.reader, q, undefined)));
  });

  it('a record the ring overwrote is never read back for an answer (the query is scanned instead)', () => {
    const w = world(19);
    w.write(100);
    expect(() => readOne(w.reader, LOGS, w.reader.tailOrd(LOGS))).not.toThrow();
    for (let i = 0; i < 20; i++) w.write(100);
    expect(() => readOne(w.reader, LOGS, 0)).toThrow(IndexLapped);
  });
});
