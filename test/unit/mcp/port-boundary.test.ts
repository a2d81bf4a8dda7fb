/**
 * mcp/ reaches the app only through its port (src/mcp/port.ts), and the edge does not reach
 * into mcp/: an import across either line fails here, naming the file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

function importsOf(file: string): string[] {
  return [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^\s*(?:import|export)\b[^'"]*from\s+'([^']+)'/gm)].map((m) => join(file, '..', m[1]!));
}

function crossings(dir: string, forbidden: string[]): string[] {
  return sources(dir).flatMap((f) => importsOf(f).filter((i) => forbidden.some((d) => i.startsWith(d))).map((i) => `${f} → ${i}`));
}

describe('module boundaries of the composition root', () => {
  it('mcp/ imports nothing from transport/ or pool/ (types included)', () => {
    expect(crossings('src/mcp', ['src/transport/', 'src/pool/'])).toEqual([]);
  });

  it('transport/ imports nothing from mcp/', () => {
    expect(crossings('src/transport', ['src/mcp/'])).toEqual([]);
  });
});
