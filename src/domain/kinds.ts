/**
 * The one table of telemetry kinds. Everything that lists kinds derives from it: the rings and
 * counters (id = position), the batch frame's arrays, the HTTP routes and their body keys, where a
 * batch's page_url fills in, and what the extension captures in a page. The record schemas build
 * on it in wire/schemas.ts (zod stays out of this module so the extension bundle can import it).
 *
 * The numeric id is part of the shared-memory layout (record headers and counter slots), so rows
 * are append-only. A kind's name is also its array key in a batch frame (PROTOCOL.md §1).
 */
export const KIND_TABLE = [
  { name: 'logs', http: { route: '/logs', bodyKey: 'entries' }, pageField: 'url', capturedInPage: true },
  { name: 'network', http: { route: '/network', bodyKey: 'entries' }, pageField: 'page_url', capturedInPage: true },
  { name: 'network_bodies', http: { route: '/network-bodies', bodyKey: 'bodies' }, pageField: undefined, capturedInPage: true },
  { name: 'ws_events', http: { route: '/websocket-events', bodyKey: 'events' }, pageField: undefined, capturedInPage: true },
  { name: 'actions', http: { route: '/enhanced-actions', bodyKey: 'actions' }, pageField: 'url', capturedInPage: true },
  { name: 'perf', http: { route: '/performance-snapshots', bodyKey: 'snapshots' }, pageField: undefined, capturedInPage: true },
  // the extension's own diagnostics: sent in batches, never captured in a page, no HTTP route
  { name: 'ext_logs', http: undefined, pageField: 'url', capturedInPage: false },
] as const;

type Row = (typeof KIND_TABLE)[number];

export type Kind = Row['name'];
export type KindId = number;

export const KINDS: readonly Kind[] = KIND_TABLE.map((r) => r.name);
export const KIND_COUNT = KIND_TABLE.length;

/** Kinds a page hook captures (the extension's record kinds). */
export type PageKind = Extract<Row, { capturedInPage: true }>['name'];
export const PAGE_KINDS = KIND_TABLE.filter((r): r is Extract<Row, { capturedInPage: true }> => r.capturedInPage).map((r) => r.name);

type HttpRow = Extract<Row, { http: object }>;
export type HttpRoute = HttpRow['http']['route'];
export const HTTP_ROUTES: readonly HttpRoute[] = KIND_TABLE.flatMap((r) => (r.http ? [r.http.route] : []));

/** route → the key of the body's array and the kind its entries are */
export const HTTP_BODY: Readonly<Record<HttpRoute, { bodyKey: string; kind: Kind }>> = Object.fromEntries(
  KIND_TABLE.flatMap((r) => (r.http ? [[r.http.route, { bodyKey: r.http.bodyKey, kind: r.name }]] : [])),
) as Record<HttpRoute, { bodyKey: string; kind: Kind }>;

/** The record field a batch's page_url fills in when a record leaves it out. */
export const PAGE_FIELD: Readonly<Partial<Record<Kind, string>>> = Object.fromEntries(KIND_TABLE.flatMap((r) => (r.pageField ? [[r.name, r.pageField]] : [])));

const ids = new Map<string, KindId>(KIND_TABLE.map((r, i) => [r.name, i]));

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
