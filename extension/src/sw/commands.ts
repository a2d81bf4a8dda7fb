/**
 * Server → extension commands (`cmd` frames, PROTOCOL.md §1). A handler is registered per
 * `type`; every command gets exactly one `result` frame: complete, error, or timeout at its
 * deadline. Unknown types answer an error naming the ones we know, so the server can tell an old
 * extension from a broken one.
 */
import type { ResultFrame, ServerFrame } from '../shared/protocol.js';

export interface CommandContext {
  /** tab the command targets, if the server named one */
  tabId: number | undefined;
  /** aborted at the deadline; long handlers should stop work */
  signal: AbortSignal;
}

export type CommandHandler = (params: unknown, ctx: CommandContext) => Promise<unknown>;

const DEFAULT_DEADLINE_MS = 10_000;
const MAX_HANDLERS = 64;

export class CommandRegistry {
  private readonly handlers = new Map<string, CommandHandler>();

  register(type: string, handler: CommandHandler): void {
    if (this.handlers.has(type)) throw new Error(`command ${type} is already registered`);
    if (this.handlers.size >= MAX_HANDLERS) throw new RangeError('too many command handlers');
    this.handlers.set(type, handler);
  }

  types(): string[] {
    return [...this.handlers.keys()];
  }

  async dispatch(cmd: Extract<ServerFrame, { t: 'cmd' }>): Promise<ResultFrame> {
    const handler = this.handlers.get(cmd.type);
    if (!handler) {
      return { t: 'result', id: cmd.id, status: 'error', error: `unknown command type ${JSON.stringify(cmd.type)}; this extension handles: ${this.types().join(', ') || 'none'}` };
    }
    const deadline = cmd.deadline_ms && cmd.deadline_ms > 0 ? cmd.deadline_ms : DEFAULT_DEADLINE_MS;
    const ctl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<ResultFrame>((resolve) => {
      timer = setTimeout(() => {
        ctl.abort();
        resolve({ t: 'result', id: cmd.id, status: 'timeout', error: `${cmd.type} did not finish within ${deadline} ms` });
      }, deadline);
    });
    const run = (async (): Promise<ResultFrame> => {
      try {
        const result = await handler(cmd.params ?? {}, { tabId: cmd.tab_id, signal: ctl.signal });
        return { t: 'result', id: cmd.id, status: 'complete', result };
      } catch (e) {
        // Chrome rejects an API call with "No SW" when this very worker is being stopped: the agent
        // should hear that the extension went away (and retry), not a cryptic failure of its command
        if (e instanceof Error && e.message === 'No SW') return { t: 'result', id: cmd.id, status: 'error', error: `extension_disconnected: the extension's service worker stopped while running ${cmd.type}; it restarts on its own, retry the call` };
        return { t: 'result', id: cmd.id, status: 'error', error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
      }
    })();
    try {
      return await Promise.race([run, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
