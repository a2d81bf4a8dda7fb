/**
 * Resumability for one MCP session (the SDK's EventStore): what was sent on the session's SSE
 * streams is kept so a bridge that reconnects with `Last-Event-ID` gets what it missed. Kept
 * bounded, by count and by bytes, oldest first out; a replay that asks for events already gone
 * counts them (`missed`), so the loss is reported, never silent.
 *
 * Event ids are `<streamId>:<n>` with n counting per stream: every stream's events leave in the
 * order they came, so "n ≤ evictedThrough" is exactly what a resume of that stream can no
 * longer get, without remembering any evicted id.
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const EVENT_LIMITS = {
  /** events kept per session */
  maxEvents: 256,
  /** bytes of message JSON kept per session (tool answers are stored too, and can be large) */
  maxBytes: 1024 * 1024,
} as const;

interface Stored {
  streamId: StreamId;
  n: number;
  message: JSONRPCMessage;
  bytes: number;
  /** the SDK's priming event (an empty message): it only hands out a cursor, never replayed */
  priming: boolean;
}

interface StreamMark {
  /** the last n handed out on this stream */
  last: number;
  /** every n ≤ this was evicted */
  evictedThrough: number;
}

/** the SDK's id for the session's GET stream: a bridge resumes it for as long as the session lives */
const STANDALONE_STREAM = '_GET_stream';
const ID_RE = /^(.{1,128}):(\d{1,15})$/;

export class BoundedEventStore implements EventStore {
  private readonly events: Stored[] = [];
  private head = 0;
  private bytes = 0;
  private readonly streams = new Map<StreamId, StreamMark>();
  /** events a resume asked for that had already been evicted */
  missed = 0;
  /** events evicted to stay in bounds */
  evicted = 0;

  constructor(private readonly limits: { maxEvents: number; maxBytes: number } = EVENT_LIMITS) {}

  get size(): number {
    return this.events.length - this.head;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    let mark = this.streams.get(streamId);
    if (!mark) {
      mark = { last: 0, evictedThrough: 0 };
      this.streams.set(streamId, mark);
    }
    const n = ++mark.last;
    const priming = Object.keys(message).length === 0;
    const bytes = priming ? 0 : JSON.stringify(message).length;
    this.events.push({ streamId, n, message, bytes, priming });
    this.bytes += bytes;
    while (this.size > this.limits.maxEvents || (this.bytes > this.limits.maxBytes && this.size > 1)) this.evictOldest();
    return `${streamId}:${n}`;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const id = parse(eventId);
    return id && this.streams.has(id.streamId) ? id.streamId : undefined;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const id = parse(lastEventId);
    const mark = id && this.streams.get(id.streamId);
    if (!id || !mark) throw new Error('unknown event id');
    this.missed += Math.max(0, mark.evictedThrough - id.n);
    for (let i = this.head; i < this.events.length; i++) {
      const e = this.events[i]!;
      if (e.streamId === id.streamId && e.n > id.n && !e.priming) await send(`${e.streamId}:${e.n}`, e.message);
    }
    return id.streamId;
  }

  private evictOldest(): void {
    const e = this.events[this.head++]!;
    this.bytes -= e.bytes;
    this.evicted++;
    const mark = this.streams.get(e.streamId)!;
    mark.evictedThrough = e.n;
    // compact now and then, so the array does not keep every event ever stored
    if (this.head > 64 && this.head * 2 > this.events.length) {
      this.events.splice(0, this.head);
      this.head = 0;
    }
    // a stream whose events are all gone and that is not the standalone one needs no mark beyond
    // what a late resume would ask; marks are tiny, but a session with many requests makes many
    if (this.streams.size > this.limits.maxEvents * 4) this.forgetEmptyStreams();
  }

  private forgetEmptyStreams(): void {
    const live = new Set<StreamId>();
    for (let i = this.head; i < this.events.length; i++) live.add(this.events[i]!.streamId);
    for (const id of this.streams.keys()) if (!live.has(id) && id !== STANDALONE_STREAM) this.streams.delete(id);
  }
}

function parse(eventId: EventId): { streamId: StreamId; n: number } | undefined {
  const m = ID_RE.exec(eventId);
  return m ? { streamId: m[1]!, n: Number(m[2]) } : undefined;
}
