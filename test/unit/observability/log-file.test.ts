/**
 * The daemon's log file (src/log-file.ts): every log line also lands in a 0600 file, after the
 * scrubber (no secret reaches it), rotated at a size with a fixed number of older files kept.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { daemonLogPath, enableDaemonLog } from '../../../src/log-file.js';
import { log, setLogLevel, setLogScrubber } from '../../../src/log.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';

let dir: string;
let stop: (() => void) | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gasoline-logfile-'));
  setLogLevel('info');
  // the lines still go to stderr as well; keep the test output clean
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  stop?.();
  stop = undefined;
  setLogScrubber((s) => s);
  setLogLevel('info');
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('daemon log file', () => {
  it('writes scrubbed, timestamped lines to a 0600 file named for the port', () => {
    const engine = compileRedaction();
    setLogScrubber((line) => engine.redactText(line));
    const old = process.umask(0o000);
    try {
      stop = enableDaemonLog(dir, 7890);
      log.info('client connected', { token: 'ghp_Zq8mN3xV7bL2kP9wR4tY6uI1oA5sD0fG8hJ2' });
      log.debug('below the level: not written');
    } finally {
      process.umask(old);
    }
    const path = daemonLogPath(dir, 7890);
    expect(path).toBe(join(dir, 'daemon-7890.log'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z gasoline info client connected /);
    expect(text).not.toContain('ghp_Zq8mN3xV7b');
    expect(text).not.toContain('below the level');
  });

  it('rotates at the size bound and keeps `keep` older files, each 0600', () => {
    stop = enableDaemonLog(dir, 1, { maxBytes: 400, keep: 2 });
    for (let i = 0; i < 100; i++) log.warn('line', { i });
    const path = daemonLogPath(dir, 1);
    for (const p of [path, `${path}.1`, `${path}.2`]) {
      expect(statSync(p).size).toBeLessThanOrEqual(400);
      expect(statSync(p).mode & 0o777).toBe(0o600);
    }
    expect(existsSync(`${path}.3`)).toBe(false);
    expect(readFileSync(path, 'utf8')).toContain('{"i":99}');
    expect(readFileSync(`${path}.1`, 'utf8')).not.toContain('{"i":99}');
  });

  it('a file that cannot be written is turned off; logging goes on', () => {
    stop = enableDaemonLog(join(dir, 'missing', '\0bad'), 2);
    expect(() => log.error('still fine')).not.toThrow();
    expect(() => log.error('still fine again')).not.toThrow();
  });
});
