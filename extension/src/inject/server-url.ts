/**
 * Requests to the Gasoline server itself would feed back into what they report, so they are never
 * recorded. The port is the user's setting, which reaches the page a few ms after it starts: a
 * request made before then is judged against the default port, so what was held meanwhile is
 * judged again once the real one is known (see channel.ts).
 */
import type { RecordKind, WireRecord } from '../shared/protocol.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isServerUrl(url: string, serverPort: number): boolean {
  try {
    const u = new URL(url.replace(/^ws/, 'http'));
    return LOOPBACK.has(u.hostname) && u.port === String(serverPort);
  } catch {
    return false;
  }
}

/** The request a record describes, if it describes one (a console record's `url` is the page's). */
function requestUrl(kind: RecordKind, rec: WireRecord): unknown {
  if (kind === 'network' || kind === 'network_bodies' || kind === 'ws_events') return rec.url;
  if (kind === 'logs' && rec.type === 'network') return rec.request_url;
  return undefined;
}

export function aboutServer(kind: RecordKind, rec: WireRecord, serverPort: number): boolean {
  const url = requestUrl(kind, rec);
  return typeof url === 'string' && isServerUrl(url, serverPort);
}
