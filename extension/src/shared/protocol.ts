/**
 * Shapes that cross a boundary: wire records and frames (PROTOCOL.md v1) and the messages between
 * the page hook, the content script, the service worker and the popup. Nothing else lives here.
 * Kept free of chrome/DOM types so Node tests can import it.
 */

// The kinds a page captures come from the server's one kinds table, so the two cannot drift.
export { PAGE_KINDS as RECORD_KINDS, type PageKind as RecordKind } from '../../../src/domain/kinds.js';
import type { PageKind as RecordKind } from '../../../src/domain/kinds.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** One wire record; the exact fields per kind are in PROTOCOL.md §2. */
export type WireRecord = Record<string, Json | undefined>;

export type RecordsByKind = Partial<Record<RecordKind, WireRecord[]>>;

// ---- page (MAIN world) <-> content script (ISOLATED), over a private MessagePort ----

/** The one window.postMessage we make: it hands the content script our end of the channel. */
export const HANDSHAKE_MARK = '__gasoline_handshake_v1__';

export interface PageCapture {
  t: 'records';
  page_url: string;
  /** [kind, record] in capture order */
  items: Array<[RecordKind, WireRecord]>;
}

export interface CaptureConfig {
  t: 'config';
  /** false: this tab is not tracked; the hook stays installed but records nothing */
  on: boolean;
  ws: boolean;
  bodies: boolean;
  /** the Gasoline server's port: requests to it are never recorded */
  server_port: number;
  /** time allowed to read a body for network_bodies, ms */
  body_budget_ms: number;
  /** delay after `load` before the perf snapshot is sent, ms */
  perf_delay_ms: number;
}

// ---- content script / popup -> service worker (chrome.runtime.sendMessage) ----

export type ToWorker =
  | { t: 'page_hello'; url: string }
  | { t: 'capture'; id: string; page_url: string; records: RecordsByKind }
  | { t: 'status'; tab_id?: number }
  | { t: 'set_tab_tracked'; tab_id: number; on: boolean }
  /** the popup's toggles: the worker writes them, so a popup closed right after a click still saves it */
  | { t: 'set_settings'; patch: Partial<import('./settings.js').Settings> }
  // the popup's approvals list and the user's decision (sw/approvals.ts)
  | { t: 'approvals' }
  | { t: 'approval_decide'; id: string; decision: 'approve' | 'approve_window' | 'deny'; minutes?: 5 | 15 | 60 }
  /** pairing (popup): type the code, accept trust on first use, or forget the secret */
  | { t: 'pair'; code: string | null }
  | { t: 'forget_pairing' };

export interface CaptureReply {
  ok: boolean;
  tracked: boolean;
}

// ---- WebSocket frames ----

export interface HelloFrame {
  t: 'hello';
  v: 1;
  client: 'extension';
  version: string;
  session: string;
  last_acked_seq?: number;
  /** pairing: our nonce for this connection (PROTOCOL.md "Pairing") */
  auth?: { v: 1; nonce: string };
}

export interface BatchFrame extends RecordsByKind {
  t: 'batch';
  seq: number;
  sent_at: number;
  tab_id?: number;
  page_url?: string;
}

export type ServerFrame =
  | { t: 'welcome'; v: number; server_version?: string; max_frame?: number; max_events_per_batch?: number; resume_from_seq: number; auth?: { v: number; nonce: string; proof: string; tofu?: boolean } }
  | { t: 'ack'; seq: number; accepted?: number; rejected?: number; errors?: Array<{ index: number; kind: string; code: string; message: string }> }
  | { t: 'nack'; seq: number; code?: string; retry_after_ms?: number; resume_from_seq?: number }
  | { t: 'error'; code: string; message?: string; retry_after_ms?: number; seq?: number }
  | { t: 'cmd'; id: string; type: string; params?: unknown; tab_id?: number; deadline_ms?: number }
  | { t: 'ping'; ts: number }
  | { t: 'pong'; ts: number };

export interface ResultFrame {
  t: 'result';
  id: string;
  status: 'complete' | 'error' | 'timeout';
  result?: unknown;
  error?: string;
}

export const DEFAULT_SERVER_PORT = 7890;

/**
 * Set on <html> while `interact` dispatches events in the page (sw/page/act.ts); its value is the
 * window's expiry (epoch ms). The page hook leaves events seen inside the window to the worker,
 * which records them with source "agent".
 */
export const AGENT_MARK = 'data-gasoline-agent';
