#!/usr/bin/env node
// Bundles the extension into extension/dist/ (load that folder unpacked in Chrome).
//   node extension/build.mjs [--out DIR] [--watch]
import { build, context } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outIdx = args.indexOf('--out');
const outdir = resolve(outIdx >= 0 ? args[outIdx + 1] : join(here, 'dist'));
const watch = args.includes('--watch');

const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
// Chrome derives the extension id from this key; the server's default Origin allowlist names that id.
const key = readFileSync(join(here, 'key.pub.b64'), 'utf8').trim();

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));
manifest.key = key;
// Chrome only accepts dotted integers here.
manifest.version = String(pkg.version).replace(/[^0-9.].*$/, '');
writeFileSync(join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2));
for (const f of ['popup.html', 'popup.css']) cpSync(join(here, 'src', 'popup', f), join(outdir, f));
for (const f of ['panel.html', 'panel.css']) cpSync(join(here, 'src', 'panel', f), join(outdir, f));
// axe-core ships prebuilt; the service worker injects it into a tab only when an audit is asked for.
mkdirSync(join(outdir, 'vendor'), { recursive: true });
const axeDir = dirname(createRequire(import.meta.url).resolve('axe-core/package.json'));
cpSync(join(axeDir, 'axe.min.js'), join(outdir, 'vendor', 'axe.min.js'));
cpSync(join(axeDir, 'LICENSE'), join(outdir, 'vendor', 'axe-core.LICENSE'));

/**
 * The SDK's client imports its ajv-based output-schema validator unconditionally. Ajv compiles
 * schemas with `new Function`, which an extension page's CSP forbids, and our tools declare no
 * output schema (the panel passes its own validator: src/panel/mcp.ts), so its ~290 KB of ajv,
 * ajv-formats and fast-uri are left out: the import resolves to a class that refuses to be used.
 */
const noAjv = {
  name: 'no-ajv',
  setup(b) {
    b.onResolve({ filter: /\/validation\/ajv-provider\.js$/ }, (a) => (a.importer.includes('@modelcontextprotocol') ? { path: join(here, 'src', 'panel', 'no-ajv.ts') } : undefined));
  },
};

const options = {
  entryPoints: {
    inject: join(here, 'src/inject/index.ts'),
    content: join(here, 'src/content/index.ts'),
    sw: join(here, 'src/sw/index.ts'),
    popup: join(here, 'src/popup/popup.ts'),
    // the side panel bundles the MCP SDK's client (streamable HTTP) for its own session
    panel: join(here, 'src/panel/panel.ts'),
  },
  plugins: [noAjv],
  outdir,
  bundle: true,
  // Content scripts and a non-module service worker are classic scripts.
  format: 'iife',
  platform: 'browser',
  target: 'chrome116',
  sourcemap: 'linked',
  minify: false,
  legalComments: 'none',
  define: { __GASOLINE_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
};

if (watch) {
  const ctx = await context(options);
  await ctx.watch();
  process.stdout.write(`watching; output in ${outdir}\n`);
} else {
  await build(options);
  process.stdout.write(`built extension into ${outdir}\n`);
}
