/**
 * The package's version, read from package.json beside src/ or dist/src/. Read as a file, not
 * with require(): the bridge loads this module and counts its megabytes (src/bridge/index.ts).
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  // package.json sits two levels up from both src/ and dist/src/
  for (const p of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(p, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gasoline' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

export const VERSION = readVersion();
