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

// docs/SECURITY.md maps every attack to the test that covers it: the file must exist and hold a
// test of that name, or the row promises a defence nobody checks.
describe('docs/SECURITY.md', () => {
  it('names only tests that exist', () => {
    const text = readFileSync(join(repo, 'docs/SECURITY.md'), 'utf8').replace(/\\\|/g, '|');
    const refs: Array<{ file: string; name: string | undefined }> = [];
    for (const line of text.split('\n').filter((l) => l.startsWith('|'))) {
      const cells = line.split(/(?<!\\)\|/);
      const cell = cells[cells.length - 2] ?? '';
      for (const part of cell.split(';')) {
        const m = /(test\/[\w/.-]+\.test\.ts)(.*)$/.exec(part.trim());
        if (!m) continue;
        const names = m[2]!.split(/,? › /).slice(1);
        if (!names.length) refs.push({ file: m[1]!, name: undefined });
        for (const n of names) refs.push({ file: m[1]!, name: n.replace(/^\(\d+\) /, '').split(/[%…"(]/)[0]!.trim().slice(0, 40) });
      }
    }
    expect(refs.length).toBeGreaterThan(30);
    const broken = refs.filter(({ file, name }) => !existsSync(join(repo, file)) || (name !== undefined && !readFileSync(join(repo, file), 'utf8').includes(name)));
    expect(broken).toEqual([]);
  });
});
