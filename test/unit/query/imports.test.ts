/**
 * Issue 15: the read engine sits below the tools. Nothing under pool/, workers/, domain/, shm/ or
 * query/ imports mcp/, and query/ knows no caller (clients/, pool/, transport/, workers/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** Every relative import of a file, resolved to a path from the repository root. */
function imports(file: string): string[] {
  const src = readFileSync(join(root, file), 'utf8');
  return [...src.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)].map((m) => relative(root, resolve(root, file, '..', m[1]!)));
}

const offenders = (dirs: string[], banned: string[]): string[] =>
  dirs.flatMap(files).flatMap((f) => imports(f).filter((i) => banned.some((b) => i.startsWith(b))).map((i) => `${f} → ${i}`));

describe('import rules', () => {
  it('nothing below the tools imports mcp/', () => {
    expect(offenders(['src/pool', 'workers', 'src/domain', 'src/shm', 'src/query'], ['src/mcp/'])).toEqual([]);
  });

  it('the query module imports no caller', () => {
    expect(offenders(['src/query'], ['src/mcp/', 'src/clients/', 'src/pool/', 'src/transport/', 'workers/'])).toEqual([]);
  });

  it('the rule sees imports at all', () => {
    expect(imports('src/query/fold-query.ts')).toContain('src/query/filter.js');
  });
});
