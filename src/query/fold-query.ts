/**
 * A folded read of the rings, described as plain data so it can run in the scan worker: the
 * scan decodes candidate records (JSON.parse), tests filters and noise rules and builds fold
 * keys — most of what a busy page's observe call allocates. Off the main thread, that garbage
 * and those pauses no longer sit between an alert and its notification.
 *
 * The answer is what the caller renders from: the groups (each with its newest record), what
 * was matched, hidden and evicted per kind, and where to continue.
 */
import type { StoreReader } from '../shm/index.js';
import type { ReadRulesSpec } from '../domain/redaction/index.js';
import { errorSignature } from '../domain/signals/signature.js';
import { matcher, prefilter, type FilterArgs } from './filter.js';
import { bySeverityThenNewest, Folder, MAX_GROUPS, type Group } from './fold.js';
import { BUILTIN_NOISE, hider, type NoiseSpec } from './noise.js';
import { IndexLapped, readOne, scanIndexed, UNREAD, type Known } from './indexed-scan.js';
import { IS_ERROR, IS_FAILING, type ReadIndexes } from './match-index.js';
import { compiledReadRules } from './read-rules.js';
import type { TabScope } from './tab-scope.js';
import { decode, type Hit, type ScanResult } from './scan.js';
import { DEADLINE_MS, ScanBudget, scanSliced } from './sliced-scan.js';

export interface FoldQuery {
  kinds: number[];
  /** per kind: the first ordinal to read */
  start: number[];
  /** per kind: read before this ordinal (a range already answered) */
  to?: number[] | undefined;
  /** records examined at most, for all kinds together (split evenly) */
  maxScan: number;
  filter: FilterArgs;
  /** the caller's noise rules: matching records are counted as hidden, not folded */
  noise?: NoiseSpec[] | undefined;
  /**
   * The user rules added at run time, applied to every record before filters and noise rules
   * (read-rules.ts); left out, the rules bound to the reader (none in the worker).
   */
  reads?: ReadRulesSpec | undefined;
  /** false: every record is its own group (same bound, same fill order) */
  fold: boolean;
  /** what a group is: the fold key (default), or the normalized error signature (analyze's clusters) */
  by?: 'fold' | 'signature' | undefined;
  /** distinct groups at most (default MAX_GROUPS, at most MAX_GROUPS_LIMIT); when full the scan stops */
  maxGroups?: number | undefined;
  tab?: number | undefined;
  /** the caller's tab filter, as data (tab-scope.ts) */
  scope?: TabScope | undefined;
  /**
   * Wall-clock bound once the first MIN_SCAN records are read (default DEADLINE_MS, at most
   * MAX_WALL_MS). observe keeps the default: an agent polling a flood gets a quick partial answer
   * and a cursor. analyze has no cursor, so it asks for more time for a complete one.
   */
  wallMs?: number | undefined;
  /**
   * Only the first this many groups, most severe then newest first (the order an answer fills
   * in), need their example's record: the others come back with an empty one. observe shows at
   * most its `limit` lines, so it asks for those and the rest are neither read back nor copied
   * to main. Left out: every group's.
   */
  examples?: number | undefined;
}

export const MAX_GROUPS_LIMIT = 5000;
export const MAX_WALL_MS = 1000;

export type KindResult = Omit<ScanResult, 'hits' | 'stopped'> & { stopped: boolean };

export interface FoldAnswer {
  fold: boolean;
  /** records folded into the groups */
  records: number;
  groups: Group[];
  /** per kind of the query */
  results: KindResult[];
  /** per noise rule id: records it hid (the caller adds them to its rules' counts) */
  noiseHits: Record<string, number>;
}

/**
 * `indexes` (the scan worker's): a filter with a byte pre-filter (errors, failing requests) reads
 * what the index holds instead of scanning for it; the answer is the same either way. When the
 * ring overwrote a record the index named while the query ran, the query is scanned instead.
 */
export async function runFoldQuery(reader: StoreReader, q: FoldQuery, indexes?: ReadIndexes): Promise<FoldAnswer> {
  if (indexes) {
    try {
      return await foldQuery(reader, q, indexes);
    } catch (e) {
      if (!(e instanceof IndexLapped)) throw e;
    }
  }
  return foldQuery(reader, q, undefined);
}

/** the flag of match-index.ts every record a filter keeps has, and whether the filter is only that */
function flagOf(f: FilterArgs): { requires?: number; bare: boolean } {
  const requires = f.what === 'errors' ? IS_ERROR : f.what === 'failing' ? IS_FAILING : undefined;
  const bare = Object.entries(f).every(([k, v]) => k === 'what' || v === undefined);
  return { ...(requires !== undefined ? { requires } : {}), bare };
}

/** The query's noise rules as bits of the index's built-in column, when every one is built-in. */
function builtinRules(noise: NoiseSpec[] | undefined, hits: Record<string, number>): { rules: Array<{ id: string; bit: number }>; hits: Record<string, number> } | undefined {
  if (!noise?.length) return undefined;
  const rules: Array<{ id: string; bit: number }> = [];
  for (const n of noise) {
    const bit = BUILTIN_NOISE.findIndex(([field, pattern]) => field === n.field && pattern === n.pattern);
    if (bit < 0) return undefined;
    rules.push({ id: n.id, bit });
  }
  return { rules, hits };
}

async function foldQuery(reader: StoreReader, q: FoldQuery, indexes: ReadIndexes | undefined): Promise<FoldAnswer> {
  const max = Math.min(q.maxGroups ?? MAX_GROUPS, MAX_GROUPS_LIMIT);
  const folder = new Folder(q.fold, max, q.by === 'signature' ? (h) => errorSignature(h.rec) : undefined);
  const noiseHits: Record<string, number> = {};
  const hide = q.noise?.length ? hider(q.noise, noiseHits) : undefined;
  const reads = q.reads ? compiledReadRules(q.reads) : undefined;
  const match = matcher(q.filter);
  const pre = prefilter(q.filter);
  const work = new ScanBudget(Math.min(q.wallMs ?? DEADLINE_MS, MAX_WALL_MS));
  const results: KindResult[] = [];
  // the fold key computed when the record was indexed is this query's key unless it groups otherwise
  const use = { ...flagOf(q.filter), sink: q.by !== 'signature' ? (h: Hit, k: Known) => folder.add(h, k) : undefined, noise: builtinRules(q.noise, noiseHits) };
  for (let i = 0; i < q.kinds.length; i++) {
    const idx = pre.anyOf && indexes ? indexes.get(q.kinds[i]!, pre.anyOf, pre.anyFlag) : undefined;
    const spec = {
      kind: q.kinds[i]!,
      from: q.start[i]!,
      ...(q.to ? { to: q.to[i]! } : {}),
      limit: 0,
      maxScan: Math.floor(q.maxScan / q.kinds.length),
      ...pre,
      match,
      ...(hide ? { hide } : {}),
      ...(reads ? { reads } : {}),
      tab: q.tab,
      scope: q.scope,
      sink: (h: Hit) => folder.add(h),
    };
    const r = idx ? await scanIndexed(reader, idx, spec, work, use) : await scanSliced(reader, spec, work);
    results.push({ matched: r.matched, hidden: r.hidden, scanned: r.scanned, missed: r.missed, next: r.next, atEnd: r.atEnd, stopped: r.stopped === true });
  }
  return { fold: q.fold, records: folder.records, groups: withExamples(reader, folder.groups(), q.examples), results, noiseHits };
}

/** Reads back the examples the fold took from an index's columns, for the groups an answer may show. */
function withExamples(reader: StoreReader, groups: Group[], n: number | undefined): Group[] {
  const shown = n === undefined ? groups : [...groups].sort(bySeverityThenNewest).slice(0, n);
  const keep = n === undefined ? undefined : new Set(shown);
  for (const g of groups) {
    const drop = keep !== undefined && !keep.has(g);
    if (!drop && g.example.rec !== UNREAD) continue;
    // `at` (where the index saw the record) is for reading it back here only: the answer is a scan's
    const { at, ...example } = g.example;
    g.example = { ...example, rec: drop ? UNREAD : decode(readOne(reader, example.kind, example.ord, at)) };
  }
  return groups;
}
