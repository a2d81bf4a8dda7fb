/** Uncaught exceptions and unhandled rejections → logs records of type exception. */
import { cfg, emit } from './channel.js';
import { serializeArg } from './serialize.js';
import { guard, now, topFrame, truncate } from './util.js';
import type { Json } from '../shared/protocol.js';

const MAX_STACK = 10 * 1024;

export function installErrors(): void {
  addEventListener(
    'error',
    (e) => {
      // Resource load failures also arrive here (target is the element), but are not ErrorEvents.
      if (!cfg.on || !(e instanceof ErrorEvent)) return;
      guard(() => {
        const err = e.error as unknown;
        const stack = err instanceof Error ? err.stack : undefined;
        const rec: Record<string, Json> = {
          ts: now(),
          level: 'error',
          type: 'exception',
          message: truncate(String(e.message || (err instanceof Error ? `${err.name}: ${err.message}` : 'Script error')), 10 * 1024).text,
          url: location.href,
        };
        if (stack) rec.stack = truncate(stack, MAX_STACK).text;
        if (e.filename) {
          rec.filename = e.filename;
          rec.lineno = e.lineno;
          rec.colno = e.colno;
          rec.source = `${e.filename}:${e.lineno}`;
        }
        emit('logs', rec);
      });
    },
    { capture: true },
  );

  addEventListener('unhandledrejection', (e) => {
    if (!cfg.on) return;
    guard(() => {
      const reason = e.reason as unknown;
      const isErr = reason instanceof Error;
      const rec: Record<string, Json> = {
        ts: now(),
        level: 'error',
        type: 'exception',
        message: `Unhandled rejection: ${isErr ? `${reason.name}: ${reason.message}` : typeof reason === 'string' ? reason : JSON.stringify(serializeArg(reason))}`.slice(0, 10 * 1024),
        url: location.href,
      };
      if (!isErr) rec.args = [serializeArg(reason)];
      const stack = isErr ? reason.stack : undefined;
      if (stack) {
        rec.stack = truncate(stack, MAX_STACK).text;
        const f = topFrame(stack);
        if (f) {
          rec.filename = f.filename;
          rec.lineno = f.lineno;
          rec.colno = f.colno;
          rec.source = `${f.filename}:${f.lineno}`;
        }
      }
      emit('logs', rec);
    });
  });
}
