/**
 * One shutdown path: idempotent, ordered, time-boxed. The first SIGTERM/SIGINT runs it and exits
 * 0; a second signal exits at once. Exceptions that escape a callback are logged and counted —
 * one bad callback must not take every client down with it.
 */
import { log } from './log.js';

export type ShutdownStep = () => Promise<void> | void;

export interface Lifecycle {
  onShutdown(step: ShutdownStep): void;
  shutdown(reason: string, exitCode?: number): Promise<void>;
  readonly stopping: boolean;
  readonly escapedErrors: number;
}

export function createLifecycle(opts: { exit?: (code: number) => void; deadlineMs?: number } = {}): Lifecycle {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const deadlineMs = opts.deadlineMs ?? 8000;
  const steps: ShutdownStep[] = [];
  let running: Promise<void> | undefined;
  let escaped = 0;

  const lc: Lifecycle = {
    onShutdown(step) {
      steps.push(step);
    },
    shutdown(reason, exitCode = 0) {
      running ??= (async () => {
        log.info('shutting down', { reason });
        const timer = setTimeout(() => {
          log.error('shutdown took too long; exiting now', { deadline_ms: deadlineMs });
          exit(exitCode === 0 ? 1 : exitCode);
        }, deadlineMs);
        timer.unref();
        // Steps run in registration order: intake first, workers last.
        for (const step of steps) {
          try {
            await step();
          } catch (e) {
            log.error('shutdown step failed', { error: String(e) });
          }
        }
        clearTimeout(timer);
        exit(exitCode);
      })();
      return running;
    },
    get stopping() {
      return running !== undefined;
    },
    get escapedErrors() {
      return escaped;
    },
  };

  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      log.warn('second signal: exiting now', { signal: sig });
      exit(1);
      return;
    }
    void lc.shutdown(sig, 0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('uncaughtException', (err) => {
    escaped++;
    log.error('uncaught exception (kept running)', { error: String(err), stack: err.stack });
  });
  process.on('unhandledRejection', (err) => {
    escaped++;
    log.error('unhandled rejection (kept running)', { error: String(err) });
  });
  return lc;
}
