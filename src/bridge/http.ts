/**
 * HTTP to the daemon on 127.0.0.1, on node:http. The bridge does not use fetch: undici costs a
 * bridge ~10 MB of its 45 MB (issue 16), and every request here is to one local port. Bodies are
 * bounded; a stream is handed over as it arrives.
 */
import { type Agent, type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';

export interface HttpRequest {
  port: number;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** no answer (headers) within this: the request is abandoned */
  timeoutMs?: number;
  signal?: AbortSignal;
  agent?: Agent;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends a request; resolves with the response, its body unread (the caller reads or drains it). */
export function send(r: HttpRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...r.headers };
    if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
    const req = request({ host: '127.0.0.1', port: r.port, method: r.method, path: r.path, headers, agent: r.agent, signal: r.signal }, resolve);
    req.on('error', reject);
    if (r.timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${r.timeoutMs} ms`)), r.timeoutMs);
      req.once('response', () => clearTimeout(timer));
      req.once('close', () => clearTimeout(timer));
    }
    req.end(r.body);
  });
}

/** Reads a whole body, up to `maxBytes` (then the response is destroyed and the promise rejects). */
export function readBody(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let n = 0;
    res.on('data', (b: Buffer) => {
      n += b.length;
      if (n > maxBytes) {
        res.destroy(new Error(`answer over ${maxBytes} bytes`));
        return;
      }
      parts.push(b);
    });
    res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('answer cut off')));
  });
}

/** A request whose whole (bounded) answer is wanted. */
export async function fetchText(r: HttpRequest, maxBytes = 4 * 1024 * 1024): Promise<HttpAnswer> {
  const res = await send(r);
  return { status: res.statusCode ?? 0, headers: res.headers, body: await readBody(res, maxBytes) };
}
