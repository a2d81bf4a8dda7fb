import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// package.json sits two levels up from both src/ and dist/src/
function readVersion(): string {
  for (const p of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(p) as { name?: string; version?: string };
      if (pkg.name === 'gasoline' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

export const VERSION = readVersion();
