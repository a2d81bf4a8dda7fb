/**
 * The error signatures that existed before a checkpoint, so a result can say "2 new signatures
 * since checkpoint before-fix". Records before a checkpoint never change (they can only be
 * evicted), so the set is computed once per checkpoint, on first use, and kept with it.
 */
import { kindId } from '../domain/kinds.js';
import type { StoreReader } from '../shm/index.js';
import { REC_ERROR } from '../shm/index.js';
import { ERROR_BYTES, isError } from './filter.js';
import { foldKey } from './fold-key.js';
import { MAX_GROUPS } from './fold.js';
import { ScanBudget, scanSliced } from './sliced-scan.js';

const MAX_SCAN = 20_000;

/** What the engine needs of a checkpoint: the ordinals it marks and when it was made (client state owns the rest). */
export interface CheckpointMark {
  readonly created_at: string;
  /** per kind: the ordinal that was next when the checkpoint was made */
  readonly ords: readonly number[];
}

const cache = new WeakMap<CheckpointMark, Promise<Set<string>>>();

export function errorKeysBefore(reader: StoreReader, cp: CheckpointMark): Promise<Set<string>> {
  let p = cache.get(cp);
  if (!p) {
    p = compute(reader, cp);
    cache.set(cp, p);
  }
  return p;
}

async function compute(reader: StoreReader, cp: CheckpointMark): Promise<Set<string>> {
  const k = kindId('logs');
  const keys = new Set<string>();
  const to = cp.ords[k]!;
  // the most recent MAX_SCAN records before the checkpoint: older ones are the least likely to recur
  const from = Math.max(reader.tailOrd(k), to - MAX_SCAN);
  await scanSliced(reader, {
    kind: k,
    from,
    to,
    limit: 0,
    maxScan: MAX_SCAN,
    anyOf: ERROR_BYTES,
    anyFlag: REC_ERROR,
    match: isError,
    sink: (h) => {
      if (keys.size >= MAX_GROUPS) return false;
      keys.add(foldKey(h.kind, h.rec));
      return true;
    },
  }, new ScanBudget());
  return keys;
}

/** The checkpoint made last: the one an agent most likely means by "since my fix". */
export function latestCheckpoint<C extends CheckpointMark>(checkpoints: ReadonlyMap<string, C>): C | undefined {
  let last: C | undefined;
  for (const cp of checkpoints.values()) if (!last || cp.created_at >= last.created_at) last = cp;
  return last;
}
