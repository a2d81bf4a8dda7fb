/**
 * Logs go to stderr, never stdout: stdout belongs to MCP.
 * One line per event: `gasoline <level> <msg> {json}`. A scrub hook lets the redaction
 * engine clean every line before it leaves the process; extra sinks (the daemon's log file,
 * src/log-file.ts) receive the line only after it was scrubbed, so no secret reaches a file.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let threshold = ORDER.info;
let scrub: (s: string) => string = (s) => s;
const sinks = new Set<(line: string) => void>();

export function setLogLevel(level: LogLevel): void {
  threshold = ORDER[level];
}

export function setLogScrubber(fn: (s: string) => string): void {
  scrub = fn;
}

/** Adds a destination for scrubbed lines (each ends with a newline); returns its removal. */
export function addLogSink(fn: (line: string) => void): () => void {
  sinks.add(fn);
  return () => sinks.delete(fn);
}

function emit(level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  let line = `gasoline ${level} ${msg}`;
  if (fields) {
    try {
      line += ` ${JSON.stringify(fields)}`;
    } catch {
      line += ' {"fields":"unserializable"}';
    }
  }
  const out = `${scrub(line)}\n`;
  try {
    process.stderr.write(out);
  } catch {
    // A closed stderr must never take the process down.
  }
  for (const sink of sinks) {
    try {
      sink(out);
    } catch {
      // a sink handles its own failures; one that throws anyway must not stop the others
    }
  }
}

export const log = {
  debug: (msg: string, f?: Record<string, unknown>) => emit('debug', msg, f),
  info: (msg: string, f?: Record<string, unknown>) => emit('info', msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => emit('warn', msg, f),
  error: (msg: string, f?: Record<string, unknown>) => emit('error', msg, f),
};
