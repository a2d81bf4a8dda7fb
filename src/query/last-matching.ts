/**
 * The newest few records of a range that pass a header test, parsed from the end back: an error's
 * context is the handful of records just before it, not the whole range.
 */
import type { StoreReader, RecordHeader, RecordView, StoredRecord } from '../shm/index.js';
import { readRulesOf, redactRead } from './read-rules.js';
import { CHUNK, decode, type Hit, type Rec } from './scan.js';
import { viewHas } from './needles.js';

export interface LastSpec {
  kind: number;
  from: number;
  /** exclusive end ordinal (undefined: to the newest record) */
  to?: number;
  /** how many to return: the newest that qualify */
  n: number;
  maxScan: number;
  /** decided on the header alone, before any byte of the record is looked at */
  where: (h: RecordHeader) => boolean;
  /** any of these byte strings must occur (cheap, before JSON.parse) */
  anyOf?: Buffer[];
  /** the final word on a parsed candidate (the byte pre-filter may admit a few too many) */
  verify?: (rec: Rec) => boolean;
}

/**
 * The newest `n` records of a range that pass a header test, parsing from the end back only as
 * many as it takes. An error's context is the handful of records just before it, out of up to
 * `maxScan` in a busy ring: parsing them all to keep the last eight cost ~25 ms per error bundle
 * on the main thread.
 */
export function lastMatching(reader: StoreReader, s: LastSpec): Hit[] {
  // without a parsed check the newest n candidates are the answer; with one, keep a margin
  const keep = s.verify ? s.n * 4 : s.n;
  const candidates: StoredRecord[] = [];
  const filter = (v: RecordView): boolean => s.where(v) && (!s.anyOf || s.anyOf.some((b) => viewHas(v, b)));
  let ord = s.from;
  let scanned = 0;
  outer: while (scanned < s.maxScan && (s.to === undefined || ord < s.to)) {
    const r = reader.read(s.kind, ord, CHUNK, { filter, maxScan: Math.min(CHUNK * 8, s.maxScan - scanned) });
    scanned += r.scanned;
    for (const rec of r.records) {
      if (s.to !== undefined && rec.ord >= s.to) break outer;
      candidates.push(rec);
      if (candidates.length > keep * 2) candidates.splice(0, candidates.length - keep);
    }
    if (r.atEnd || r.next === ord) break;
    ord = r.next;
  }
  const out: Hit[] = [];
  const reads = readRulesOf(reader);
  for (let i = candidates.length - 1; i >= 0 && out.length < s.n; i--) {
    const c = candidates[i]!;
    const rec = reads ? redactRead(reads, c.kind, decode(c.payload)) : decode(c.payload);
    if (s.verify && !s.verify(rec)) continue;
    out.push({ seq: c.seq, ord: c.ord, kind: c.kind, recvTime: c.recvTime, clientTime: c.clientTime, tab: c.tab, rec });
  }
  return out.reverse();
}
