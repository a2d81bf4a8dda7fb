/**
 * fetch and XMLHttpRequest → `network` (every request), `logs` type network (failures, 4xx/5xx,
 * with ≤ 5 KB of response) and `network_bodies` (only when the user enabled body capture).
 *
 * The page's promise and XHR object are handed back untouched; everything we do happens in
 * callbacks hung off them. A response body is read from a clone, never awaited by the page, and
 * only for errors or when body capture is on; body reads race a budget and are cancelled after it.
 */
import { settle } from './click-effect.js';
import { cfg, decidedYet, emit, whenDecided } from './channel.js';
import { absoluteUrl, guard, now, truncate } from './util.js';
import { isServerUrl } from './server-url.js';
import type { Json, WireRecord } from '../shared/protocol.js';

const LIMIT_ERROR_RESPONSE = 5 * 1024;
const LIMIT_REQUEST_BODY = 8 * 1024;
const LIMIT_RESPONSE_BODY = 16 * 1024;
/** An error body is worth waiting for a little (it is async and never delays the page). */
const ERROR_BODY_BUDGET_MS = 1000;
/** A request's sizes come from Resource Timing, which lands when its body is done; wait at most this. */
const SIZE_WAIT_MS = 1500;
const MAX_HEADERS = 50;

// Credentials in any spelling never leave the page.
const SENSITIVE_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|set-cookie2)$|token|secret|passw|api[-_]?key|session|csrf|xsrf|auth/i;

function isSensitiveHeader(name: string): boolean {
  return SENSITIVE_HEADER.test(name);
}

/** Requests to the Gasoline server itself would feed back into what they report. */
export function isOwnServer(url: string): boolean {
  return isServerUrl(url, cfg.server_port);
}

const TEXTUAL = /^text\/|json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql|csv|yaml|html/i;

function isTextual(contentType: string): boolean {
  return contentType === '' || TEXTUAL.test(contentType);
}

function headersToObject(h: HeadersInit | Headers | undefined | null): Record<string, string> | undefined {
  if (!h) return undefined;
  const out: Record<string, string> = {};
  let n = 0;
  const add = (k: string, v: string): void => {
    if (n >= MAX_HEADERS || isSensitiveHeader(k)) return;
    out[k.toLowerCase()] = String(v).slice(0, 1024);
    n++;
  };
  if (h instanceof Headers) h.forEach((v, k) => { add(k, v); });
  else if (Array.isArray(h)) for (const [k, v] of h) add(String(k), String(v));
  else for (const k of Object.keys(h)) add(k, (h as Record<string, string>)[k]!);
  return out;
}

function requestBodyPreview(body: unknown): { text?: string; truncated?: boolean } {
  if (body === undefined || body === null) return {};
  if (typeof body === 'string') {
    const t = truncate(body, LIMIT_REQUEST_BODY);
    return { text: t.text, truncated: t.truncated };
  }
  if (body instanceof URLSearchParams) return requestBodyPreview(body.toString());
  if (body instanceof FormData) return { text: '[FormData]' };
  if (body instanceof Blob) return { text: `[Binary: ${body.size} bytes, ${body.type || 'application/octet-stream'}]` };
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return { text: `[Binary: ${(body as ArrayBuffer).byteLength} bytes]` };
  if (body instanceof ReadableStream) return { text: '[Stream]' };
  return {};
}

// ---- sizes from Resource Timing ----

interface Waiting {
  rec: WireRecord;
  url: string;
  at: number;
}

const waiting: Waiting[] = [];
/** entries that arrived before their request completed on our side */
const early: PerformanceResourceTiming[] = [];
let sweepTimer: ReturnType<typeof setTimeout> | undefined;
let observing = false;

function fillSizes(rec: WireRecord, e: PerformanceResourceTiming): void {
  rec.initiator_type = e.initiatorType;
  rec.transfer_size = e.transferSize;
  rec.encoded_body_size = e.encodedBodySize;
  rec.decoded_body_size = e.decodedBodySize;
}

function observeResources(): void {
  if (observing || typeof PerformanceObserver === 'undefined') return;
  observing = true;
  try {
    new PerformanceObserver((list) =>
      guard(() => {
        for (const e of list.getEntries() as PerformanceResourceTiming[]) {
          if (e.initiatorType !== 'fetch' && e.initiatorType !== 'xmlhttprequest') continue;
          const i = waiting.findIndex((w) => w.url === e.name);
          if (i >= 0) {
            const w = waiting.splice(i, 1)[0]!;
            fillSizes(w.rec, e);
            emit('network', w.rec);
          } else {
            early.push(e);
            if (early.length > 50) early.shift();
          }
        }
      }),
    ).observe({ type: 'resource', buffered: false });
  } catch {
    // no Resource Timing: records go out without sizes
  }
}

function sweep(): void {
  sweepTimer = undefined;
  const cutoff = performance.now() - SIZE_WAIT_MS;
  while (waiting.length && waiting[0]!.at <= cutoff) emit('network', waiting.shift()!.rec);
  if (waiting.length) sweepTimer = setTimeout(sweep, SIZE_WAIT_MS);
}

function networkRecord(rec: WireRecord, url: string): void {
  observeResources();
  const i = early.findIndex((e) => e.name === url);
  if (i >= 0) {
    fillSizes(rec, early.splice(i, 1)[0]!);
    emit('network', rec);
    return;
  }
  if (waiting.length >= 200) {
    emit('network', rec);
    return;
  }
  waiting.push({ rec, url, at: performance.now() });
  if (sweepTimer === undefined) sweepTimer = setTimeout(sweep, SIZE_WAIT_MS);
}

// ---- shared completion ----

interface Meta {
  method: string;
  url: string;
  ts: number;
  start: number;
  reqHeaders?: Record<string, string> | undefined;
  reqBody?: { text?: string; truncated?: boolean };
}

interface BodyRead {
  text: string;
  truncated: boolean;
}

function completed(m: Meta, status: number, duration: number): void {
  networkRecord({ ts: m.ts, method: m.method, url: m.url, status, duration, page_url: location.href }, m.url);
}

function errorLog(m: Meta, status: number, statusText: string, duration: number, response: BodyRead | string | undefined): void {
  const rec: Record<string, Json> = {
    ts: now(),
    level: 'error',
    type: 'network',
    message: `${m.method} ${m.url} → ${status}${statusText ? ` ${statusText}` : ''}`,
    method: m.method,
    request_url: m.url,
    status,
    status_text: statusText,
    duration,
    url: location.href,
  };
  if (typeof response === 'string') rec.response = response;
  else if (response) {
    const t = truncate(response.text, LIMIT_ERROR_RESPONSE);
    rec.response = t.text;
    if (t.truncated || response.truncated) rec.response_truncated = true;
  }
  emit('logs', rec);
}

function failureLog(m: Meta, error: string, duration: number, aborted: boolean): void {
  networkRecord({ ts: m.ts, method: m.method, url: m.url, status: 0, duration, page_url: location.href, error }, m.url);
  emit('logs', {
    ts: now(),
    // The page cancelling its own request is not an error.
    level: aborted ? 'warn' : 'error',
    type: 'network',
    message: `${m.method} ${m.url} failed: ${error}`,
    method: m.method,
    request_url: m.url,
    error,
    duration,
    url: location.href,
  });
}

function bodiesRecord(m: Meta, status: number, contentType: string, duration: number, respHeaders: Record<string, string> | undefined, body: BodyRead | string | undefined): void {
  const rec: Record<string, Json | undefined> = {
    ts: m.ts,
    method: m.method,
    url: m.url,
    status,
    content_type: contentType || undefined,
    duration,
    request_headers: m.reqHeaders,
    response_headers: respHeaders,
  };
  if (m.reqBody?.text !== undefined) rec.request_body = m.reqBody.text;
  if (m.reqBody?.truncated) rec.request_truncated = true;
  if (typeof body === 'string') rec.response_body = body;
  else if (body) {
    const t = truncate(body.text, LIMIT_RESPONSE_BODY);
    rec.response_body = t.text;
    if (t.truncated || body.truncated) rec.response_truncated = true;
  }
  emit('network_bodies', rec);
}

// ---- fetch ----

async function readClone(res: Response, limit: number, budgetMs: number): Promise<BodyRead | string> {
  let clone: Response;
  try {
    clone = res.clone();
  } catch {
    return '[Body not readable]';
  }
  const body = clone.body;
  if (!body) return { text: '', truncated: false };
  const reader = body.getReader();
  const dec = new TextDecoder();
  let text = '';
  let truncated = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), budgetMs)));
  try {
    for (;;) {
      const r = await Promise.race([reader.read(), deadline]);
      if (r === 'timeout') return `[Body skipped: not read within ${budgetMs} ms]`;
      if (r.done) break;
      text += dec.decode(r.value, { stream: true });
      if (text.length >= limit) {
        truncated = true;
        break;
      }
    }
    text += dec.decode();
    return { text, truncated };
  } catch {
    return '[Body not readable]';
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
}

function fetchDone(m: Meta, res: Response): void {
  const duration = Math.round(performance.now() - m.start);
  completed(m, res.status, duration);
  const isError = res.status >= 400;
  // Undecided: a request made in the first milliseconds of the page, before the settings came.
  const maybeBodies = cfg.bodies || !decidedYet();
  if (!isError && !maybeBodies) return;
  const contentType = res.headers.get('content-type') ?? '';
  const respHeaders = maybeBodies ? headersToObject(res.headers) : undefined;
  const finish = (body: BodyRead | string | undefined): void => {
    if (isError) errorLog(m, res.status, res.statusText, duration, body);
    if (maybeBodies) whenDecided(() => cfg.on && cfg.bodies && bodiesRecord(m, res.status, contentType, duration, respHeaders, body));
  };
  if (!isTextual(contentType)) {
    finish(`[Binary: ${res.headers.get('content-length') ?? '?'} bytes, ${contentType}]`);
    return;
  }
  const limit = maybeBodies ? LIMIT_RESPONSE_BODY : LIMIT_ERROR_RESPONSE;
  const budget = isError ? Math.max(ERROR_BODY_BUDGET_MS, cfg.body_budget_ms) : cfg.body_budget_ms;
  readClone(res, limit, budget).then(
    (b) => guard(() => finish(b)),
    () => undefined,
  );
}

function fetchBegin(input: RequestInfo | URL, init: RequestInit | undefined): Meta | null {
  const req = input instanceof Request ? input : null;
  const url = absoluteUrl(req ? req.url : input instanceof URL ? input.href : input);
  if (isOwnServer(url)) return null;
  const m: Meta = { method: String(init?.method ?? req?.method ?? 'GET').toUpperCase(), url, ts: now(), start: performance.now() };
  // Requests made before the settings arrive keep their request side, in case bodies are on.
  if (cfg.bodies || !decidedYet()) {
    m.reqHeaders = headersToObject(init?.headers ?? req?.headers);
    m.reqBody = requestBodyPreview(init?.body);
  }
  return m;
}

export function installFetch(): void {
  const original = window.fetch;
  if (typeof original !== 'function') return;
  const fetch = function (this: unknown, ...args: Parameters<typeof window.fetch>): Promise<Response> {
    settle('request');
    let m: Meta | null = null;
    if (cfg.on) {
      try {
        m = fetchBegin(args[0], args[1]);
      } catch {
        m = null;
      }
    }
    const p = original.apply(this, args);
    if (m) {
      const meta = m;
      p.then(
        (res) => guard(() => fetchDone(meta, res)),
        (err: unknown) =>
          guard(() => {
            const aborted = err instanceof DOMException && err.name === 'AbortError';
            failureLog(meta, err instanceof Error ? `${err.name}: ${err.message}` : String(err), Math.round(performance.now() - meta.start), aborted);
          }),
      );
    }
    return p;
  };
  window.fetch = fetch;
}

// ---- XMLHttpRequest ----

interface XMeta extends Meta {
  failure?: string;
}

export function installXhr(): void {
  if (typeof XMLHttpRequest === 'undefined') return;
  const proto = XMLHttpRequest.prototype;
  const metas = new WeakMap<XMLHttpRequest, XMeta>();
  const open = proto.open;
  const send = proto.send;
  const setRequestHeader = proto.setRequestHeader;

  proto.open = function (this: XMLHttpRequest, method: string, url: string | URL) {
    guard(() => {
      metas.delete(this);
      if (!cfg.on) return;
      const abs = absoluteUrl(url);
      if (!isOwnServer(abs)) metas.set(this, { method: String(method).toUpperCase(), url: abs, ts: 0, start: 0 });
    });
    // biome-ignore lint/complexity/noArguments: rest args would pass open(m, u, undefined), which means synchronous
    return open.apply(this, arguments as unknown as Parameters<typeof open>);
  } as typeof proto.open;

  proto.setRequestHeader = function (this: XMLHttpRequest, name: string, value: string): void {
    guard(() => {
      const m = metas.get(this);
      if (m && (cfg.bodies || !decidedYet()) && !isSensitiveHeader(name)) (m.reqHeaders ??= {})[String(name).toLowerCase()] = String(value).slice(0, 1024);
    });
    return setRequestHeader.call(this, name, value);
  };

  proto.send = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null): void {
    settle('request');
    guard(() => {
      const m = metas.get(this);
      if (!m) return;
      m.ts = now();
      m.start = performance.now();
      if (cfg.bodies || !decidedYet()) m.reqBody = requestBodyPreview(body);
      const xhr = this;
      const fail = (why: string) => () => (m.failure ??= why);
      xhr.addEventListener('error', fail('network error'), { once: true });
      xhr.addEventListener('abort', fail('aborted'), { once: true });
      xhr.addEventListener('timeout', fail('timeout'), { once: true });
      xhr.addEventListener('loadend', () => guard(() => xhrDone(xhr, m)), { once: true });
    });
    return send.call(this, body);
  };
}

function xhrBody(xhr: XMLHttpRequest, limit: number): BodyRead | string {
  const type = xhr.responseType;
  if (type === '' || type === 'text') return truncate(xhr.responseText, limit);
  if (type === 'json') return truncate(JSON.stringify(xhr.response) ?? '', limit);
  const r = xhr.response as unknown;
  const size = r instanceof Blob ? r.size : r instanceof ArrayBuffer ? r.byteLength : '?';
  return `[Binary: ${size} bytes, ${xhr.getResponseHeader('content-type') ?? type}]`;
}

function xhrDone(xhr: XMLHttpRequest, m: XMeta): void {
  const duration = Math.round(performance.now() - m.start);
  if (xhr.status === 0) {
    failureLog(m, m.failure ?? 'network error', duration, m.failure === 'aborted');
    return;
  }
  completed(m, xhr.status, duration);
  const isError = xhr.status >= 400;
  const maybeBodies = cfg.bodies || !decidedYet();
  if (!isError && !maybeBodies) return;
  const contentType = xhr.getResponseHeader('content-type') ?? '';
  const body = isTextual(contentType) || xhr.responseType === 'json' ? xhrBody(xhr, maybeBodies ? LIMIT_RESPONSE_BODY : LIMIT_ERROR_RESPONSE) : `[Binary: ${xhr.getResponseHeader('content-length') ?? '?'} bytes, ${contentType}]`;
  if (isError) errorLog(m, xhr.status, xhr.statusText, duration, body);
  if (maybeBodies) {
    const headers = parseRawHeaders(xhr.getAllResponseHeaders());
    whenDecided(() => cfg.on && cfg.bodies && bodiesRecord(m, xhr.status, contentType, duration, headers, body));
  }
}

function parseRawHeaders(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const i = line.indexOf(':');
    if (i <= 0 || n >= MAX_HEADERS) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    if (isSensitiveHeader(k)) continue;
    out[k] = line.slice(i + 1).trim().slice(0, 1024);
    n++;
  }
  return out;
}
