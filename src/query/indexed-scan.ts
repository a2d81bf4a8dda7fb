/**
 * A sliced scan (sliced-scan.ts) that takes what an index covers from the index: the range before
 * its coverage and after it are scanned as always, the covered middle is read from the entries,
 * with the same tests in the same order (tab, byte needles, read-time rules, page scope, filter,
 * noise, sink) and the same bounds (records examined, the call's wall-clock budget). So over the
 * range it read, the answer is the scan's, whichever part the index held — the tests prove it on
 * seeded data. The range may be longer than a scan's under the same `maxScan`: the records the
 * index part examines are its entries, not every ordinal it passes.
 *
 * Two ways through the entries. A bare `errors` / `failing` fold with no noise rules, tab pattern,
 * read-time rules or byte needles is answered from the columns alone: its records go to the fold
 * as headers with their known key, and only the examples an answer shows are read back from the
 * ring afterwards (fold-query.ts). Any other query reads its candidates back in one pass per block
 * and tests the decoded records as a scan does.
 */
import type { RecordHeader, StoreReader } from '../shm/index.js';
import type { Severity } from './fold-key.js';
import type { MatchIndex } from './match-index.js';
import { redactRead, readRulesOf } from './read-rules.js';
import { decode, type Hit, type Rec, type ScanResult, type ScanSpec } from './scan.js';
import { type ScanBudget, scanSliced, SLICE_MS } from './sliced-scan.js';
import { headerOnly, inScope } from './tab-scope.js';
import { payloadHas } from './needles.js';

/** The record of a hit the fold took from the index's columns: read back from the ring if it is shown. */
export const UNREAD: Rec = Object.freeze({});

/** A record the index named is no longer in the ring (lapped mid-query): the caller scans instead. */
export class IndexLapped extends Error {
  constructor() {
    super('the ring overwrote records the index named during the query');
    this.name = 'IndexLapped';
  }
}

/** What an entry's fold needs that the index computed when it read the record. */
export interface Known {
  key: string;
  severity: Severity;
}

/** What the query lets the index answer from its columns. */
export interface EntryUse {
  /** the sink for an entry, given its precomputed fold key (when no read-time rules apply) */
  sink?: ((h: Hit, k: Known) => boolean) | undefined;
  /** the flag (IS_ERROR, IS_FAILING) every record the filter keeps has */
  requires?: number | undefined;
  /** the filter is that flag and nothing else */
  bare?: boolean | undefined;
  /**
   * The query's noise rules when every one is built-in: per rule in order, its id and its bit in
   * MatchIndex.noise; a hidden entry counts into `hits` under the first rule that matches, as
   * noise.ts's hider counts.
   */
  noise?: { rules: ReadonlyArray<{ id: string; bit: number }>; hits: Record<string, number> } | undefined;
}

/** ordinals between two looks at the clock in the index's part */
const BLOCK = 2048;

export async function scanIndexed(
  reader: StoreReader,
  idx: MatchIndex,
  spec: ScanSpec & { sink: NonNullable<ScanSpec['sink']> },
  budget: ScanBudget,
  use: EntryUse = {},
): Promise<ScanResult> {
  const end = spec.to ?? Infinity;
  const total: ScanResult = { hits: [], matched: 0, hidden: 0, scanned: 0, missed: 0, next: spec.from, atEnd: false, stopped: false };
  let pos = spec.from;
  let caughtUp = false;
  for (;;) {
    // the ring's tail now: entries below it were overwritten (or cleared) and are never served
    const tail = reader.tailOrd(spec.kind);
    idx.prune(tail);
    // What the ring overwrote since the caller's cursor is counted missed here, as a scan counts
    // it, without one: a sliced scan of a range the ring no longer holds read nothing but still
    // yielded, and the scan worker's background catch-up ran in between (0.2-3.5 ms at half).
    // (counted up to the tail even past `to`, as the ring's reader counts it for a scan)
    if (pos < tail) {
      total.missed += tail - pos;
      pos = total.next = Math.min(tail, end);
    }
    const remaining = spec.maxScan - total.scanned;
    if (pos >= end) {
      total.atEnd = true;
      break;
    }
    if (remaining <= 0) {
      total.atEnd = pos >= reader.latestOrd(spec.kind);
      break;
    }
    if (!caughtUp && pos >= idx.to) {
      // What was committed since the last background catch-up, now that the read got this far; a
      // remainder is scanned below. A caller behind a flood that stops before (its bounds, or a
      // full fold) never pays for it: at half the maximum ingest that catch-up was 1-4 ms of every
      // such call, for records it did not reach (issue 17).
      caughtUp = true;
      idx.catchUp(performance.now() + SLICE_MS);
      continue;
    }
    if (pos >= idx.from && pos < idx.to) {
      // a writer moved the tail since the prune above: the loop's top prunes and counts it missed
      if (reader.tailOrd(spec.kind) > pos) continue;
      // bounded by the entries it examines, not the ordinals it passes (see fromIndex)
      const segEnd = Math.min(idx.to, end);
      const r = fromIndex(reader, idx, spec, pos, segEnd, budget, use, remaining);
      total.matched += r.matched;
      total.hidden += r.hidden;
      total.scanned += r.scanned;
      pos = total.next = r.next;
      if (r.stopped) {
        total.stopped = true;
        break;
      }
      if (r.next < segEnd) break;
      continue;
    }
    // before the index's coverage (up to where it starts), or after it (to the end)
    const segTo = pos < idx.from ? Math.min(idx.from, end) : spec.to;
    const r = await scanSliced(reader, { ...spec, from: pos, ...(segTo !== undefined ? { to: segTo } : {}), maxScan: remaining }, budget);
    total.matched += r.matched;
    total.hidden += r.hidden;
    total.scanned += r.scanned;
    total.missed += r.missed;
    pos = total.next = r.next;
    if (r.stopped) {
      total.stopped = true;
      break;
    }
    if (segTo === spec.to) {
      total.atEnd = r.atEnd;
      break;
    }
    if (!r.atEnd) break;
  }
  return total;
}

interface Part {
  matched: number;
  hidden: number;
  scanned: number;
  next: number;
  stopped: boolean;
}

/**
 * Ordinals [from, to) out of the index, checking the call's budget every BLOCK ordinals, and
 * examining at most `maxEntries` entries: what the read's `maxScan` bounds is the records it
 * examines, and here those are the index's entries — the ordinals between them were never looked
 * at. Counted in ordinals (as it was), a once-a-second `observe errors` at half the maximum ingest
 * covered ~20 000 of the ~150 000 logs each second brought, and its cursor fell behind the ring
 * (issue 17). `scanned` is the entries examined; the wall-clock budget still counts ordinals.
 */
function fromIndex(reader: StoreReader, idx: MatchIndex, s: ScanSpec & { sink: NonNullable<ScanSpec['sink']> }, from: number, to: number, budget: ScanBudget, use: EntryUse, maxEntries: number): Part {
  const out: Part = { matched: 0, hidden: 0, scanned: 0, next: from, stopped: false };
  const scope = s.scope;
  const byHeader = scope !== undefined && headerOnly(scope) ? scope.tabs : undefined;
  const byPage = scope !== undefined && !headerOnly(scope) ? scope : undefined;
  const allOf = s.allOf;
  const reads = s.reads ?? readRulesOf(reader);
  // the columns answer everything the query asks: no record is decoded here
  const sink = use.sink;
  const noise = use.noise;
  const bare = sink !== undefined && use.bare === true && use.requires !== undefined && !reads && !byPage && !allOf?.length && (!s.hide || noise !== undefined);
  // without read-time rules (which could change a level or status) a record the filter rejects for
  // not being an error / failing request is known from the flags, and need not be read back
  const needFlag = !reads ? use.requires : undefined;
  const end = idx.endAt;
  let i = idx.seek(from);
  let pos = from;
  const cands: number[] = [];
  let examined = 0;
  while (pos < to) {
    let blockEnd = Math.min(to, pos + BLOCK);
    // the entry the bound stopped before: the read goes on from it
    let bounded = false;
    cands.length = 0;
    for (; i < end && idx.ord(i) < blockEnd; i++) {
      if (examined >= maxEntries) {
        blockEnd = idx.ord(i);
        bounded = true;
        break;
      }
      examined++;
      const tab = idx.tab(i);
      if (s.tab !== undefined && tab !== s.tab) continue;
      if (byHeader && !byHeader.includes(tab)) continue;
      if (needFlag !== undefined && (idx.flags(i) & needFlag) === 0) continue;
      if (bare) {
        if (noise && hiddenBy(noise, idx.noise(i))) {
          out.hidden++;
          continue;
        }
        const h: Hit = { seq: idx.seq(i), ord: idx.ord(i), kind: idx.kind, recvTime: idx.recvTime(i), clientTime: idx.clientTime(i), tab, rec: UNREAD, at: idx.pos(i) };
        if (!sink!(h, { key: idx.key(i), severity: idx.severity(i) })) return stop(out, examined, h.ord);
        out.matched++;
      } else cands.push(i);
    }
    if (cands.length) {
      const recs = readBack(reader, idx, cands, blockEnd);
      for (let c = 0; c < cands.length; c++) {
        const e = cands[c]!;
        const stored = recs[c]!;
        if (allOf && !allOf.every((b) => payloadHas(stored.payload, b))) continue;
        // with read-time rules the record is redacted: a copy of its own, as a scan makes
        const rec = reads ? redactRead(reads, idx.kind, decode(stored.payload)) : decode(stored.payload);
        if (byPage && !inScope(byPage, idx.kind, stored.tab, rec)) continue;
        const h: Hit = { seq: stored.seq, ord: stored.ord, kind: idx.kind, recvTime: stored.recvTime, clientTime: stored.clientTime, tab: stored.tab, rec };
        if (s.match && !s.match(rec, h)) continue;
        if (s.hide?.(rec)) {
          out.hidden++;
          continue;
        }
        if (!(sink && !reads ? sink(h, { key: idx.key(e), severity: idx.severity(e) }) : s.sink(h))) return stop(out, examined, h.ord);
        out.matched++;
      }
    }
    out.scanned = examined;
    budget.add(blockEnd - pos);
    pos = out.next = blockEnd;
    if (bounded || budget.exhausted) break;
  }
  return out;
}

function hiddenBy(noise: NonNullable<EntryUse['noise']>, bits: number): boolean {
  if (bits === 0) return false;
  for (const r of noise.rules) {
    if (bits & (1 << r.bit)) {
      noise.hits[r.id] = (noise.hits[r.id] ?? 0) + 1;
      return true;
    }
  }
  return false;
}

function stop(out: Part, examined: number, ord: number): Part {
  out.scanned = examined;
  out.next = ord;
  out.stopped = true;
  return out;
}

/**
 * The records of entries `cands` (in ordinal order, all below `before`), read in one pass over the
 * ring: a header test per record between them, a copy of the ones named.
 */
function readBack(reader: StoreReader, idx: MatchIndex, cands: readonly number[], before: number): Array<RecordHeader & { payload: Buffer }> {
  const first = idx.ord(cands[0]!);
  let j = 0;
  const filter = (v: RecordHeader): boolean => {
    while (j < cands.length && idx.ord(cands[j]!) < v.ord) j++;
    return j < cands.length && idx.ord(cands[j]!) === v.ord;
  };
  const r = reader.read(idx.kind, first, cands.length, { filter, maxScan: before - first });
  if (r.missed > 0 || r.records.length !== cands.length) throw new IndexLapped();
  return r.records.map((x, c) => {
    if (x.ord !== idx.ord(cands[c]!)) throw new IndexLapped();
    return { ...x, payload: Buffer.from(x.payload.buffer, x.payload.byteOffset, x.payload.byteLength) };
  });
}

/** The record at `ord`, read back for a hit the fold took from the index; IndexLapped when the ring no longer holds it. */
export function readOne(reader: StoreReader, kind: number, ord: number, at?: number): Uint8Array {
  const r = reader.read(kind, ord, 1, { maxScan: 1, ...(at !== undefined ? { at } : {}) });
  const rec = r.records[0];
  if (r.missed > 0 || !rec || rec.ord !== ord) throw new IndexLapped();
  return rec.payload;
}
