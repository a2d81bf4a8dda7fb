#!/usr/bin/env node
// Bundles src/entry/early.ts into dist/src/entry/early.cjs, the one file bin/gasoline requires
// before anything else (see that file for why). Run by `pnpm build` after tsc.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({
  absWorkingDir: root,
  entryPoints: ['src/entry/early.ts'],
  outfile: 'dist/src/entry/early.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // only node built-ins may be imported from here (test/unit/architecture/imports.test.ts)
  packages: 'external',
  // recorded-answers.ts finds dist/bridge-answers.json from its own URL; the bundle sits at the
  // same depth under dist/src/ as the module did, so the same relative path holds
  inject: ['scripts/import-meta-url.cjs.js'],
  define: { 'import.meta.url': 'import_meta_url' },
  sourcemap: true,
  logLevel: 'warning',
});
