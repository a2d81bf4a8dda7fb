/**
 * The records a HAR export holds: `network` and `network_bodies` from given ordinals on (the
 * oldest buffered, or a checkpoint's), filtered, read in 2 ms slices so main keeps serving pushes
 * and calls while a large export reads. Each kind keeps only its newest records within the
 * export's caps as it goes (a 96 MiB bodies ring is never held whole); older matches are counted.
 */
import { kindId } from '../domain/kinds.js';
import type { StoreReader } from '../shm/index.js';
import type { Hit } from './scan.js';
import { ScanBudget, scanSliced } from './sliced-scan.js';
import type { TabScope } from './tab-scope.js';
import { textNeedle } from './needles.js';

export interface HarReadSpec {
  /** first ordinal per kind id (KINDS order), e.g. a checkpoint's or the tails */
  from: readonly number[];
  /** URL substring (case-sensitive, as observe's url filter) */
  url?: string | undefined;
  /** epoch ms: records captured earlier are left out */
  sinceMs?: number | undefined;
  /** only these tabs */
  tabs?: readonly number[] | undefined;
  /** the caller's tab filter */
  scope?: TabScope | undefined;
  maxEntries: number;
  maxBytes: number;
}

export interface HarRecords {
  network: Hit[];
  bodies: Hit[];
  /** matching records left behind by the caps while reading (the oldest) */
  dropped: number;
  /** records overwritten in the ring before they could be read */
  missed: number;
  /** true when the read stopped before the newest record (time bound) */
  partial: boolean;
}

/** records examined per kind at most; the rings hold fewer network records than this */
const MAX_SCAN = 1_000_000;
/** a whole export reads for at most this long on main (in 2 ms slices) */
const WALL_MS = 5000;

/** a record's weight against the byte cap before it is an entry: its text, roughly */
function weight(h: Hit): number {
  const r = h.rec as Record<string, unknown>;
  let n = 400;
  for (const v of [r.url, r.request_body, r.response_body]) if (typeof v === 'string') n += v.length;
  for (const hs of [r.request_headers, r.response_headers]) if (hs && typeof hs === 'object') for (const [k, v] of Object.entries(hs)) n += k.length + String(v).length + 24;
  return n;
}

export async function readHarRecords(reader: StoreReader, s: HarReadSpec): Promise<HarRecords> {
  const out: HarRecords = { network: [], bodies: [], dropped: 0, missed: 0, partial: false };
  const budget = new ScanBudget(WALL_MS, 0);
  const needle = s.url ? [textNeedle(s.url)] : undefined;
  for (const [name, into] of [
    ['network', out.network],
    ['network_bodies', out.bodies],
  ] as const) {
    const kind = kindId(name);
    let bytes = 0;
    let first = 0;
    const keep = (h: Hit): boolean => {
      into.push(h);
      bytes += weight(h);
      // drop the oldest while over a cap; an array index instead of shift() keeps this O(1)
      while (into.length - first > s.maxEntries || (bytes > s.maxBytes && into.length - first > 1)) {
        bytes -= weight(into[first]!);
        into[first++] = undefined as unknown as Hit;
        out.dropped++;
      }
      if (first > 4096 && first * 2 > into.length) {
        into.splice(0, first);
        first = 0;
      }
      return true;
    };
    const r = await scanSliced(
      reader,
      {
        kind,
        from: Math.max(s.from[kind] ?? 0, reader.tailOrd(kind)),
        limit: 0,
        maxScan: MAX_SCAN,
        ...(needle ? { allOf: needle } : {}),
        scope: s.scope,
        match: (rec, h) => {
          if (s.tabs && !s.tabs.includes(h.tab)) return false;
          if (s.url && !(typeof rec.url === 'string' && rec.url.includes(s.url))) return false;
          const t = typeof rec.ts === 'number' ? rec.ts : h.recvTime;
          return s.sinceMs === undefined || t >= s.sinceMs;
        },
        sink: keep,
      },
      budget,
    );
    if (first) into.splice(0, first);
    out.missed += r.missed;
    if (!r.atEnd) out.partial = true;
  }
  return out;
}
