/**
 * A bridge's first milliseconds. An agent waits on `initialize` before anything else, and loading
 * the SDK, zod and the tool schemas costs ~150 ms here, three times node's own start. So before
 * any of that loads, the agent's initialize is answered from what the build recorded the SDK
 * answering (dist/bridge-answers.json, written by src/bridge/answers-gen.ts from the bridge's own
 * server). The request is then handed to the real server like every other line (its bytes go back
 * into stdin), which answers it again, identically; that second answer is dropped (`dropEcho`).
 *
 * Imports nothing but node built-ins and the stdout writer: this module is what bin/gasoline loads
 * before it knows anything else. Anything it is unsure of (another mode by flag, variable or config
 * file, a config file it cannot read, no recorded answers, a first line that is not a plain
 * initialize) is left to the server.
 */
import { readFileSync } from 'node:fs';
import { StdoutWriter } from '../mcp/stdout-writer.js';

/** What the build recorded: the initialize result without its negotiated protocolVersion. */
export interface RecordedAnswers {
  version: string;
  latest: string;
  supported: string[];
  result: Record<string, unknown>;
}

export interface EarlyStart {
  /** the one writer of stdout, to be used by the bridge from here on */
  readonly writer: StdoutWriter;
  /** the id of the initialize answered early, or null when the server must answer it */
  readonly answeredId: () => string | number | null;
  /** stops reading and puts every byte read so far back into stdin, for the server's transport */
  handOver(): void;
}

/** The flags and variables that make this process something other than a plain bridge. */
const NOT_PLAIN = ['--server', '--standalone', '--connect', '--stop', '--status', '--help', '-h', '--version', '-v'];
const ANSWERS_URL = new URL('../../bridge-answers.json', import.meta.url);

export function isPlainBridge(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (argv.some((a) => NOT_PLAIN.includes(a.split('=')[0]!))) return false;
  const mode = env.GASOLINE_MODE;
  if (mode !== undefined && mode !== '' && mode !== 'bridge') return false;
  if (env.GASOLINE_SERVER !== undefined && env.GASOLINE_SERVER !== '') return false;
  const file = configFile(argv) ?? (env.GASOLINE_CONFIG || undefined);
  return file === undefined || configSaysBridge(file);
}

function configFile(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--config') return argv[i + 1] ?? '';
    if (a.startsWith('--config=')) return a.slice('--config='.length);
  }
  return undefined;
}

/** A config file may set the mode; one we cannot read is the CLI's to report, not ours to guess. */
function configSaysBridge(file: string): boolean {
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { mode?: unknown } | null;
    return !!c && typeof c === 'object' && (c.mode === undefined || c.mode === 'bridge');
  } catch {
    return false;
  }
}

export function loadAnswers(url: URL = ANSWERS_URL): RecordedAnswers | null {
  try {
    const a = JSON.parse(readFileSync(url, 'utf8')) as RecordedAnswers;
    return typeof a.latest === 'string' && Array.isArray(a.supported) && a.result && typeof a.result === 'object' ? a : null;
  } catch {
    return null;
  }
}

/** The SDK's negotiation: the client's version when supported, else the latest. */
export function initializeAnswer(answers: RecordedAnswers, line: string): { id: string | number; response: Record<string, unknown> } | null {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return null;
  }
  if (!m || typeof m !== 'object') return null;
  const req = m as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { protocolVersion?: unknown; capabilities?: unknown; clientInfo?: { name?: unknown; version?: unknown } } };
  const id = req.id;
  if (req.jsonrpc !== '2.0' || req.method !== 'initialize' || !(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return null;
  const p = req.params;
  // only a request the SDK would accept as is: anything else gets the SDK's own answer (an error)
  if (!p || typeof p.protocolVersion !== 'string' || !p.capabilities || typeof p.capabilities !== 'object' || typeof p.clientInfo?.name !== 'string' || typeof p.clientInfo.version !== 'string') return null;
  const protocolVersion = answers.supported.includes(p.protocolVersion) ? p.protocolVersion : answers.latest;
  return { id, response: { jsonrpc: '2.0', id, result: { protocolVersion, ...answers.result } } };
}

/** Starts reading stdin and answers a first-line initialize at once; null when this is no plain bridge. */
export function earlyStart(argv: readonly string[], env: NodeJS.ProcessEnv, stdin: NodeJS.ReadableStream & { unshift(b: Buffer): void } = process.stdin): EarlyStart | null {
  if (!isPlainBridge(argv, env)) return null;
  const answers = loadAnswers();
  const writer = new StdoutWriter(process.stdout);
  if (!answers) return { writer, answeredId: () => null, handOver: () => undefined };
  const chunks: Buffer[] = [];
  let decided = false;
  let answered: string | number | null = null;
  let ended = false;
  const onEnd = (): void => {
    ended = true;
  };
  const onData = (chunk: Buffer | string): void => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    chunks.push(buf);
    if (decided) return;
    const all = chunks.length === 1 ? buf : Buffer.concat(chunks);
    const nl = all.indexOf(0x0a);
    // a first line far longer than any initialize is the server's to handle
    if (nl < 0 && all.length < 64 * 1024) return;
    decided = true;
    if (nl < 0) return;
    const a = initializeAnswer(answers, all.subarray(0, nl).toString('utf8').replace(/\r$/, ''));
    if (!a) return;
    answered = a.id;
    void writer.write(a.response, 'response');
  };
  stdin.on('data', onData);
  stdin.on('end', onEnd);
  return {
    writer,
    answeredId: () => answered,
    handOver: () => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.pause();
      // after 'end' nothing can go back, and the server sees a closed stdin and exits: same as without us
      if (chunks.length && !ended) stdin.unshift(Buffer.concat(chunks));
    },
  };
}
