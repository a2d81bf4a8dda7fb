/**
 * Logs go to stderr (or a file), never stdout: stdout belongs to MCP.
 * One line per event: `gasoline <level> <msg> {json}`. A scrub hook lets the redaction
 * engine clean every line before it leaves the process.
 */
import { appendFileSync } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

type Sink = (line: string) => void;

let threshold = ORDER.info;
let sink: Sink = (line) => process.stderr.write(line);
let scrub: (s: string) => string = (s) => s;

export function setLogLevel(level: LogLevel): void {
  threshold = ORDER[level];
}

export function setLogFile(path: string | undefined): void {
  // a log file is ours alone like the state dir (#18 item 6); the mode applies when it is created
  sink = path ? (line) => appendFileSync(path, line, { mode: 0o600 }) : (line) => process.stderr.write(line);
}

export function setLogScrubber(fn: (s: string) => string): void {
  scrub = fn;
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
  try {
    sink(`${scrub(line)}\n`);
  } catch {
    // A closed stderr must never take the process down.
  }
}

export const log = {
  debug: (msg: string, f?: Record<string, unknown>) => emit('debug', msg, f),
  info: (msg: string, f?: Record<string, unknown>) => emit('info', msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => emit('warn', msg, f),
  error: (msg: string, f?: Record<string, unknown>) => emit('error', msg, f),
};
