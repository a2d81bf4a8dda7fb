/**
 * Times a tool handler and reports the finished call (metrics, the client's trail). Kept apart
 * from the tool definitions so it wraps whatever registers them. The hook sees arguments only
 * after egress redaction, and a failing hook never fails the call: observability is not allowed
 * to break what it observes.
 */
import { ERRORS } from '../errors.js';
import { log } from '../log.js';
import type { ToolCall } from './port.js';
import type { ToolResult } from './tools/context.js';

export type OnCall = (c: ToolCall) => void;

export interface CallHook {
  clientId: string;
  onCall: OnCall | undefined;
  /** egress redaction of the arguments (the rule set in force) */
  redact: (v: unknown) => unknown;
}

let hookFailureLogged = false;

/** `E`: what the SDK hands a handler beside its arguments (the request's signal, notifications, _meta) */
export function timedTool<A, E>(h: CallHook, tool: string, fn: (a: A, extra: E) => Promise<ToolResult>): (a: A, extra: E) => Promise<ToolResult> {
  const onCall = h.onCall;
  if (!onCall) return fn;
  return async (a: A, extra: E) => {
    const t0 = performance.now();
    let r: ToolResult | undefined;
    try {
      r = await fn(a, extra);
      return r;
    } finally {
      const ms = performance.now() - t0;
      const done = r;
      // reported once the answer is on its way: the answer leaves in this turn's microtasks, and the
      // trail's file write (a thread-pool wake that can take main's core on a busy machine), the
      // argument redaction and the metrics would otherwise run ahead of it (issue 17 item 3)
      setImmediate(() => {
        try {
          const isError = done ? done.isError === true : true;
          const code = done ? (isError ? errorCode(done) : undefined) : 'internal';
          onCall({ clientId: h.clientId, tool, args: h.redact(a), resultChars: done ? textLength(done) : 0, ms, isError, ...(code ? { code } : {}) });
        } catch (e) {
          if (!hookFailureLogged) log.warn('tool call hook failed; the call itself was answered', { error: (e as Error).message });
          hookFailureLogged = true;
        }
      });
    }
  };
}

function textLength(r: ToolResult): number {
  let n = 0;
  for (const c of r.content) if (c.type === 'text') n += c.text.length;
  return n;
}

/** Error answers start with their catalog code (error-result.ts); only a catalog code is kept. */
function errorCode(r: ToolResult): string | undefined {
  const first = r.content[0];
  if (first?.type !== 'text') return undefined;
  const m = /^([a-z_]{1,40}):/.exec(first.text);
  return m && Object.hasOwn(ERRORS, m[1]!) ? m[1] : undefined;
}
