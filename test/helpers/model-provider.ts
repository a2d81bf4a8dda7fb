/**
 * A real OpenAI-compatible chat completions server for tests (node:http on 127.0.0.1:0): it keeps
 * every request (headers and body) and answers each by the next plan — a streamed SSE answer, an
 * HTTP error, a silence, a stream that breaks — so the adapter's bounds meet real sockets.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Plan {
  /** an HTTP status other than 200: answered with a small JSON body */
  status?: number;
  /** the answer's pieces, each one SSE event of a chat completion chunk */
  pieces?: string[];
  /** wait before the headers */
  delayMs?: number;
  /** wait between pieces */
  pieceDelayMs?: number;
  /** headers sent, then nothing (a provider that stalls before the first byte) */
  stallAfterHeaders?: boolean;
  /** no answer at all */
  hang?: boolean;
  /** raw body text instead of pieces (malformed streams) */
  raw?: string;
  /** end without [DONE] */
  noDone?: boolean;
  /** destroy the socket after the pieces (a stream that breaks off) */
  breakAfter?: boolean;
}

export interface Recorded {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export const sseChunk = (piece: string): string => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: piece } }] })}\n\n`;

export class RecordingProvider {
  readonly requests: Recorded[] = [];
  /** consumed one per request; the last one repeats */
  plans: Plan[] = [{ pieces: ['conclusion: ok'] }];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<RecordingProvider> {
    let self: RecordingProvider | undefined;
    const server = createServer((req, res) => void self!.handle(req, res));
    self = new RecordingProvider(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return self;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    this.requests.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
    const plan = (this.plans.length > 1 ? this.plans.shift() : this.plans[0]) ?? {};
    if (plan.hang) return;
    if (plan.delayMs) await sleep(plan.delayMs);
    if (plan.status && plan.status !== 200) {
      res.writeHead(plan.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'planned failure' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    if (plan.stallAfterHeaders) return;
    if (plan.raw !== undefined) {
      res.end(plan.raw);
      return;
    }
    for (const p of plan.pieces ?? []) {
      if (res.destroyed) return;
      res.write(sseChunk(p));
      if (plan.pieceDelayMs) await sleep(plan.pieceDelayMs);
    }
    if (plan.breakAfter) {
      res.socket?.destroy();
      return;
    }
    res.end(plan.noDone ? '' : 'data: [DONE]\n\n');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
