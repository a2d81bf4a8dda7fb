/**
 * What observe's filtered reads need, kept as records are ingested instead of found again on every
 * call: for one kind and one byte pre-filter (errors, failing requests), every record that passes
 * it, with its header, fold key, severity and whether it is an error / a failing request.
 *
 * Measured (issue 17 item 3): the first index held each entry's text and decoded record, so 2 MiB
 * of it covered ~1.5 s of the bench's `heavy` errors. A caller whose cursor was older than that
 * scanned every log; a scan stops at its wall-clock bound after ~6 000 records, so under 20 000
 * events/s the cursor fell further behind on every call and never reached the index again (observe
 * p99 14–240 ms). Now an entry is ~50 bytes in typed columns (no objects for the GC to trace) and
 * the index follows the whole ring; the few records an answer shows are read back from the ring
 * (fold-query.ts), and a query with noise rules, tab patterns or read-time rules reads its
 * candidates back in one pass per block (indexed-scan.ts).
 *
 * What the index holds is independent of who asks: noise rules, tab filters, read-time redaction
 * rules and the decoded filter are applied per query, on the few records here.
 *
 * Correct under wrap-around: ordinals are the ring's own sequence numbers, so an entry below the
 * ring's tail was overwritten (or cleared) and is never served — the query reads the tail first
 * and counts what lies below it as missed, as a scan would. Coverage is a contiguous range of
 * ordinals read in full; a read the writers lapped restarts coverage past the loss. Bounded by
 * entries (MAX_INDEX_ENTRIES, ~3.3 MB of columns plus one string per distinct live fold key): past
 * it the oldest go and coverage starts after them (older ranges are scanned).
 */
import { REC_ERROR, REC_FAILING, type RecordView, type StoreReader } from '../shm/index.js';
import { foldKey, severity, type Severity } from './fold-key.js';
import { isError, isFailing } from './filter.js';
import { BUILTIN_NOISE, compileNoise, noiseField } from './noise.js';
import { decode, passesAny, type Rec } from './scan.js';
import { Cadence } from '../cadence.js';
import { kindName } from '../domain/kinds.js';
import { RecordSkim } from '../domain/wire/skim-record.js';
import { sigInFront } from '../domain/wire/stored-record.js';

/** the entry's record passes `what: "errors"` (filter.ts isError): the header flag's bit */
export const IS_ERROR = REC_ERROR;
/** the entry's record passes `what: "failing"` (filter.ts isFailing): the header flag's bit */
export const IS_FAILING = REC_FAILING;

/**
 * Every client starts with the built-in noise rules, so nearly every observe call hides with them:
 * the index tests them once per record (bit b: BUILTIN_NOISE[b] matches), and a query whose rules
 * are all built-in needs no record decoded. A user's own rule still reads the candidates back.
 */
const BUILTIN_TESTS = BUILTIN_NOISE.map(([field, pattern]) => ({ field, re: compileNoise(pattern) }));

function builtinNoiseBits(rec: Rec): number {
  let bits = 0;
  for (let b = 0; b < BUILTIN_TESTS.length; b++) {
    const v = noiseField(rec, BUILTIN_TESTS[b]!.field);
    if (typeof v === 'string' && BUILTIN_TESTS[b]!.re.test(v)) bits |= 1 << b;
  }
  return bits;
}

const skim = new RecordSkim();

/**
 * The fields an entry is made of, read from the record's bytes where they say enough (logs that
 * carry their signature, requests), else from the record decoded. Decoding each whole record was
 * ~70 % of the scan worker's allocation at 20 000 events/s and a scavenge every ~0.65 s; a read of
 * the few fields allocates ~12× less and takes half the time (PERFORMANCE.md, "Fifteenth pass").
 * Both give the same fields, so the same key, severity, flags and noise bits (match-index.test.ts).
 */
function entryFields(kind: number, payload: Uint8Array): Rec {
  switch (kindName(kind)) {
    case 'logs':
    case 'ext_logs':
      // without its signature in front a log's fold key is made from its message and stack: decode
      // it, and do not walk it first
      if (sigInFront(payload) !== undefined && skim.read(payload)) return skim.rec as Rec;
      break;
    case 'network':
    case 'network_bodies':
      if (skim.read(payload)) return skim.rec as Rec;
      break;
  }
  return decode(payload);
}

/**
 * Entries per index. The bench's `heavy` ring holds ~110 000 logs, ~22 000 of them errors; at the
 * bound an index is ~3.3 MB of columns and its keys (a log's is ~30 characters: the worker's
 * signature hash).
 */
export const MAX_INDEX_ENTRIES = 65_536;
const FIRST_CAPACITY = 1024;
/** records per ring read while catching up, as a scan reads them */
const CHUNK = 128;

/** Fold keys held once however many entries share them, released with the last of them. */
class KeyTable {
  private readonly ids = new Map<string, number>();
  private readonly strs: string[] = [];
  private readonly refs: number[] = [];
  private readonly free: number[] = [];

  intern(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.free.pop() ?? this.strs.length;
      this.ids.set(key, id);
      this.strs[id] = key;
      this.refs[id] = 0;
    }
    this.refs[id]!++;
    return id;
  }

  release(id: number): void {
    if (--this.refs[id]! > 0) return;
    this.ids.delete(this.strs[id]!);
    this.strs[id] = '';
    this.free.push(id);
  }

  key(id: number): string {
    return this.strs[id]!;
  }

  get size(): number {
    return this.ids.size;
  }

  clear(): void {
    this.ids.clear();
    this.strs.length = this.refs.length = this.free.length = 0;
  }
}

export class MatchIndex {
  /** ordinals [from, to) were all read: the entries are exactly those of them that pass the needles */
  from: number;
  to: number;
  /** when a query last used it: an unused index stops catching up and is dropped */
  lastUsed = performance.now();
  /** the last catch-up stopped at its deadline with records still to read */
  lagging = false;
  // entries are numbered from 0 as they come; live ones are [first, end), slot = number & mask
  private first = 0;
  private end = 0;
  private mask = FIRST_CAPACITY - 1;
  private ords = new Float64Array(FIRST_CAPACITY);
  /** where each record starts in its ring: an example is read back from there, without a walk */
  private poss = new Float64Array(FIRST_CAPACITY);
  private seqs = new Float64Array(FIRST_CAPACITY);
  private recvs = new Float64Array(FIRST_CAPACITY);
  private clients = new Float64Array(FIRST_CAPACITY);
  private tabs = new Int32Array(FIRST_CAPACITY);
  private keyIds = new Int32Array(FIRST_CAPACITY);
  private sevs = new Uint8Array(FIRST_CAPACITY);
  private flagBits = new Uint8Array(FIRST_CAPACITY);
  private noiseBits = new Uint8Array(FIRST_CAPACITY);
  private readonly keys = new KeyTable();

  constructor(
    private readonly reader: StoreReader,
    readonly kind: number,
    readonly anyOf: readonly Buffer[],
    /** the header flag standing for `anyOf` in a classified record (filter.ts prefilter) */
    readonly anyFlag: number | undefined,
    private readonly maxEntries = MAX_INDEX_ENTRIES,
  ) {
    // from now on: the records already stored are read by scans, as before there was an index
    this.from = this.to = reader.latestOrd(kind);
  }

  get size(): number {
    return this.end - this.first;
  }

  /** distinct fold keys held (each once, however many entries share it) */
  get keyCount(): number {
    return this.keys.size;
  }

  /** Reads what was committed since the last catch-up, until `deadline` (performance.now()); true when there was any. */
  catchUp(deadline: number, stop?: () => boolean): boolean {
    const from = this.to;
    const needles = this.anyOf;
    const flag = this.anyFlag;
    const filter = (v: RecordView): boolean => passesAny(v, needles, flag);
    for (;;) {
      const r = this.reader.read(this.kind, this.to, CHUNK, { filter, maxScan: CHUNK * 8 });
      if (r.missed > 0) {
        // lapped: everything held so far lies below the new tail
        this.dropAll();
        this.from = this.to + r.missed;
      }
      for (const rec of r.records) {
        const obj = entryFields(rec.kind, rec.payload);
        this.push(rec.ord, rec.pos, rec.seq, rec.recvTime, rec.clientTime, rec.tab, foldKey(rec.kind, obj), severity(rec.kind, obj), (isError(obj) ? IS_ERROR : 0) | (isFailing(obj) ? IS_FAILING : 0), builtinNoiseBits(obj));
      }
      this.to = r.next;
      this.lagging = !r.atEnd;
      if (r.atEnd || performance.now() >= deadline || stop?.() === true) break;
    }
    this.prune(this.reader.tailOrd(this.kind));
    return this.to !== from;
  }

  /** Drops what the ring no longer holds. */
  prune(tail: number): void {
    if (tail <= this.from) return;
    while (this.first < this.end && this.ords[this.first & this.mask]! < tail) this.dropFirst();
    this.from = tail;
    if (this.to < tail) this.to = tail;
  }

  /** The number of the first entry at or after `ord` (end when none). */
  seek(ord: number): number {
    let lo = this.first;
    let hi = this.end;
    while (lo < hi) {
      const mid = lo + ((hi - lo) >>> 1);
      if (this.ords[mid & this.mask]! < ord) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** entry numbers past the last one held */
  get endAt(): number {
    return this.end;
  }

  // the columns of entry `i` (first <= i < end); valid until the next catch-up or prune
  ord(i: number): number {
    return this.ords[i & this.mask]!;
  }
  pos(i: number): number {
    return this.poss[i & this.mask]!;
  }
  seq(i: number): number {
    return this.seqs[i & this.mask]!;
  }
  recvTime(i: number): number {
    return this.recvs[i & this.mask]!;
  }
  clientTime(i: number): number {
    return this.clients[i & this.mask]!;
  }
  tab(i: number): number {
    return this.tabs[i & this.mask]!;
  }
  key(i: number): string {
    return this.keys.key(this.keyIds[i & this.mask]!);
  }
  severity(i: number): Severity {
    return this.sevs[i & this.mask]! as Severity;
  }
  flags(i: number): number {
    return this.flagBits[i & this.mask]!;
  }
  /** which built-in noise rules match (bit b: BUILTIN_NOISE[b]) */
  noise(i: number): number {
    return this.noiseBits[i & this.mask]!;
  }

  private push(ord: number, pos: number, seq: number, recv: number, client: number, tab: number, key: string, sev: Severity, flags: number, noise: number): void {
    if (this.size >= this.maxEntries) this.from = this.dropFirst() + 1;
    if (this.size > this.mask) this.grow();
    const s = this.end++ & this.mask;
    this.ords[s] = ord;
    this.poss[s] = pos;
    this.seqs[s] = seq;
    this.recvs[s] = recv;
    this.clients[s] = client;
    this.tabs[s] = tab;
    this.keyIds[s] = this.keys.intern(key);
    this.sevs[s] = sev;
    this.flagBits[s] = flags;
    this.noiseBits[s] = noise;
  }

  /** Doubles the columns, keeping every live entry at its number. */
  private grow(): void {
    const cap = (this.mask + 1) * 2;
    const mask = cap - 1;
    const move = <T extends Float64Array | Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(cap);
      for (let i = this.first; i < this.end; i++) next[i & mask] = old[i & this.mask]!;
      return next;
    };
    this.ords = move(this.ords, (n) => new Float64Array(n));
    this.poss = move(this.poss, (n) => new Float64Array(n));
    this.seqs = move(this.seqs, (n) => new Float64Array(n));
    this.recvs = move(this.recvs, (n) => new Float64Array(n));
    this.clients = move(this.clients, (n) => new Float64Array(n));
    this.tabs = move(this.tabs, (n) => new Int32Array(n));
    this.keyIds = move(this.keyIds, (n) => new Int32Array(n));
    this.sevs = move(this.sevs, (n) => new Uint8Array(n));
    this.flagBits = move(this.flagBits, (n) => new Uint8Array(n));
    this.noiseBits = move(this.noiseBits, (n) => new Uint8Array(n));
    this.mask = mask;
  }

  /** Drops the oldest entry; returns its ordinal. */
  private dropFirst(): number {
    const s = this.first++ & this.mask;
    this.keys.release(this.keyIds[s]!);
    return this.ords[s]!;
  }

  private dropAll(): void {
    this.first = this.end = 0;
    this.keys.clear();
  }
}

/** at most this many indexes (kind × pre-filter): observe and the summary use two */
const MAX_INDEXES = 8;
/** how often the indexes catch up in the background, and the work allowed each time */
export const TICK_MS = 25;
const TICK_WORK_MS = 4;
/**
 * A tick that found nothing new doubles the wait before the next one, up to this: an index
 * kept for a minute after a read no longer wakes the scan worker 40 times a second while nothing
 * is ingested. When ingest resumes, the first tick is at most this late (a read meanwhile catches
 * up itself), and the pace is back to TICK_MS from there.
 */
export const TICK_IDLE_MAX_MS = 250;
/** an index no query used for this long stops catching up and is dropped (its memory with it) */
export const IDLE_MS = 60_000;

/**
 * The scan worker's indexes: made by the first query that can use one, kept current between
 * queries by a timer (so a query finds only the last few milliseconds to read), dropped when
 * unused. One per kind and pre-filter, shared by every client.
 */
export class ReadIndexes {
  private readonly map = new Map<string, MatchIndex>();
  private readonly cadence: Cadence;
  /** the wait the next tick that finds nothing doubles */
  private waitMs: number;

  constructor(
    private readonly reader: StoreReader,
    private readonly o: {
      tickMs?: number;
      idleMs?: number;
      maxEntries?: number;
      background?: boolean;
      workMs?: number;
      /**
       * true while a query waits for this thread: a background step ends at its next chunk, so the
       * query does not wait out a step's whole workMs (at half the maximum ingest the index is
       * behind, and queries waited up to 5.5 ms for a step to end; issue 17)
       */
      queryWaiting?: () => boolean;
    } = {},
  ) {
    this.waitMs = o.tickMs ?? TICK_MS;
    this.cadence = new Cadence(() => this.tick(), this.waitMs);
  }

  /** The index for this kind and pre-filter, made on first use; undefined when there are too many. */
  get(kind: number, anyOf: readonly Buffer[], anyFlag?: number): MatchIndex | undefined {
    const key = `${kind}|${anyOf.map((b) => b.toString('hex')).join(',')}`;
    let idx = this.map.get(key);
    if (!idx) {
      if (this.map.size >= MAX_INDEXES) return undefined;
      idx = new MatchIndex(this.reader, kind, anyOf, anyFlag, this.o.maxEntries);
      this.map.set(key, idx);
    }
    idx.lastUsed = performance.now();
    if (this.o.background !== false) {
      this.waitMs = this.cadence.fastMs;
      this.cadence.wake();
    }
    return idx;
  }

  get count(): number {
    return this.map.size;
  }

  /**
   * One background step: every index catches up, within a bounded time; unused ones are dropped.
   * Returns when to step again: soon while records arrive, later and later while none do, never
   * once no index is left (the Cadence's contract; the next read that makes one starts it again).
   */
  tick(): number | null {
    const now = performance.now();
    const workMs = this.o.workMs ?? TICK_WORK_MS;
    let moved = false;
    let lagging = false;
    for (const [key, idx] of this.map) {
      if (now - idx.lastUsed > (this.o.idleMs ?? IDLE_MS)) {
        this.map.delete(key);
        continue;
      }
      try {
        moved = idx.catchUp(now + workMs, this.o.queryWaiting) || moved;
        lagging ||= idx.lagging;
      } catch {
        // a ring the reader finds corrupt: queries scan it and report that themselves
        this.map.delete(key);
      }
    }
    if (this.map.size === 0) return null;
    const fast = this.cadence.fastMs;
    if (lagging) {
      // Records arrive faster than a step every TICK_MS reads them (issue 17's half profile: ~150 k
      // logs/s, the index fell the whole ring behind and was lapped, so every observe scanned and
      // decoded what it should have found in the columns: query 5-37 ms, p50 20-29 ms). Behind, a
      // step follows after as long as it worked: at most half a core, and only until caught up.
      this.waitMs = fast;
      return Math.max(1, workMs);
    }
    this.waitMs = moved ? fast : Math.min(Math.max(fast, TICK_IDLE_MAX_MS), this.waitMs * 2);
    return this.waitMs;
  }

  /** the wait before the next background step (-1: none pending); tests and diagnostics */
  get nextTickMs(): number {
    return this.cadence.delayMs;
  }

  stop(): void {
    this.cadence.close();
  }
}
