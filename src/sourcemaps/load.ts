/**
 * Getting one script's source map: fetch the script (bounded in time and bytes, no redirects),
 * find its map in the `SourceMap` / `X-SourceMap` header or the last `sourceMappingURL` comment,
 * then fetch that (same origin as the script) or decode it from a data: URL, and parse it.
 * Every failure is a `MapMiss` with a reason, counted by the cache and never shown to an agent.
 */
import { FlattenMap, type TraceMap } from '@jridgewell/trace-mapping';
import { refusal } from './host-guard.js';

export const MISS_REASONS = ['refused', 'timeout', 'too_large', 'http_error', 'fetch_failed', 'no_map', 'bad_map'] as const;
export type MissReason = (typeof MISS_REASONS)[number];

export class MapMiss extends Error {
  constructor(
    readonly reason: MissReason,
    message: string,
  ) {
    super(message);
    this.name = 'MapMiss';
  }
}

export interface LoadLimits {
  /** per request: the script, then the map */
  timeoutMs: number;
  maxScriptBytes: number;
  maxMapBytes: number;
}

export interface LoadedMap {
  map: TraceMap;
  /** the map's text length: what the cache counts it as */
  bytes: number;
}

/** A response body as text, refused past `max` bytes (by Content-Length, or while it streams). */
async function boundedText(res: Response, max: number, what: string): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw new MapMiss('too_large', `${what} is ${declared} bytes, over ${max}`);
  }
  if (!res.body) return '';
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new MapMiss('too_large', `${what} is over ${max} bytes`);
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}

async function get(url: string, timeoutMs: number): Promise<Response> {
  let res: Response;
  try {
    // redirect "error": a local server must not bounce the daemon to another host
    res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(timeoutMs), headers: { accept: '*/*' } });
  } catch (e) {
    const name = (e as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new MapMiss('timeout', `no answer from ${url} within ${timeoutMs} ms`);
    throw new MapMiss('fetch_failed', `${url}: ${(e as Error).message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new MapMiss('http_error', `${url}: HTTP ${res.status}`);
  }
  return res;
}

/** The body: the request's signal bounds it too, so a server that stalls mid-body is cut at the timeout. */
async function getText(url: string, max: number, timeoutMs: number, what: string): Promise<{ text: string; headers: Headers }> {
  const res = await get(url, timeoutMs);
  try {
    return { text: await boundedText(res, max, what), headers: res.headers };
  } catch (e) {
    if (e instanceof MapMiss) throw e;
    const name = (e as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new MapMiss('timeout', `${what} at ${url} did not arrive within ${timeoutMs} ms`);
    throw new MapMiss('fetch_failed', `${what} at ${url}: ${(e as Error).message}`);
  }
}

const COMMENT = /(?:\/\/|\/\*)[#@][ \t]+sourceMappingURL=([^\s*'"]+)/g;

/** The last sourceMappingURL comment of a script (a bundle may quote earlier ones inside strings). */
export function mapComment(script: string): string | undefined {
  // the comment sits at the end; look at the tail first, the whole text only when it is not there
  const tail = script.length > 4096 ? script.slice(-4096) : script;
  let found: string | undefined;
  for (const m of tail.matchAll(COMMENT)) found = m[1];
  if (found && !found.startsWith('data:')) return found;
  for (const m of script.matchAll(COMMENT)) found = m[1];
  return found;
}

/** A data: URL's JSON (base64 or percent-encoded), refused past `max` bytes. */
export function decodeDataUrl(u: string, max: number): string {
  const comma = u.indexOf(',');
  if (comma < 0) throw new MapMiss('bad_map', 'a data: URL without a comma');
  const meta = u.slice(5, comma);
  const payload = u.slice(comma + 1);
  const base64 = /;base64$/i.test(meta);
  const size = base64 ? Math.floor((payload.length * 3) / 4) : payload.length;
  if (size > max) throw new MapMiss('too_large', `inline map is ${size} bytes, over ${max}`);
  try {
    return base64 ? Buffer.from(payload, 'base64').toString('utf8') : decodeURIComponent(payload);
  } catch {
    throw new MapMiss('bad_map', 'an inline map that does not decode');
  }
}

export function parseMap(text: string): TraceMap {
  let json: unknown;
  try {
    json = JSON.parse(text.startsWith(")]}'") ? text.slice(text.indexOf('\n') + 1) : text);
  } catch (e) {
    throw new MapMiss('bad_map', `not JSON: ${(e as Error).message.slice(0, 200)}`);
  }
  const m = json as { version?: unknown; mappings?: unknown; sources?: unknown; sections?: unknown };
  if (!m || typeof m !== 'object' || m.version !== 3 || !(Array.isArray(m.sections) || (typeof m.mappings === 'string' && Array.isArray(m.sources)))) {
    throw new MapMiss('bad_map', 'not a version 3 source map');
  }
  try {
    // FlattenMap reads plain and sectioned (index) maps alike
    return new FlattenMap(m as ConstructorParameters<typeof FlattenMap>[0]);
  } catch (e) {
    throw new MapMiss('bad_map', `unreadable map: ${(e as Error).message.slice(0, 200)}`);
  }
}

/** The map of `scriptUrl`, for a page at `pageUrl` (its origin is the only one asked). */
export async function loadMap(scriptUrl: string, pageUrl: string | undefined, l: LoadLimits): Promise<LoadedMap> {
  const refused = refusal(scriptUrl, pageUrl);
  if (refused) throw new MapMiss('refused', `${refused}: ${scriptUrl}`);
  const { text: script, headers } = await getText(scriptUrl, l.maxScriptBytes, l.timeoutMs, 'script');
  const named = headers.get('sourcemap') ?? headers.get('x-sourcemap') ?? mapComment(script);
  if (!named) throw new MapMiss('no_map', `${scriptUrl} names no source map`);
  let text: string;
  if (named.startsWith('data:')) text = decodeDataUrl(named, l.maxMapBytes);
  else {
    let mapUrl: string;
    try {
      mapUrl = new URL(named, scriptUrl).href;
    } catch {
      throw new MapMiss('no_map', `unreadable map URL in ${scriptUrl}`);
    }
    // the map must come from where the script came from
    const r = refusal(mapUrl, scriptUrl);
    if (r) throw new MapMiss('refused', `${r}: ${mapUrl}`);
    text = (await getText(mapUrl, l.maxMapBytes, l.timeoutMs, 'map')).text;
  }
  return { map: parseMap(text), bytes: text.length };
}
