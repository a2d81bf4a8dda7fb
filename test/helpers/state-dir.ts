/**
 * A state dir of its own per test process or server: client state is saved there (#16) and a
 * shared one would carry one test's checkpoints, noise rules and streaming config into the next.
 * Every dir made here is removed when the test file ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];
// registered when a test file imports this module (collection time): a hook cannot be added from inside a test
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function tempStateDir(prefix = 'gasoline-state-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
