/**
 * The daemon's log file: <state_dir>/daemon-<port>.log, size-rotated (.1 … .N, the oldest
 * dropped), 0600. A daemon runs detached with nobody reading its stderr, so this file is where
 * its story is told; it receives lines from src/log.ts only after the scrubber ran, so the
 * redaction rules that protect every egress protect this file too.
 *
 * Writes are synchronous: log lines are rare (starts, stops, failures, not per event), and the
 * line written just before a crash is the one that matters most. A write that fails turns the
 * file off (said once on stderr); logging itself never fails the process.
 */
import { chmodSync, closeSync, fstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { addLogSink } from './log.js';
import { FILE_MODE, makePrivateDir } from './state-dir.js';

export interface LogFileOptions {
  /** rotate before the file passes this size (5 MiB) */
  maxBytes?: number;
  /** rotated files kept beside the live one (3) */
  keep?: number;
  now?: () => number;
}

export function daemonLogPath(stateDir: string, port: number): string {
  return join(stateDir, `daemon-${port}.log`);
}

export class LogFile {
  private fd: number | undefined;
  private size = 0;
  private off = false;
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly now: () => number;

  constructor(
    readonly path: string,
    o: LogFileOptions = {},
  ) {
    this.maxBytes = o.maxBytes ?? 5 * 1024 * 1024;
    this.keep = Math.max(1, o.keep ?? 3);
    this.now = o.now ?? Date.now;
  }

  /** One scrubbed line (ending in a newline), stamped with the time: a file outlives the moment. */
  write(line: string): void {
    if (this.off) return;
    const text = `${new Date(this.now()).toISOString()} ${line}`;
    const bytes = Buffer.byteLength(text);
    try {
      if (this.fd === undefined) this.open();
      if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate();
      writeSync(this.fd!, text);
      this.size += bytes;
    } catch (e) {
      this.off = true;
      this.close();
      try {
        process.stderr.write(`gasoline warn log file disabled {"path":${JSON.stringify(this.path)},"error":${JSON.stringify((e as Error).message)}}\n`);
      } catch {
        // stderr closed as well: nothing left to tell
      }
    }
  }

  close(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already gone
      }
    }
    this.fd = undefined;
  }

  private open(): void {
    makePrivateDir(dirname(this.path));
    // 'a' applies the umask to a new file and keeps an old file's mode: the chmod makes it ours
    this.fd = openSync(this.path, 'a', FILE_MODE);
    chmodSync(this.path, FILE_MODE);
    this.size = fstatSync(this.fd).size;
  }

  /** live → .1 → .2 … → .keep; the oldest is removed */
  private rotate(): void {
    this.close();
    rmSync(`${this.path}.${this.keep}`, { force: true });
    for (let i = this.keep - 1; i >= 1; i--) {
      try {
        renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    renameSync(this.path, `${this.path}.1`);
    this.open();
  }
}

/**
 * Sends every log line to the daemon's rotated file as well as stderr (main.ts, --server mode).
 * Returns the stop function (tests; the process just exits).
 */
export function enableDaemonLog(stateDir: string, port: number, o: LogFileOptions = {}): () => void {
  const file = new LogFile(daemonLogPath(stateDir, port), o);
  const remove = addLogSink((line) => file.write(line));
  return () => {
    remove();
    file.close();
  };
}
