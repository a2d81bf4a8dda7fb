/**
 * A FoldAnswer as it crosses from the scan worker to main. Structured clone rebuilds every group
 * and its example as nested objects, property by property: for the 500 groups of a busy
 * `observe errors` that was ~1 ms of main's time per call, and ~0.4 ms of the worker's (measured,
 * issue 17 item 3), on the thread that also serves every MCP request and push. Here the groups'
 * numbers travel as one transferred Float64Array, their keys as one array of strings, and only
 * the records an answer can show as objects; main rebuilds the same groups from them.
 */
import type { Group } from './fold.js';
import type { FoldAnswer } from './fold-query.js';
import type { Severity } from './fold-key.js';
import { UNREAD } from './indexed-scan.js';
import type { Rec } from './scan.js';

export interface PackedFold {
  fold: boolean;
  records: number;
  results: FoldAnswer['results'];
  noiseHits: FoldAnswer['noiseHits'];
  /** per group, in order: COLS numbers (see packFold) */
  cols: Float64Array;
  keys: string[];
  /** the records of the groups whose example was read, in group order */
  recs: Rec[];
}

const COLS = 12;

/** The packed answer and the buffer to transfer with it (postMessage's transfer list). */
export function packFold(a: FoldAnswer): { packed: PackedFold; transfer: ArrayBuffer[] } {
  const n = a.groups.length;
  const cols = new Float64Array(n * COLS);
  const keys = new Array<string>(n);
  const recs: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const g = a.groups[i]!;
    const h = g.example;
    const o = i * COLS;
    keys[i] = g.key;
    cols[o] = g.count;
    cols[o + 1] = g.firstTime;
    cols[o + 2] = g.lastTime;
    cols[o + 3] = g.lastSeq;
    cols[o + 4] = g.severity;
    cols[o + 5] = h.seq;
    cols[o + 6] = h.ord;
    cols[o + 7] = h.kind;
    cols[o + 8] = h.recvTime;
    cols[o + 9] = h.clientTime;
    cols[o + 10] = h.tab;
    // an example the answer cannot show was never read from the ring: nothing to send
    const read = h.rec !== UNREAD;
    cols[o + 11] = read ? 1 : 0;
    if (read) recs.push(h.rec);
  }
  return { packed: { fold: a.fold, records: a.records, results: a.results, noiseHits: a.noiseHits, cols, keys, recs }, transfer: [cols.buffer as ArrayBuffer] };
}

/** The answer packFold was given, rebuilt (an unread example's record is an empty object, as a clone of UNREAD was). */
export function unpackFold(p: PackedFold): FoldAnswer {
  const { cols, keys, recs } = p;
  const n = keys.length;
  const groups = new Array<Group>(n);
  let r = 0;
  for (let i = 0; i < n; i++) {
    const o = i * COLS;
    groups[i] = {
      key: keys[i]!,
      count: cols[o]!,
      firstTime: cols[o + 1]!,
      lastTime: cols[o + 2]!,
      lastSeq: cols[o + 3]!,
      severity: cols[o + 4]! as Severity,
      example: { seq: cols[o + 5]!, ord: cols[o + 6]!, kind: cols[o + 7]!, recvTime: cols[o + 8]!, clientTime: cols[o + 9]!, tab: cols[o + 10]!, rec: cols[o + 11] === 1 ? recs[r++]! : {} },
    };
  }
  return { fold: p.fold, records: p.records, groups, results: p.results, noiseHits: p.noiseHits };
}
