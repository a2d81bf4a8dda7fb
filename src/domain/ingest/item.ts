/**
 * What an ingest item is, as the core sees it: a slice of the shared input arena plus what main
 * knows about it. The thread protocol (pool/messages.ts) carries these shapes unchanged.
 */
import type { HttpRoute } from '../kinds.js';

declare const sessionBrand: unique symbol;
/**
 * A producer's session id, as its hello declared it. Branded so it cannot be confused with the
 * other strings around it (connection ids, client names, command ids).
 */
export type SessionId = string & { readonly [sessionBrand]: true };

/**
 * The one way to make a SessionId: from a hello that passed its schema (which bounds its length),
 * or read back from where one was written (the express board).
 */
export function sessionId(declared: string): SessionId {
  if (declared.length === 0) throw new RangeError('a session id is never empty');
  return declared as SessionId;
}

interface ItemBase {
  /** byte offset of the frame/body in the input arena */
  off: number;
  len: number;
  /** index into the item-status slots; lets a retried task skip what a crashed attempt committed */
  slot: number;
  /** admission control said no: decode only enough to answer nack/503, store nothing */
  shed: boolean;
  /** when the frame or body reached the edge: epoch ms, sub-ms precision (alert latency) */
  edgeAt?: number;
}

export interface WsItem extends ItemBase {
  src: 'ws';
  /** null until this connection's hello was processed */
  session: SessionId | null;
  /** last seq applied for the session; -1 when the session has no baseline yet */
  applied: number;
  /** the express board entry this frame is also posted on (pool/express.ts) */
  express?: number;
}

export interface HttpItem extends ItemBase {
  src: 'http';
  route: HttpRoute;
}

export type TaskItem = WsItem | HttpItem;
