/**
 * Captured traffic as a HAR 1.2 file (the format devtools, proxies and load tools read). One
 * builder for every front: configure({action:"export_har"}) calls it, and `gasoline export har`
 * reaches it through that action on the daemon, so the two cannot differ.
 *
 * What we hold is less than a browser's own HAR: `network` records (every fetch/XHR, with its
 * duration and Resource Timing sizes) and `network_bodies` records (headers and bodies, when body
 * capture is on; the tab's document with its security headers only). A request with both is one
 * entry (joined on tab, method, URL and the page's start time, which the extension gives both);
 * either alone is an entry too. The rest follows HAR's own conventions for "not known": -1 for the
 * timing phases and sizes we never see (only the total duration is captured: it is `wait`), ""
 * for the HTTP version. Binary bodies never leave the page (the extension sends a placeholder such
 * as "[Binary: 512 bytes, image/png]"), so no content is base64: a placeholder becomes a comment
 * and the size it names, never `text` that a reader would take for the body.
 *
 * A file is egress: every record passes the rule set in force again (the keyed header rules
 * included) before it becomes an entry, and every entry passes it once more as a value.
 */
import type { RedactionEngine } from '../domain/redaction/index.js';
import type { Hit } from './scan.js';

export interface HarCaps {
  /** entries at most: the newest are kept */
  maxEntries: number;
  /** bytes of the whole file at most: the newest entries that fit are kept */
  maxBytes: number;
}

export interface HarOptions extends HarCaps {
  egress: RedactionEngine;
  creator: { name: string; version: string };
  /** said in log.comment: the filters used, what was not read */
  comment?: string | undefined;
}

export interface HarDropped {
  /** the oldest entries beyond maxEntries */
  over_limit: number;
  /** the oldest entries that did not fit in maxBytes */
  over_bytes: number;
}

export interface HarFile {
  /** the file's text: one entry per line, so it can be read and grepped as it is */
  text: string;
  entries: number;
  bytes: number;
  dropped: HarDropped;
}

type NameValue = { name: string; value: string; comment?: string };
type Loose = Record<string, unknown>;

/** The extension's stand-ins for a body it did not read (extension/src/inject/network.ts). */
const PLACEHOLDER = /^\[(?:Binary: (\d+|\?) bytes[^\]]*|Body [^\]]*|FormData|Stream)\]$/;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bytesOf = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Records of one request; `time` is the page's start time in epoch ms. */
interface Pair {
  time: number;
  tab: number;
  net?: Loose;
  body?: Loose;
}

/**
 * Joins `network` and `network_bodies` hits into requests. Both sides were stored through the same
 * ingest redaction, so their URLs compare as stored; the egress pass comes later, on what is kept.
 */
function pairs(network: readonly Hit[], bodies: readonly Hit[]): Pair[] {
  const key = (tab: number, r: Loose, time: number): string => `${tab}\u0000${str(r.method)}\u0000${str(r.url)}\u0000${time}`;
  const timeOf = (h: Hit): number => num(h.rec.ts) ?? (Number.isFinite(h.clientTime) ? h.clientTime : h.recvTime);
  const out: Pair[] = [];
  const open = new Map<string, Pair[]>();
  for (const h of network) {
    const net = h.rec as Loose;
    const p: Pair = { time: timeOf(h), tab: h.tab, net };
    out.push(p);
    const k = key(h.tab, net, p.time);
    const list = open.get(k);
    if (list) list.push(p);
    else open.set(k, [p]);
  }
  for (const h of bodies) {
    const body = h.rec as Loose;
    const time = timeOf(h);
    const mate = open.get(key(h.tab, body, time))?.find((p) => !p.body);
    if (mate) mate.body = body;
    else out.push({ time, tab: h.tab, body });
  }
  return out.sort((a, b) => a.time - b.time);
}

/** Each record through the rule set in force (keyed header rules included), on a copy. */
function redacted(p: Pair, egress: RedactionEngine): Pair {
  return {
    time: p.time,
    tab: p.tab,
    ...(p.net ? { net: egress.redactRecord('network', { ...p.net }) } : {}),
    ...(p.body ? { body: egress.redactRecord('network_bodies', { ...p.body }) } : {}),
  };
}

function headerList(h: unknown): NameValue[] {
  if (!h || typeof h !== 'object') return [];
  return Object.entries(h as Loose).flatMap(([name, value]) => (typeof value === 'string' ? [{ name, value }] : []));
}

function headerValue(list: readonly NameValue[], name: string): string | undefined {
  return list.find((h) => h.name.toLowerCase() === name)?.value;
}

function queryString(url: string): NameValue[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

/** `Cookie: a=1; b=2` (its values already redacted by the header rules). */
function requestCookies(headers: readonly NameValue[]): NameValue[] {
  const v = headerValue(headers, 'cookie');
  if (!v) return [];
  return v.split(/;\s*/).flatMap((pair) => {
    const at = pair.indexOf('=');
    return at > 0 ? [{ name: pair.slice(0, at).trim(), value: pair.slice(at + 1) }] : [];
  });
}

/** The cookies a response set: the extension sends names and attributes, never a value. */
function responseCookies(cookies: unknown): Loose[] {
  if (!Array.isArray(cookies)) return [];
  return (cookies as Loose[]).map((c) => ({
    name: str(c.name) ?? '',
    value: '',
    ...(str(c.path) !== undefined ? { path: c.path } : {}),
    ...(str(c.domain) !== undefined ? { domain: c.domain } : {}),
    httpOnly: c.http_only === true,
    secure: c.secure === true,
    comment: 'value never captured',
  }));
}

/** A captured body as HAR text, or what stands in for it: `size` is the body's if known. */
function bodyOf(text: string | undefined, truncated: boolean, limitNote: string): { text?: string; size?: number; comment?: string } {
  if (text === undefined) return {};
  const ph = PLACEHOLDER.exec(text);
  if (ph) return { comment: `body not captured: ${text}`, ...(ph[1] && ph[1] !== '?' ? { size: Number(ph[1]) } : {}) };
  return { text, ...(truncated ? { comment: `cut at capture (${limitNote})` } : { size: bytesOf(text) }) };
}

function entryOf(p: Pair): Loose {
  const n = p.net ?? {};
  const b = p.body ?? {};
  const method = (str(b.method) ?? str(n.method) ?? 'GET').toUpperCase();
  const url = str(b.url) ?? str(n.url) ?? '';
  const status = num(b.status) ?? num(n.status) ?? 0;
  const duration = Math.max(0, num(n.duration) ?? num(b.duration) ?? 0);
  const reqHeaders = headerList(b.request_headers);
  const resHeaders = headerList(b.response_headers);
  const comments: string[] = [];
  if (n.redaction_failed === true || b.redaction_failed === true) comments.push('redaction failed at ingest: its text fields were dropped');
  if (b.document === true) comments.push('the page document: only content-type and security headers were captured');
  const error = str(n.error);
  if (error !== undefined) comments.push(`failed: ${error}`);

  const reqBody = bodyOf(str(b.request_body), b.request_truncated === true, '8 192 characters');
  const request: Loose = {
    method,
    url,
    httpVersion: '',
    cookies: requestCookies(reqHeaders),
    headers: reqHeaders,
    queryString: queryString(url),
    headersSize: -1,
    bodySize: reqBody.size ?? (str(b.request_body) === undefined && (method === 'GET' || method === 'HEAD') ? 0 : -1),
  };
  if (str(b.request_body) !== undefined) {
    request.postData = { mimeType: headerValue(reqHeaders, 'content-type') ?? '', ...(reqBody.text !== undefined ? { text: reqBody.text } : {}), ...(reqBody.comment ? { comment: reqBody.comment } : {}) };
  }

  const resBody = bodyOf(str(b.response_body), b.response_truncated === true, '16 384 characters');
  const decoded = num(n.decoded_body_size);
  const encoded = num(n.encoded_body_size);
  const content: Loose = {
    size: Math.round(decoded ?? resBody.size ?? 0),
    ...(decoded !== undefined && encoded !== undefined && decoded >= encoded && encoded > 0 ? { compression: Math.round(decoded - encoded) } : {}),
    mimeType: str(b.content_type) ?? headerValue(resHeaders, 'content-type') ?? 'x-unknown',
    ...(resBody.text !== undefined ? { text: resBody.text } : {}),
    ...(resBody.comment ? { comment: resBody.comment } : {}),
  };
  const response: Loose = {
    status,
    statusText: '',
    httpVersion: '',
    cookies: responseCookies(b.cookies),
    headers: resHeaders,
    content,
    redirectURL: headerValue(resHeaders, 'location') ?? '',
    headersSize: -1,
    bodySize: encoded !== undefined ? Math.round(encoded) : -1,
  };
  if (num(b.cookies_dropped)) comments.push(`${num(b.cookies_dropped)} more cookies set than the 50 captured`);

  const initiator = str(n.initiator_type);
  return {
    startedDateTime: new Date(p.time).toISOString(),
    time: duration,
    request,
    response,
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: duration, receive: 0 },
    ...(b.document === true ? { _resourceType: 'document' } : initiator ? { _resourceType: initiator === 'xmlhttprequest' ? 'xhr' : initiator } : {}),
    ...(p.tab >= 0 ? { _tabId: p.tab } : {}),
    ...(comments.length ? { comment: comments.join('; ') } : {}),
  };
}

/** room for log's own fields (version, creator, the comment naming what was dropped) */
const HEAD_ROOM = 2048;
/**
 * Work between two turns of the event loop: 1 000 entries with full bodies take ~190 ms to redact
 * and serialize on this machine, which would hold every push on main for as long.
 */
const SLICE_MS = 2;

export async function buildHar(network: readonly Hit[], bodies: readonly Hit[], o: HarOptions): Promise<HarFile> {
  const all = pairs(network, bodies);
  const overLimit = Math.max(0, all.length - o.maxEntries);
  const recent = all.slice(overLimit);
  // newest first until the file is full: a capped export still holds what happened last
  const lines: string[] = [];
  let bytes = HEAD_ROOM;
  let slice = performance.now();
  for (let i = recent.length - 1; i >= 0; i--) {
    if (performance.now() - slice >= SLICE_MS) {
      await new Promise((r) => setImmediate(r));
      slice = performance.now();
    }
    // the entry as a value once more: text the builder derived (query values decoded from the URL)
    const line = JSON.stringify(o.egress.redactValue(entryOf(redacted(recent[i]!, o.egress))));
    const size = bytesOf(line) + 2;
    if (bytes + size > o.maxBytes) break;
    bytes += size;
    lines.push(line);
  }
  lines.reverse();
  const dropped: HarDropped = { over_limit: overLimit, over_bytes: recent.length - lines.length };
  const notes = [o.comment, dropped.over_limit ? `${dropped.over_limit} older entries over the ${o.maxEntries}-entry limit left out` : '', dropped.over_bytes ? `${dropped.over_bytes} older entries over the ${o.maxBytes}-byte cap left out` : '', 'timings: only the total duration is captured (as wait); -1 = not known'].filter(Boolean);
  const log = { version: '1.2', creator: o.creator, comment: o.egress.redactText(notes.join('; ')) };
  const head = JSON.stringify({ log }).slice(0, -2);
  const text = `${head},"entries":[${lines.length ? `\n${lines.join(',\n')}\n` : ''}]}}\n`;
  return { text, entries: lines.length, bytes: bytesOf(text), dropped };
}
