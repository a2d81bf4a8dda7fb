/**
 * The daemon is started with glibc's allocator settings that let the malloc arenas of ended
 * worker threads give their memory back (issue 17 item 2, PERFORMANCE.md "Idle RSS"); a value
 * the user set wins.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DAEMON_MALLOC_TUNABLES, daemonEnv } from '../../../src/bridge/daemon.js';

describe('daemonEnv', () => {
  it('adds the allocator settings, leaving the rest of the environment and the caller’s object as they were', () => {
    const env = { PATH: '/bin', GASOLINE_THREADS: '4' };
    expect(daemonEnv(env)).toEqual({ PATH: '/bin', GASOLINE_THREADS: '4', GLIBC_TUNABLES: DAEMON_MALLOC_TUNABLES });
    expect(env).toEqual({ PATH: '/bin', GASOLINE_THREADS: '4' });
  });

  it('leaves GLIBC_TUNABLES the user set, even empty', () => {
    expect(daemonEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES).toBe('glibc.malloc.arena_max=2');
    expect(daemonEnv({ GLIBC_TUNABLES: '' }).GLIBC_TUNABLES).toBe('');
  });

  it('is a setting node starts with and runs under (no unknown tunable aborts the start)', () => {
    const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(process.env.GLIBC_TUNABLES)'], { env: daemonEnv({ PATH: process.env.PATH }), encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(DAEMON_MALLOC_TUNABLES);
  });

  it('`pnpm start` (the README\'s first command) starts the daemon with the same settings, unless the user set them', () => {
    const start = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(start).toContain(`GLIBC_TUNABLES=\${GLIBC_TUNABLES-${DAEMON_MALLOC_TUNABLES}} node bin/gasoline`);
  });
});
