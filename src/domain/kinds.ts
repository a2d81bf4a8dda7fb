/**
 * Telemetry kinds: one ring each. The numeric id is part of the shared-memory layout
 * (record headers and counter slots), so ids are append-only.
 */
export const KINDS = [
  'logs',
  'network',
  'network_bodies',
  'ws_events',
  'actions',
  'perf',
  'ext_logs',
] as const;

export type Kind = (typeof KINDS)[number];
export type KindId = number;

export const KIND_COUNT = KINDS.length;

const ids = new Map<string, KindId>(KINDS.map((k, i) => [k, i]));

export function kindId(kind: Kind): KindId {
  return ids.get(kind)!;
}

export function kindName(id: KindId): Kind {
  const k = KINDS[id];
  if (k === undefined) throw new RangeError(`unknown kind id ${id}`);
  return k;
}

export function isKind(s: string): s is Kind {
  return ids.has(s);
}
