/**
 * The malloc_trim addon (src/pool/malloc-trim.ts, native/malloc-trim.c): on linux-x64 it loads and
 * gives the C heap's free pages back to the OS (the committed binary: native-addons.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../src/pool/collect-garbage.js';
import { mallocTrim, mallocTrimSupport } from '../../../src/pool/malloc-trim.js';

const linuxX64 = process.platform === 'linux' && process.arch === 'x64';

describe.runIf(linuxX64)('malloc_trim on linux-x64', () => {
  it('loads', () => {
    expect(mallocTrimSupport()).toEqual({ available: true });
  });

  it("gives back the pages of free chunks between live ones, which free() alone keeps", async () => {
    // 96 MB of 16 KiB buffers (malloc'd, below the mmap threshold), one in 32 kept: the freed ones
    // coalesce into ~0.5 MB holes between live chunks, not at the heap's top, so free() returns none
    let all: Buffer[] = [];
    for (let i = 0; i < 6144; i++) all.push(Buffer.allocUnsafeSlow(16 * 1024).fill(i & 0xff));
    const kept = all.filter((_, i) => i % 32 === 31);
    all = [];
    collectGarbage();
    // V8 frees dead array buffers' memory on a background task after the collection
    await new Promise((r) => setTimeout(r, 300));
    const r = mallocTrim();
    expect(kept.length).toBe(192);
    expect(r).toBeDefined();
    expect(r!.releasedBytes).toBeGreaterThan(32 * 1024 * 1024);
  });
});

describe.skipIf(linuxX64)('malloc_trim elsewhere', () => {
  it('says why it does not run, and trims nothing', () => {
    expect(mallocTrimSupport()).toMatchObject({ available: false });
    expect(mallocTrim()).toBeUndefined();
  });
});
