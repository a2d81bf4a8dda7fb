/**
 * What gasoline's MCP server answers before it needs anything: initialize, the tool list and the
 * guide, recorded at build time from the very server shell the daemon and the standalone run
 * (./recorded-answers-gen.ts writes dist/bridge-answers.json). A bridge answers them itself, so
 * an agent's first requests are answered at once, before any daemon is found or started; the
 * standalone answers the first initialize with them before its engine loads (./early-stdio.ts).
 * test/integration/bridge-answers.test.ts holds them against the SDK's own answers. Only
 * protocolVersion is negotiated per request, as the SDK does. Imports nothing but node:fs.
 */
import { readFileSync } from 'node:fs';

export interface RecordedAnswers {
  version: string;
  latest: string;
  supported: string[];
  /** the initialize result without its negotiated protocolVersion */
  initialize: Record<string, unknown>;
  /** results of parameterless list requests, by method (tools/list, resources/list, …) */
  lists: Record<string, unknown>;
  /** resources/read results, by uri */
  resources: Record<string, unknown>;
  /** the tools the daemon serves: a call of another is refused here, as the standalone server does */
  tools: string[];
}

const ANSWERS_URL = new URL('../../bridge-answers.json', import.meta.url);

export function loadAnswers(url: URL = ANSWERS_URL): RecordedAnswers {
  let a: Partial<RecordedAnswers>;
  try {
    a = JSON.parse(readFileSync(url, 'utf8')) as Partial<RecordedAnswers>;
  } catch (e) {
    throw new Error(`the bridge's recorded answers (${url.pathname}) cannot be read: ${(e as Error).message}; run pnpm build`);
  }
  if (typeof a.latest !== 'string' || !Array.isArray(a.supported) || !isObject(a.initialize) || !isObject(a.lists) || !isObject(a.resources) || !Array.isArray(a.tools)) {
    throw new Error(`the bridge's recorded answers (${url.pathname}) are incomplete; run pnpm build`);
  }
  return a as RecordedAnswers;
}

/** The initialize result for these params, negotiated as the SDK does; null when the SDK would refuse them. */
export function initializeResult(a: RecordedAnswers, params: unknown): Record<string, unknown> | null {
  if (!isObject(params)) return null;
  const { protocolVersion, capabilities, clientInfo } = params as { protocolVersion?: unknown; capabilities?: unknown; clientInfo?: { name?: unknown; version?: unknown } };
  if (typeof protocolVersion !== 'string' || !isObject(capabilities) || !isObject(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') return null;
  return { protocolVersion: a.supported.includes(protocolVersion) ? protocolVersion : a.latest, ...a.initialize };
}

/** A recorded result for this request, or undefined when the daemon must answer it. */
export function recordedResult(a: RecordedAnswers, method: string, params: unknown): unknown {
  if (method === 'resources/read') {
    const uri = isObject(params) ? params.uri : undefined;
    return typeof uri === 'string' && Object.hasOwn(a.resources, uri) ? a.resources[uri] : undefined;
  }
  // a cursor asks for a page after the first; the recorded answers are whole, so there is none
  if (isObject(params) && params.cursor !== undefined) return undefined;
  return Object.hasOwn(a.lists, method) ? a.lists[method] : undefined;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return !!x && typeof x === 'object' && !Array.isArray(x);
}
