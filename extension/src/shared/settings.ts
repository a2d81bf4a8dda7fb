/**
 * What the user chose in the popup (chrome.storage.local, survives restarts) and what the test
 * harness or a packager preset in config.json. Defaults live here and only here.
 */

export interface Settings {
  capture_websockets: boolean;
  capture_bodies: boolean;
  /** used by `interact` (agent-driven clicks, typing, navigation); refused while false */
  allow_agent_control: boolean;
  server_port: number;
}

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  capture_websockets: true,
  capture_bodies: false,
  allow_agent_control: false,
  server_port: 7890,
});

/** config.json beside the manifest; every field optional. Tests write it per run. */
export interface FileConfig {
  port?: number;
  keepaliveMs?: number;
  /** capture every tab without the popup (e2e) */
  trackAll?: boolean;
  perfDelayMs?: number;
  bodyBudgetMs?: number;
  /** preset toggles, applied only while the user has not chosen */
  captureBodies?: boolean;
  captureWebSockets?: boolean;
  /** the server's pairing secret (hex), as `gasoline pair` would have left it: e2e runs start paired */
  pairingKey?: string;
}

export function normalizeSettings(raw: unknown): Settings {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Partial<Record<keyof Settings, unknown>>;
  const bool = (v: unknown, d: boolean): boolean => (typeof v === 'boolean' ? v : d);
  const port = Number(r.server_port);
  return {
    capture_websockets: bool(r.capture_websockets, DEFAULT_SETTINGS.capture_websockets),
    capture_bodies: bool(r.capture_bodies, DEFAULT_SETTINGS.capture_bodies),
    allow_agent_control: bool(r.allow_agent_control, DEFAULT_SETTINGS.allow_agent_control),
    server_port: Number.isInteger(port) && port > 0 && port < 65536 ? port : DEFAULT_SETTINGS.server_port,
  };
}

/** Popup ⇄ worker status shape. */
export interface PopupStatus {
  settings: Settings;
  tab: { id: number; tracked: boolean; reason: string } | null;
  tracking: { mode: 'all' | 'active' | 'chosen'; chosen: number };
  transport: import('../sw/transport.js').TransportStatus;
  /** whether we hold a pairing secret, since when, and the last pairing attempt's outcome */
  pairing: { paired: boolean; paired_at: string | null; preset: boolean; last: { ok: boolean; message: string } | null; busy: boolean };
}

/** What the popup and the side panel say for each state of the worker's link to the server. */
export const LINK_TEXT: Readonly<Record<string, string>> = {
  connected: 'connected',
  connecting: 'connecting…',
  handshake: 'connecting…',
  backoff: 'server not reachable',
  refused: 'not sending (pairing)',
  stopped: 'stopped',
};
