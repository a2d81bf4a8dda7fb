/**
 * What became of one ingest item: the one answer the core gives, whatever the transport. No HTTP
 * status or WebSocket frame is in here; transport/ws.ts and transport/http.ts each map an outcome
 * to their wire answer once, through the error catalog (errors.ts).
 */
import type { ErrorCode } from '../../errors.js';
import type { SessionId } from './item.js';
import type { RecordError } from './process.js';

/** a hello's pairing block, as its schema passed it */
export interface HelloAuth {
  v: number;
  nonce: string;
  pair?: { mode: 'code' | 'tofu'; pub: string } | undefined;
}

export type { RecordError };

export type ItemOutcome =
  /** a WebSocket batch stored now (accepted may be 0: every record refused, still acknowledged) */
  | { kind: 'applied'; seq: number; accepted: number; rejected: number; errors?: RecordError[] }
  /** a batch at or below the session's applied seq: acknowledged again, nothing stored */
  | { kind: 'duplicate'; seq: number }
  /** not applied: the producer resends it (overloaded) or resends from resume_from_seq (out_of_order) */
  | { kind: 'nack'; seq: number; code: 'overloaded' | 'out_of_order' }
  /** an HTTP body stored: the counts it answers with (received = accepted + rejected) */
  | { kind: 'stored'; accepted: number; rejected: number; errors?: RecordError[] }
  /** an HTTP body refused before it was read: the client retries later */
  | { kind: 'refused'; code: 'overloaded' }
  /** a frame or body refused as a whole; `seq` when it was a batch decoded before failing */
  | { kind: 'rejected'; code: ErrorCode; message: string; seq?: number }
  | { kind: 'hello'; v: number; client: string; version: string; session: SessionId; last_acked_seq?: number | undefined; token?: string | undefined; auth?: HelloAuth | undefined }
  | { kind: 'ping'; ts: number }
  | { kind: 'pong'; ts: number }
  | { kind: 'result'; id: string; status: string; result?: unknown; error?: unknown }
  /** the side panel asks for its /mcp token; main decides (only a verified producer gets one) */
  | { kind: 'panel_token'; id: string };

/**
 * The outcomes an item slot records inside its commit. A retried item whose slot holds one answers
 * with it, so the replay answers what the first run answered — except the per-record error list,
 * which the slot has no room for (counts, seq and outcome are exact; the details went with the
 * first attempt's answer, or with the worker that died before sending it).
 */
export type CommittedOutcome = Extract<ItemOutcome, { kind: 'applied' | 'duplicate' | 'stored' }>;

/** The slot's copy of an outcome: what a replay of the item answers. */
export function replayed(o: CommittedOutcome): CommittedOutcome {
  switch (o.kind) {
    case 'applied':
      return { kind: 'applied', seq: o.seq, accepted: o.accepted, rejected: o.rejected };
    case 'duplicate':
      return { kind: 'duplicate', seq: o.seq };
    case 'stored':
      return { kind: 'stored', accepted: o.accepted, rejected: o.rejected };
  }
}
