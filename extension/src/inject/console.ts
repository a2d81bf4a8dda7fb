/** console.debug/log/info/warn/error → logs records of type console. */
import { cfg, emit } from './channel.js';
import { formatMessage, serializeArg } from './serialize.js';
import { guard, now } from './util.js';
import type { Json } from '../shared/protocol.js';

const LEVELS = ['debug', 'log', 'info', 'warn', 'error'] as const;
/** A console call with hundreds of arguments is still one bounded record. */
const MAX_ARGS = 20;

export function installConsole(): void {
  for (const level of LEVELS) {
    const original = console[level];
    if (typeof original !== 'function') continue;
    const wrapped = function (this: unknown, ...args: unknown[]): void {
      if (cfg.on) guard(() => record(level, args));
      return original.apply(this, args);
    };
    Object.defineProperty(wrapped, 'name', { value: level });
    console[level] = wrapped;
  }
}

function record(level: (typeof LEVELS)[number], args: unknown[]): void {
  const n = Math.min(args.length, MAX_ARGS);
  const ser: Json[] = new Array(n);
  for (let i = 0; i < n; i++) ser[i] = serializeArg(args[i]);
  const rec: Record<string, Json> = { ts: now(), level, type: 'console', message: formatMessage(args, ser), args: ser, url: location.href };
  if (args.length > n) rec.args_truncated = true;
  if (level === 'error' || level === 'warn') {
    // Where the call came from is worth a stack walk only for the levels people chase.
    const lines = new Error().stack?.split('\n') ?? [];
    // Our own frames come first; the first frame outside the extension is the caller.
    const line = lines.find((l, i) => i > 0 && l.includes(' at ') && !l.includes('chrome-extension://'));
    if (line) rec.source = line.trim().replace(/^at\s+/, '');
  }
  emit('logs', rec);
}
