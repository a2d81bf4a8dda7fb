/** A client's streaming config, kept with its state so its next session can restore it (server.ts). */
import type { ClientState } from '../../clients/client-state.js';
import type { StreamState } from '../../domain/streaming/stream-state.js';

export function saveStreaming(stream: StreamState, client: ClientState): void {
  const s = stream.status();
  client.setStreaming({ enabled: s.status === 'enabled', ...s.config });
}

export function restoreStreaming(stream: StreamState, client: ClientState): void {
  const saved = client.streaming;
  if (!saved?.enabled) return;
  stream.configure({ streaming_action: 'enable', events: saved.events, throttle_seconds: saved.throttle_seconds, severity_min: saved.severity_min, ...(saved.url_filter !== null ? { url_filter: saved.url_filter } : {}) });
}
