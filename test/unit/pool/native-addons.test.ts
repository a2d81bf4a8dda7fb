/**
 * The package's committed N-API addons (native/<name>.c → native/linux-x64/<name>.node, built by
 * scripts/build-native.mjs): each binary is the one its source builds, and each loads here.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../../src/pool/native-addon.js';

const ROOT = join(import.meta.dirname, '../../..');
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';

function compiler(): string | undefined {
  try {
    return execFileSync('cc', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    return undefined;
  }
}

const ADDONS = { 'malloc-trim': ['trim'], 'thread-policy': ['idle'] } as const;

describe.each(Object.entries(ADDONS))('the committed %s binary', (name, fns) => {
  const binary = join(ROOT, `native/linux-x64/${name}.node`);
  const record = JSON.parse(readFileSync(`${binary}.json`, 'utf8')) as { source_sha256: string; sha256: string; compiler: string; flags: string };

  it('was built from the source as it is now, and is the binary the record names', () => {
    expect(record.source_sha256).toBe(sha256(join(ROOT, `native/${name}.c`)));
    expect(record.sha256).toBe(sha256(binary));
  });

  // same compiler and flags, same bytes: what is committed is what the source says, nothing else
  it.runIf(linuxX64 && compiler() === record.compiler)('is what the same compiler builds from the source, byte for byte', async () => {
    const out = mkdtempSync(join(tmpdir(), `gasoline-${name}-`));
    try {
      const { build } = (await import(join(ROOT, 'scripts/build-native.mjs'))) as { build(dir: string, name: string): { sha256: string } };
      expect(build(out, name).sha256).toBe(record.sha256);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it.runIf(linuxX64)('loads, with its functions', () => {
    const r = loadAddon<Record<string, unknown>>(name, fns);
    expect('addon' in r ? Object.keys(r.addon).sort() : r.reason).toEqual([...fns].sort());
  });
});

describe('an addon that is not there', () => {
  it('is a reason, never an exception', () => {
    const r = loadAddon('no-such-addon', ['x']);
    expect(r).toMatchObject({ missing: true });
    expect('reason' in r && r.reason).toMatch(linuxX64 ? /native\/linux-x64\/no-such-addon\.node is missing/ : /no no-such-addon binary for/);
  });

  it.runIf(linuxX64)('names a function the binary lacks', () => {
    const r = loadAddon('malloc-trim', ['trim', 'nope']);
    expect(r).toEqual({ reason: 'the addon has no nope()' });
  });
});
