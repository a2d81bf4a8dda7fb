/**
 * The malloc_trim addon (src/pool/malloc-trim.ts, native/malloc-trim.c): on linux-x64 it loads and
 * gives the C heap's free pages back to the OS, and the committed binary is the one its source
 * builds.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../src/pool/collect-garbage.js';
import { mallocTrim, mallocTrimSupport } from '../../../src/pool/malloc-trim.js';

const ROOT = join(import.meta.dirname, '../../..');
const BINARY = join(ROOT, 'native/linux-x64/malloc-trim.node');
const RECORD = JSON.parse(readFileSync(`${BINARY}.json`, 'utf8')) as { source_sha256: string; sha256: string; compiler: string; flags: string };
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';

function compiler(): string | undefined {
  try {
    return execFileSync('cc', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    return undefined;
  }
}

describe('the committed malloc_trim binary', () => {
  it('was built from the source as it is now, and is the binary the record names', () => {
    expect(RECORD.source_sha256).toBe(sha256(join(ROOT, 'native/malloc-trim.c')));
    expect(RECORD.sha256).toBe(sha256(BINARY));
  });

  // same compiler and flags, same bytes: what is committed is what the source says, nothing else
  it.runIf(linuxX64 && compiler() === RECORD.compiler)('is what the same compiler builds from the source, byte for byte', async () => {
    const out = mkdtempSync(join(tmpdir(), 'gasoline-trim-'));
    try {
      const { build } = (await import(join(ROOT, 'scripts/build-native.mjs'))) as { build(dir: string): { sha256: string } };
      expect(build(out).sha256).toBe(RECORD.sha256);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

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
