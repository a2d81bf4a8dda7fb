/**
 * The profiles' split of observe calls (bench/load/trail-split.ts): the daemon's part read from the
 * client trail the real writer made (src/clients/trail.ts), paired with the bench's own timings in
 * call order, so a slow call says whether it waited in the read or in the hops.
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { splitCalls, trailedCalls } from '../../bench/load/trail-split.js';
import { ClientTrail } from '../../src/clients/trail.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gasoline-split-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function trail(calls: Array<[tool: string, ms: number]>, clientId = 'bench1'): Promise<string> {
  const t = new ClientTrail(join(dir, 'clients'), clientId);
  for (const [tool, ms] of calls) t.append({ tool, args: {}, resultChars: 10, ms });
  await t.close();
  return join(dir, 'clients', `${clientId}.jsonl`);
}

describe('trailedCalls', () => {
  it("returns the last n calls of the tool, oldest first, without the other tools' calls", async () => {
    // warm-up and idle calls first, then the loaded ones, configure between them
    await trail([
      ['observe', 9],
      ['observe', 8],
      ['configure', 50],
      ['observe', 1.5],
      ['configure', 60],
      ['observe', 2.25],
      ['observe', 3],
    ]);
    expect(trailedCalls(dir, 'observe', 3)).toEqual([1.5, 2.25, 3]);
    expect(trailedCalls(dir, 'configure', 1)).toEqual([60]);
  });

  it('is null when the trail holds fewer calls than were timed (rotated, dropped, or none)', async () => {
    expect(trailedCalls(dir, 'observe', 1)).toBeNull();
    await trail([['observe', 1]]);
    expect(trailedCalls(dir, 'observe', 2)).toBeNull();
  });

  it('is null with several clients: their calls cannot be paired by order', async () => {
    await trail([['observe', 1]], 'a1');
    await trail([['observe', 2]], 'b2');
    expect(trailedCalls(dir, 'observe', 1)).toBeNull();
  });

  it('skips a line cut short by a crash', async () => {
    const path = await trail([['observe', 1]]);
    appendFileSync(path, '{"tool":"observe","ms":');
    expect(trailedCalls(dir, 'observe', 1)).toEqual([1]);
  });
});

describe('splitCalls', () => {
  it("pairs each call's total with the daemon's part and names the slowest call's parts", () => {
    const s = splitCalls([5, 12, 6], [2, 3, 5.5])!;
    expect(s.server.count).toBe(3);
    expect(s.server.max_ms).toBeCloseTo(5.5, 2);
    // the hops: 3, 9, 0.5; the slowest call (12 ms) waited 9 of them outside the daemon's part
    expect(s.hops.max_ms).toBeCloseTo(9, 2);
    expect(s.hops.p50_ms).toBeCloseTo(3, 2); // HDR: the bucket's highest value
    expect(s.slowest).toEqual({ total_ms: 12, server_ms: 3, hops_ms: 9 });
  });

  it('never reports negative hops (two clocks, the trail rounded)', () => {
    const s = splitCalls([2], [2.01])!;
    expect(s.hops.max_ms).toBe(0);
    expect(s.slowest.hops_ms).toBe(0);
  });

  it('refuses lists that do not pair', () => {
    expect(splitCalls([1, 2], [1])).toBeNull();
    expect(splitCalls([], [])).toBeNull();
    // one trail line lost shifts the pairing: a call's daemon part would outlast the call
    expect(splitCalls([3, 9, 4], [2.5, 8.5, 3.5])).not.toBeNull();
    expect(splitCalls([3, 9, 4], [8.5, 3.5, 3.9])).toBeNull();
  });
});
