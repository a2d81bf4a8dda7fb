/**
 * `--compare`'s ingest CPU of two daemons side by side: the per-thread CPU clock moves with work
 * done (ns, not ticks), two real daemons take alternated bursts and each reports its own cost, and
 * a base that is not built is "not measured" with the reason before anything starts.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { threadCpuNs } from '../../bench/load/paired-ingest.js';
import { ROOT } from '../../bench/load/server-proc.js';

// the producers are worker threads that load their own file: run the built bench, as `pnpm bench` does
const { pairedIngest } = (await import(pathToFileURL(join(ROOT, 'dist/bench/load/paired-ingest.js')).href)) as typeof import('../../bench/load/paired-ingest.js');

describe('threadCpuNs', () => {
  it('counts this process’s CPU in ns, finer than a 10 ms tick', () => {
    const a = threadCpuNs(process.pid);
    // 30 ms of this process's CPU, not of wall time: on a busy machine 30 ms of wall time gave
    // this thread 18 (a clean run failed on it)
    const t0 = process.cpuUsage();
    let x = 0;
    for (let u = process.cpuUsage(t0); (u.user + u.system) / 1000 < 30; u = process.cpuUsage(t0)) for (let i = 0; i < 1000; i++) x += Math.sqrt(x + 1);
    const b = threadCpuNs(process.pid);
    expect(x).toBeGreaterThan(0);
    expect(b - a).toBeGreaterThan(20e6);
    expect(b - a).toBeLessThan(2e9);
    expect((b - a) % 10_000_000).not.toBe(0);
  });
});

describe('pairedIngest', () => {
  it('gives two real daemons the same bursts in turn and reads each one’s CPU per event', { timeout: 90_000 }, async () => {
    const r = await pairedIngest(ROOT, ROOT, { rounds: 2, burstMs: 150 });
    if (typeof r === 'string') throw new Error(r);
    expect(r.rounds).toBe(2);
    expect(r.base_events).toBeGreaterThan(1000);
    expect(r.head_events).toBeGreaterThan(1000);
    // a daemon's whole path per event: more than nothing, less than a millisecond
    for (const us of [r.base_us, r.head_us]) {
      expect(us).toBeGreaterThan(0.1);
      expect(us).toBeLessThan(1000);
    }
    expect(r.ratio).toBeGreaterThan(0);
  });

  it('says which build is missing before starting either', async () => {
    expect(await pairedIngest('/nonexistent-gasoline-build', ROOT)).toMatch(/^base: .* is missing/);
  });
});
