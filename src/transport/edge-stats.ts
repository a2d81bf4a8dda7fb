/**
 * Frame- and request-level counters kept on the main thread (the edge is main-only).
 * Record-level counters live in shared memory (src/shm/counters.ts).
 */
export class EdgeStats {
  framesReceived = 0;
  bytesReceived = 0;
  connectionsOpen = 0;
  connectionsTotal = 0;
  httpRequests = 0;
  acksSent = 0;
  readonly refused: Record<string, number> = {};
  readonly frameErrors: Record<string, number> = {};
  readonly nacks: Record<string, number> = {};
  readonly closes: Record<string, number> = {};
  readonly httpStatus: Record<string, number> = {};
  poisoned = 0;
  pongsDropped = 0;
  /** batches (by nack code) and bodies ('overloaded') refused by the edge itself, with no worker task */
  readonly answeredAtEdge: Record<string, number> = {};
  /** gauges read from the live connection set when a snapshot is taken (set by the WebSocket edge) */
  live: (() => Record<string, number>) | undefined;

  bump(map: Record<string, number>, key: string | number, n = 1): void {
    const k = String(key);
    map[k] = (map[k] ?? 0) + n;
  }

  snapshot(): Record<string, unknown> {
    return {
      frames_received: this.framesReceived,
      bytes_received: this.bytesReceived,
      connections_open: this.connectionsOpen,
      connections_total: this.connectionsTotal,
      http_requests: this.httpRequests,
      acks_sent: this.acksSent,
      refused: { ...this.refused },
      frame_errors: { ...this.frameErrors },
      nacks: { ...this.nacks },
      closes: { ...this.closes },
      http_status: { ...this.httpStatus },
      poisoned: this.poisoned,
      pongs_dropped: this.pongsDropped,
      answered_at_edge: { ...this.answeredAtEdge },
      ...this.live?.(),
    };
  }
}
