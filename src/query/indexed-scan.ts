/**
 * A sliced scan (sliced-scan.ts) that takes what an index covers from the index: the range before
 * its coverage and after it are scanned as always, the covered middle is read from the entries,
 * with the same tests in the same order (tab, byte needles, read-time rules, page scope, filter,
 * noise, sink) and the same bounds (records examined, the call's wall-clock budget). So the answer
 * is the scan's answer, whichever part the index held — the tests prove it on seeded data.
 */
import type { StoreReader } from '../shm/index.js';
import { hitOf, type IndexEntry, type MatchIndex } from './match-index.js';
import { redactRead, readRulesOf } from './read-rules.js';
import { decode, type ScanResult, type ScanSpec } from './scan.js';
import { type ScanBudget, scanSliced, SLICE_MS } from './sliced-scan.js';
import { headerOnly, inScope } from './tab-scope.js';

/** ordinals between two looks at the clock in the index's part */
const BLOCK = 2048;

export async function scanIndexed(
  reader: StoreReader,
  idx: MatchIndex,
  spec: ScanSpec & { sink: NonNullable<ScanSpec['sink']> },
  budget: ScanBudget,
  /** the sink for an entry, given its precomputed fold key (left out: `spec.sink`) */
  sinkEntry?: (h: Parameters<NonNullable<ScanSpec['sink']>>[0], e: IndexEntry) => boolean,
): Promise<ScanResult> {
  // what was committed since the last background catch-up; a remainder is scanned below
  idx.catchUp(performance.now() + SLICE_MS);
  const total: ScanResult = { hits: [], matched: 0, hidden: 0, scanned: 0, missed: 0, next: spec.from, atEnd: false, stopped: false };
  const end = spec.to ?? Infinity;
  let pos = spec.from;
  for (;;) {
    // the ring's tail now: entries below it were overwritten (or cleared) and are never served;
    // a scan of what lies before the coverage counts them missed, once
    idx.prune(reader.tailOrd(spec.kind));
    const remaining = spec.maxScan - total.scanned;
    if (pos >= end) {
      total.atEnd = true;
      break;
    }
    if (remaining <= 0) {
      total.atEnd = pos >= reader.latestOrd(spec.kind);
      break;
    }
    if (pos >= idx.from && pos < idx.to) {
      // a writer moved the tail since the prune above: what it passed is missed, as a scan misses it
      const tail = reader.tailOrd(spec.kind);
      if (pos < tail) {
        total.missed += tail - pos;
        pos = tail;
        total.next = pos;
        continue;
      }
      const segEnd = Math.min(idx.to, end, pos + remaining);
      const r = fromIndex(reader, idx, spec, pos, segEnd, budget, sinkEntry);
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

/** Ordinals [from, to) out of the index, checking the call's budget every BLOCK ordinals. */
function fromIndex(
  reader: StoreReader,
  idx: MatchIndex,
  s: ScanSpec & { sink: NonNullable<ScanSpec['sink']> },
  from: number,
  to: number,
  budget: ScanBudget,
  sinkEntry: ((h: Parameters<NonNullable<ScanSpec['sink']>>[0], e: IndexEntry) => boolean) | undefined,
): Part {
  const out: Part = { matched: 0, hidden: 0, scanned: 0, next: from, stopped: false };
  const scope = s.scope;
  const byHeader = scope !== undefined && headerOnly(scope) ? scope.tabs : undefined;
  const byPage = scope !== undefined && !headerOnly(scope) ? scope : undefined;
  const allOf = s.allOf?.map((b) => b.toString('utf8'));
  const reads = s.reads ?? readRulesOf(reader);
  let i = idx.seek(from);
  let pos = from;
  while (pos < to) {
    const blockEnd = Math.min(to, pos + BLOCK);
    for (let e = idx.at(i); e !== undefined && e.ord < blockEnd; e = idx.at(++i)) {
      if (s.tab !== undefined && e.tab !== s.tab) continue;
      if (byHeader && !byHeader.includes(e.tab)) continue;
      if (allOf && !allOf.every((n) => e.text.includes(n))) continue;
      // with read-time rules the record is redacted: a copy of its own, never the shared one
      const rec = reads ? redactRead(reads, e.kind, decode(Buffer.from(e.text, 'utf8'))) : e.rec;
      if (byPage && !inScope(byPage, e.kind, e.tab, rec)) continue;
      const h = hitOf(e, rec);
      if (s.match && !s.match(rec, h)) continue;
      if (s.hide?.(rec)) {
        out.hidden++;
        continue;
      }
      if (!(sinkEntry && !reads ? sinkEntry(h, e) : s.sink(h))) {
        out.scanned += e.ord - pos;
        out.next = e.ord;
        out.stopped = true;
        return out;
      }
      out.matched++;
    }
    out.scanned += blockEnd - pos;
    budget.add(blockEnd - pos);
    pos = out.next = blockEnd;
    if (budget.exhausted) break;
  }
  return out;
}
