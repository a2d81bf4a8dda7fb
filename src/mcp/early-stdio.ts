/**
 * A standalone process's first milliseconds. An agent waits on `initialize` before anything
 * else, and a standalone process loads zod, the SDK, the tool schemas, uWebSockets.js and its
 * workers (~0.5 s here) before its MCP server could answer. So, before any of that, the first line
 * is read and, if it is a plain initialize, answered from the answers the build recorded from the
 * same server (./recorded-answers.ts). Every byte read is then handed back to stdin for the real
 * transport, which hands the initialize to the SDK as usual; the SDK's identical answer is dropped
 * (`StdioLineTransport.dropAnswerTo`). Issue 17: first initialize < 150 ms after spawn.
 *
 * Imports nothing but node built-ins, the stdout writer and the recorded answers: bin/gasoline
 * loads it before it knows anything else. A first line it is unsure of is left to the server.
 */
import type { Readable } from 'node:stream';
import { initializeResult, loadAnswers } from './recorded-answers.js';
import { StdoutWriter } from './stdout-writer.js';

export interface EarlyStdio {
  /** the one writer of stdout, to be used by the server from here on */
  readonly writer: StdoutWriter;
  /** the id of the initialize answered early, or null when the server must answer it */
  answeredId(): string | number | null;
  /**
   * Settles once the first line is answered or left to the server (or stdin ends first). The
   * engine's loading waits for it, bounded (bin/gasoline): started at once, its module reads and
   * compiles took turns with the stdin read: ~4 ms on the first answer (PERFORMANCE.md "Cold start").
   */
  readonly decided: Promise<void>;
  /** stops reading and puts every byte read so far back into stdin, for the server's transport */
  handOver(): void;
}

/** bytes held while the engine loads; an agent sends a few lines, not this */
const MAX_HELD = 8 * 1024 * 1024;
/** a first line longer than any initialize is the server's to handle */
const MAX_FIRST_LINE = 64 * 1024;

export function earlyStdio(stdin: Readable = process.stdin, stdout: NodeJS.WritableStream & import('node:stream').Writable = process.stdout): EarlyStdio {
  const writer = new StdoutWriter(stdout);
  let answers: ReturnType<typeof loadAnswers> | null;
  try {
    answers = loadAnswers();
  } catch {
    // no recorded answers (a build step skipped): the server answers, only later
    answers = null;
  }
  const chunks: Buffer[] = [];
  let held = 0;
  let decided = answers === null;
  let settle!: () => void;
  const decidedP = new Promise<void>((r) => (settle = r));
  if (decided) settle();
  let answered: string | number | null = null;
  let ended = false;
  const onEnd = (): void => {
    ended = true;
    settle();
  };
  const onData = (chunk: Buffer | string): void => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    chunks.push(buf);
    held += buf.length;
    // the rest waits in the pipe, where the agent's writes block as they would on a slow server
    if (held > MAX_HELD) stdin.pause();
    if (decided) return;
    const all = chunks.length === 1 ? buf : Buffer.concat(chunks);
    const nl = all.indexOf(0x0a);
    if (nl < 0 && all.length < MAX_FIRST_LINE) return;
    decided = true;
    try {
      if (nl < 0 || !answers) return;
      const a = initialize(answers, all.subarray(0, nl).toString('utf8').replace(/\r$/, ''));
      if (!a) return;
      answered = a.id;
      void writer.write({ jsonrpc: '2.0', id: a.id, result: a.result }, 'response');
    } finally {
      settle();
    }
  };
  stdin.on('data', onData);
  stdin.on('end', onEnd);
  return {
    writer,
    decided: decidedP,
    answeredId: () => answered,
    handOver: () => {
      settle();
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.pause();
      // after 'end' nothing can go back, and the server sees a closed stdin and exits: as without us
      if (chunks.length && !ended) stdin.unshift(Buffer.concat(chunks));
    },
  };
}

/** A first line the SDK would accept as a plain initialize, and its answer; null otherwise. */
function initialize(answers: NonNullable<ReturnType<typeof loadAnswers>>, line: string): { id: string | number; result: Record<string, unknown> } | null {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return null;
  }
  if (!m || typeof m !== 'object' || Array.isArray(m)) return null;
  const req = m as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const id = req.id;
  if (req.jsonrpc !== '2.0' || req.method !== 'initialize' || !(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return null;
  const result = initializeResult(answers, req.params);
  return result ? { id, result } : null;
}
