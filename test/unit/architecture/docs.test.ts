/**
 * The design docs name modules so a newcomer can find where to change what; a name that no longer
 * exists sends them nowhere. Every `src/…`, `workers/…` and `extension/…` path the docs mention in
 * backticks must exist (a folder ends with '/'; build output such as `extension/dist` is not checked).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOCS = ['docs/ARCHITECTURE.md', 'docs/PROTOCOL.md', 'README.md'];

describe('design docs', () => {
  for (const doc of DOCS) {
    it(`${doc} names only modules that exist`, () => {
      const text = readFileSync(join(repo, doc), 'utf8');
      const named = new Set<string>();
      for (const span of text.matchAll(/`([^`\n]+)`/g)) {
        for (const m of span[1]!.matchAll(/(?:^|[\s(,])((?:src|workers|extension|test|bench)\/[\w./-]*)/g)) named.add(m[1]!.replace(/[.,]$/, ''));
      }
      expect(named.size).toBeGreaterThan(doc === 'README.md' ? 2 : 5);
      const missing = [...named].filter((p) => !/(^|\/)dist(\/|$)/.test(p) && !existsSync(join(repo, p)));
      expect(missing).toEqual([]);
    });
  }
});
