/**
 * The protocol between the ingest workers (writers) and the main thread (reader) for the
 * telemetry store. Only slot numbers, offsets and the one sizing function live here; both
 * sides import this module and nothing else decides where a byte goes.
 *
 * The store is four kinds of SharedArrayBuffer (see StoreBuffers in store.ts):
 *
 * control (one):
 *   byte  0  i32 lock          0 = free, else the holder id (worker threadId, or MAIN_HOLDER)
 *   byte  4  i32 gen           seqlock: odd while a writer moves tails (window A) or publishes
 *                              heads + counters (window B); even during the memcpy between
 *   byte  8  i64 nextSeq       global seq of the next record (writers only, under the lock)
 *   byte 16  i64 committedSeq  records with seq >= committedSeq are invisible to readers
 *   byte 24 + 32*k            ring k: i64 headPos | i64 headOrd | i64 tailPos | i64 tailOrd
 *
 * ring k (one per kind; capacity a multiple of 8). Positions are logical 64-bit byte offsets
 * that only grow; physical = pos % capacity. Each record is 8-byte aligned and never straddles
 * the physical end:
 *
 *   +0  u32 total      header + payload, padded to 8
 *   +4  u32 payloadLen PAD_MARKER = skip to the physical start (total = bytes skipped)
 *   +8  f64 seq        global, one contiguous range per commit
 *   +16 f64 ord        per-ring ordinal 0,1,2,... contiguous
 *   +24 f64 recvTime   server epoch ms
 *   +32 f64 clientTime NaN when unknown
 *   +40 i32 tab        -1 = none
 *   +44 u16 kind
 *   +46 u16 flags      what the writer knew of the record (REC_*, below); 0 = nothing
 *   +48 payload bytes (a JSON object, or a msgpack map with REC_MSGPACK), then zero to 7 bytes of padding
 *
 * index k (one per ring): f64[idxCap]; every 64th ordinal stores its logical pos at
 * slot floor(ord / 64) % idxCap. Entries are hints: a reader checks the header's ord and that
 * the tail has not passed the pos before trusting one.
 *
 * counters (one): i64 per (kind, field), kind-major, fields in COUNTER_FIELDS order.
 */

/**
 * Why a record the server took in was not stored; the position is the counter slot (the layout is
 * built per process, so the list may change between versions, never within one).
 * Only reasons that really drop received records are here, so received = stored + rejected +
 * dropped balances: a shed batch is nacked and resent (never received), a poisoned item is counted
 * per item (/health pool.poisoned: its records were never decoded), and a record whose redaction
 * failed is stored with its metadata (/health redaction.redaction_failed).
 */
export const DROP_REASONS = ['duplicate', 'record_too_large'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export const BASE_COUNTERS = ['received', 'stored', 'rejected', 'evicted', 'cleared'] as const;
export type BaseCounter = (typeof BASE_COUNTERS)[number];

/** Counter slots per kind: the base counters, then one dropped counter per reason. */
export const COUNTER = {
  received: 0,
  stored: 1,
  rejected: 2,
  evicted: 3,
  cleared: 4,
  droppedBase: BASE_COUNTERS.length,
} as const;
export const COUNTER_STRIDE = BASE_COUNTERS.length + DROP_REASONS.length;

export function droppedSlot(reason: DropReason): number {
  return COUNTER.droppedBase + DROP_REASONS.indexOf(reason);
}

// control: Int32Array indexes
export const LOCK = 0;
export const GEN = 1;
// control: BigInt64Array indexes
export const NEXT_SEQ = 1;
export const COMMITTED_SEQ = 2;
export const RING_BASE = 3;
export const RING_WORDS = 4;
export const HEAD_POS = 0;
export const HEAD_ORD = 1;
export const TAIL_POS = 2;
export const TAIL_ORD = 3;

export function ringWord(kind: number, field: number): number {
  return RING_BASE + kind * RING_WORDS + field;
}

// record header: byte offsets
export const H_TOTAL = 0;
export const H_PAYLOAD_LEN = 4;
export const H_SEQ = 8;
export const H_ORD = 16;
export const H_RECV_TIME = 24;
export const H_CLIENT_TIME = 32;
export const H_TAB = 40;
export const H_KIND = 44;
export const H_FLAGS = 46;
export const HEADER_BYTES = 48;

/**
 * Header flags: what an ingest worker knew of a record when it stored it, so a read for errors or
 * failing requests tests two header bits instead of searching every record's bytes (and decoding
 * the ones a byte search cannot rule out). REC_CLASSIFIED says the other bits are meaningful; a
 * record without it (a writer that did not classify) is tested as before, by its bytes.
 */
export const REC_ERROR = 1;
export const REC_FAILING = 2;
export const REC_CLASSIFIED = 0x8000;
/**
 * The payload is the record's msgpack map as its producer sent it (process.ts, "verbatim"), not
 * JSON. The payload's first byte says the same (`{` is never a msgpack map's); this bit lets a
 * byte filter pick its needle's form before it looks at the bytes (query/needles.ts).
 */
export const REC_MSGPACK = 4;

export const PAD_MARKER = 0xffffffff;
export const ALIGN = 8;
export const INDEX_STRIDE = 64;
/** The lock holder id the main thread uses; worker threadIds are >= 1 and 0 means free. */
export const MAIN_HOLDER = -1;
/** Smallest ring that still holds one empty record next to a PAD marker. */
export const MIN_RING_BYTES = 64;

// Not `(n + 7) & ~7`: ring sizes reach 4 GiB, past the 32-bit range of bitwise operators.
export function align8(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}

export function framedSize(payloadLen: number): number {
  return align8(HEADER_BYTES + payloadLen);
}

export interface StoreSizes {
  controlBytes: number;
  countersBytes: number;
  ringCapacities: number[];
  indexSlots: number[];
}

/** The one place the store is sized; allocateStore and every view derive from it. */
export function storeSizes(ringBytes: readonly number[]): StoreSizes {
  const ringCapacities = ringBytes.map((b) => {
    if (!Number.isSafeInteger(b) || b < MIN_RING_BYTES) throw new RangeError(`ring size ${b} must be an integer >= ${MIN_RING_BYTES}`);
    return align8(b);
  });
  return {
    controlBytes: (RING_BASE + ringBytes.length * RING_WORDS) * 8,
    countersBytes: ringBytes.length * COUNTER_STRIDE * 8,
    ringCapacities,
    // A record is >= 48 bytes, so live ordinals span <= capacity/48 + 1; two spare slots keep the
    // oldest live entry from being overwritten by the newest.
    indexSlots: ringCapacities.map((c) => Math.ceil(c / (INDEX_STRIDE * HEADER_BYTES)) + 2),
  };
}
