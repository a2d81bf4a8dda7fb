/**
 * Bounded scans over the rings for tool calls. The main thread must stay responsive (push
 * notifications share it), so every call examines at most `maxScan` records, decodes only what
 * passes a cheap byte prefilter, and hands back a cursor to continue.
 */
import type { Kind } from '../domain/kinds.js';
import type { RedactionEngine } from '../domain/redaction/index.js';
import type { IngestedRecordOf } from '../domain/wire/schemas.js';
import { REC_CLASSIFIED, type StoreReader, type RecordHeader, type RecordView } from '../shm/index.js';
import { readStoredRecord } from '../domain/wire/stored-record.js';
import { viewHas } from './needles.js';
import { readRulesOf, redactRead } from './read-rules.js';
import { headerOnly, inScope, type TabScope } from './tab-scope.js';

/**
 * A stored record read back, of any kind: every field any kind has, each typed as the union of
 * what the kinds that have it store. Our own bytes, validated at ingest: no coercion needed.
 */
type AnyKey = { [K in Kind]: keyof IngestedRecordOf<K> }[Kind];
type FieldOf<K extends Kind, F> = F extends keyof IngestedRecordOf<K> ? IngestedRecordOf<K>[F] : never;
export type Rec = { readonly [F in AnyKey]?: { [K in Kind]: FieldOf<K, F> }[Kind] };

export interface Hit extends RecordHeader {
  rec: Rec;
  /** where the record starts in its ring, when it came from an index's columns unread: read back from there */
  at?: number;
}

export interface ScanSpec {
  kind: number;
  from: number;
  limit: number;
  maxScan: number;
  /** any of these byte strings must occur in the payload (cheap, before a decode; needles.ts) */
  anyOf?: Buffer[];
  /**
   * with anyOf: the header flag (shm/layout.ts REC_*) that stands for it in a record its writer
   * classified, which is then tested by that bit instead of its bytes (filter.ts prefilter)
   */
  anyFlag?: number | undefined;
  /** all of these must occur */
  allOf?: Buffer[];
  match?: (rec: Rec, h: RecordHeader) => boolean;
  /** records hidden (noise) are counted, not returned */
  hide?: (rec: Rec) => boolean;
  tab?: number | undefined;
  /** the caller's tab filter (tab-scope.ts): records of other tabs are skipped, not counted */
  scope?: TabScope | undefined;
  /** stop scanning after this many ms (checked between chunks): the main thread serves pushes too */
  budgetMs?: number;
  /** stop before this ordinal (a page of a range already answered) */
  to?: number;
  /**
   * Matched records go here instead of into `hits`, so a caller that folds keeps a bounded map,
   * not every record. Returning false stops the scan before that record (the map is full).
   */
  sink?: (h: Hit) => boolean;
  /**
   * The user rules each decoded record gets before `match`/`hide` (read-rules.ts): the scan
   * worker passes those its query brought; left out, the rules bound to the reader (main).
   */
  reads?: RedactionEngine | undefined;
}

export interface ScanResult {
  hits: Hit[];
  matched: number;
  hidden: number;
  scanned: number;
  missed: number;
  /** ordinal to continue from: after the last returned hit, or after the scan when none */
  next: number;
  /** true when the scan reached the newest record (or `to`) */
  atEnd: boolean;
  /** true when the sink refused a record; `next` is that record */
  stopped?: boolean;
}

/** records per read of the ring: large enough to amortize a read, small enough to check the clock often */
export const CHUNK = 128;

/** a stored record, JSON or verbatim msgpack (stored-record.ts) */
export function decode(payload: Uint8Array): Rec {
  return readStoredRecord(payload) as Rec;
}

/** The `anyOf` pre-filter: by the header flag when the record's writer classified it, else by its bytes. */
export function passesAny(v: RecordView, anyOf: readonly Uint8Array[], anyFlag: number | undefined): boolean {
  if (anyFlag !== undefined && (v.flags & REC_CLASSIFIED) !== 0) return (v.flags & anyFlag) !== 0;
  return anyOf.some((b) => viewHas(v, b));
}

export function scan(reader: StoreReader, s: ScanSpec): ScanResult {
  const hits: Hit[] = [];
  let matched = 0;
  let hidden = 0;
  let scanned = 0;
  let missed = 0;
  let ord = s.from;
  let next = s.from;
  let atEnd = false;
  let stopped = false;
  const scope = s.scope;
  const byHeader = scope !== undefined && headerOnly(scope) ? scope.tabs : undefined;
  const byPage = scope !== undefined && !headerOnly(scope) ? scope : undefined;
  const filter = s.anyOf || s.allOf || s.tab !== undefined || byHeader
    ? (v: RecordView) => {
        if (s.tab !== undefined && v.tab !== s.tab) return false;
        if (byHeader && !byHeader.includes(v.tab)) return false;
        if (s.allOf && !s.allOf.every((b) => viewHas(v, b))) return false;
        if (s.anyOf && !passesAny(v, s.anyOf, s.anyFlag)) return false;
        return true;
      }
    : undefined;
  const reads = s.reads ?? readRulesOf(reader);
  const deadline = s.budgetMs !== undefined ? performance.now() + s.budgetMs : Infinity;
  while (scanned < s.maxScan && performance.now() < deadline) {
    if (s.to !== undefined && ord >= s.to) {
      atEnd = true;
      break;
    }
    // read little past `to` (the tail may lie ahead of `ord`: then a few more records are read)
    const upTo = s.to !== undefined ? Math.max(1, s.to - ord) : Infinity;
    const r = reader.read(s.kind, ord, CHUNK, { ...(filter ? { filter } : {}), maxScan: Math.min(CHUNK * 8, s.maxScan - scanned, upTo) });
    missed += r.missed;
    // examined ordinals are contiguous up to r.next: those at or past `to` were not this scan's
    scanned += s.to !== undefined ? r.scanned - Math.max(0, Math.min(r.scanned, r.next - s.to)) : r.scanned;
    for (const rec of r.records) {
      if (s.to !== undefined && rec.ord >= s.to) break;
      const obj = reads ? redactRead(reads, rec.kind, decode(rec.payload)) : decode(rec.payload);
      if (byPage && !inScope(byPage, rec.kind, rec.tab, obj)) continue;
      if (s.match && !s.match(obj, rec)) continue;
      if (s.hide?.(obj)) {
        hidden++;
        continue;
      }
      if (s.sink) {
        if (!s.sink({ seq: rec.seq, ord: rec.ord, kind: rec.kind, recvTime: rec.recvTime, clientTime: rec.clientTime, tab: rec.tab, rec: obj })) {
          stopped = true;
          next = rec.ord;
          break;
        }
        matched++;
        continue;
      }
      matched++;
      if (hits.length < s.limit) {
        hits.push({ seq: rec.seq, ord: rec.ord, kind: rec.kind, recvTime: rec.recvTime, clientTime: rec.clientTime, tab: rec.tab, rec: obj });
        next = rec.ord + 1;
      }
    }
    if (stopped) break;
    if (s.sink || hits.length < s.limit) next = s.to !== undefined ? Math.min(r.next, s.to) : r.next;
    ord = r.next;
    if (r.atEnd || (s.to !== undefined && ord >= s.to)) {
      atEnd = true;
      break;
    }
  }
  return { hits, matched, hidden, scanned, missed, next, atEnd, stopped };
}
