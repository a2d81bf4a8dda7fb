/**
 * What observe's filtered reads need, kept as records are ingested instead of found again on every
 * call: for one kind and one byte pre-filter (errors, failing requests), every record that passes
 * it, decoded once, with its fold key and severity. A profile of observe({what:"errors"}) at
 * 20 000 events/s, one call a second, put ~11 ms of the scan worker's time per call in walking
 * ~10 000 logs (the byte search, copies, JSON.parse of the errors, fold keys); from the index a
 * call folds only the errors it names, and each record is decoded once however many clients read.
 *
 * What the index holds is independent of who asks: noise rules, tab filters, read-time redaction
 * rules and the decoded filter are applied per query (fold-query.ts), on the few records here.
 *
 * Correct under wrap-around: ordinals are the ring's own sequence numbers, so an entry below the
 * ring's tail was overwritten (or cleared) and is never served — the query reads the tail first
 * and counts what lies below it as missed, as a scan would. Coverage is a contiguous range of
 * ordinals read in full; a read the writers lapped restarts coverage past the loss. Bounded by
 * bytes: the oldest entries go first and coverage starts after them (older ranges are scanned).
 */
import type { RecordHeader, StoreReader } from '../shm/index.js';
import { foldKey, severity, type Severity } from './fold-key.js';
import type { Hit, Rec } from './scan.js';

/** a record's header as the ring gave it, its text, and what every read of it needs */
export interface IndexEntry extends RecordHeader {
  /** the stored JSON: byte needles (url, connection_id) and read-time redaction start from it */
  text: string;
  /** decoded once, shared by every query: never mutated (a query that redacts parses `text` again) */
  rec: Rec;
  key: string;
  severity: Severity;
}

/**
 * JSON text held per index; past it the oldest entries go (~5 000 errors of the bench's size). The
 * decoded records beside it cost several times the text: at 8 MiB the two indexes held ~120 MB at
 * half load (bench `half`: 598 vs 478 MB peak without them), over the memory gate; 2 MiB covers
 * the seconds a caller polling once a second reads, and older ranges are scanned as before.
 */
export const MAX_INDEX_BYTES = 2 * 1024 * 1024;
/** records per ring read while catching up, as a scan reads them */
const CHUNK = 128;

export class MatchIndex {
  /** ordinals [from, to) were all read: the entries are exactly those of them that pass the needles */
  from: number;
  to: number;
  private entries: IndexEntry[] = [];
  /** entries before this one were dropped (overwritten or over the byte bound) */
  private first = 0;
  private bytes = 0;
  /** when a query last used it: an unused index stops catching up and is dropped */
  lastUsed = performance.now();

  constructor(
    private readonly reader: StoreReader,
    readonly kind: number,
    readonly anyOf: readonly Buffer[],
    private readonly maxBytes = MAX_INDEX_BYTES,
  ) {
    // from now on: the records already stored are read by scans, as before there was an index
    this.from = this.to = reader.latestOrd(kind);
  }

  get size(): number {
    return this.entries.length - this.first;
  }

  /** Reads what was committed since the last catch-up, until `deadline` (performance.now()). */
  catchUp(deadline: number): void {
    const needles = this.anyOf;
    const filter = (v: { has(b: Uint8Array): boolean }): boolean => needles.some((b) => v.has(b));
    for (;;) {
      const r = this.reader.read(this.kind, this.to, CHUNK, { filter, maxScan: CHUNK * 8 });
      if (r.missed > 0) {
        // lapped: everything held so far lies below the new tail
        this.entries = [];
        this.first = 0;
        this.bytes = 0;
        this.from = this.to + r.missed;
      }
      for (const rec of r.records) {
        const text = Buffer.from(rec.payload.buffer, rec.payload.byteOffset, rec.payload.byteLength).toString('utf8');
        const obj = JSON.parse(text) as Rec;
        this.entries.push({ seq: rec.seq, ord: rec.ord, kind: rec.kind, recvTime: rec.recvTime, clientTime: rec.clientTime, tab: rec.tab, text, rec: obj, key: foldKey(rec.kind, obj), severity: severity(rec.kind, obj) });
        this.bytes += text.length;
      }
      this.to = r.next;
      this.trim();
      if (r.atEnd || performance.now() >= deadline) break;
    }
    this.prune(this.reader.tailOrd(this.kind));
  }

  /** Drops what the ring no longer holds. */
  prune(tail: number): void {
    if (tail <= this.from) return;
    while (this.first < this.entries.length && this.entries[this.first]!.ord < tail) this.dropFirst();
    this.from = tail;
    if (this.to < tail) this.to = tail;
    this.compact();
  }

  /** The index of the first entry at or after `ord`. */
  seek(ord: number): number {
    let lo = this.first;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.ord < ord) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  at(i: number): IndexEntry | undefined {
    return this.entries[i];
  }

  private trim(): void {
    if (this.bytes <= this.maxBytes) return;
    while (this.bytes > this.maxBytes && this.first < this.entries.length) {
      const e = this.dropFirst();
      this.from = e.ord + 1;
    }
    this.compact();
  }

  private dropFirst(): IndexEntry {
    const e = this.entries[this.first]!;
    this.entries[this.first++] = undefined as unknown as IndexEntry;
    this.bytes -= e.text.length;
    return e;
  }

  private compact(): void {
    if (this.first > 4096 && this.first * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.first);
      this.first = 0;
    }
  }
}

/** A hit from an entry: the shared decoded record, or `rec` when the query redacted a copy. */
export function hitOf(e: IndexEntry, rec: Rec): Hit {
  return { seq: e.seq, ord: e.ord, kind: e.kind, recvTime: e.recvTime, clientTime: e.clientTime, tab: e.tab, rec };
}

/** at most this many indexes (kind × pre-filter): observe and the summary use two */
const MAX_INDEXES = 8;
/** how often the indexes catch up in the background, and the work allowed each time */
export const TICK_MS = 25;
const TICK_WORK_MS = 4;
/** an index no query used for this long stops catching up and is dropped (its memory with it) */
export const IDLE_MS = 60_000;

/**
 * The scan worker's indexes: made by the first query that can use one, kept current between
 * queries by a timer (so a query finds only the last few milliseconds to read), dropped when
 * unused. One per kind and pre-filter, shared by every client.
 */
export class ReadIndexes {
  private readonly map = new Map<string, MatchIndex>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly reader: StoreReader,
    private readonly o: { tickMs?: number; idleMs?: number; maxBytes?: number; background?: boolean } = {},
  ) {}

  /** The index for this kind and pre-filter, made on first use; undefined when there are too many. */
  get(kind: number, anyOf: readonly Buffer[]): MatchIndex | undefined {
    const key = `${kind}|${anyOf.map((b) => b.toString('hex')).join(',')}`;
    let idx = this.map.get(key);
    if (!idx) {
      if (this.map.size >= MAX_INDEXES) return undefined;
      idx = new MatchIndex(this.reader, kind, anyOf, this.o.maxBytes);
      this.map.set(key, idx);
    }
    idx.lastUsed = performance.now();
    if (this.o.background !== false) this.ticking();
    return idx;
  }

  get count(): number {
    return this.map.size;
  }

  /** One background step: every index catches up, within a bounded time; unused ones are dropped. */
  tick(): void {
    const now = performance.now();
    for (const [key, idx] of this.map) {
      if (now - idx.lastUsed > (this.o.idleMs ?? IDLE_MS)) {
        this.map.delete(key);
        continue;
      }
      try {
        idx.catchUp(now + TICK_WORK_MS);
      } catch {
        // a ring the reader finds corrupt: queries scan it and report that themselves
        this.map.delete(key);
      }
    }
    if (this.map.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private ticking(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.o.tickMs ?? TICK_MS);
    // the worker lives for its port, not for this timer
    this.timer.unref();
  }
}
