/**
 * A small app bundled by esbuild, minified, with a source map, as a developer's dev server would
 * serve it: the real thing the source-map resolver reads (unit tests serve it over a local HTTP
 * server, the Chromium e2e test from its fixture server).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

export const CART_TS = `export function total(items: number[]): number {
  if (!items.length) {
    throw new Error('empty cart');
  }
  return items.reduce((a, b) => a + b, 0);
}

export function audit(items: number[]): void {
  console.error('cart audit failed', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'.slice(0, 0), items.length);
}
`;

export const MAIN_TS = `import { audit, total } from './cart';

export async function checkout(items: number[]): Promise<number> {
  await Promise.resolve();
  return total(items);
}

export function run(): void {
  audit([]);
  total([]);
}
`;

/** 1-based lines of the source lines the tests look for */
export const THROW_LINE = 3;
export const AUDIT_LINE = 9;

export interface BundledApp {
  dir: string;
  /** the minified bundle's text (its sourceMappingURL comment last) */
  js: string;
  map: string;
}

/**
 * Bundles src/main.ts + src/cart.ts into `<dir>/out/<name>.js` (+ `.js.map` unless inline).
 * `global`: the IIFE's global name, so a page (or node's vm) can call `run()`.
 */
export async function bundleApp(opts: { name?: string; inline?: boolean; global?: string; dir?: string } = {}): Promise<BundledApp> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'gasoline-maps-'));
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cart.ts'), CART_TS);
  writeFileSync(join(dir, 'src', 'main.ts'), MAIN_TS);
  const name = opts.name ?? 'app';
  const outfile = join(dir, 'out', `${name}.js`);
  await build({ entryPoints: [join(dir, 'src', 'main.ts')], bundle: true, minify: true, sourcemap: opts.inline ? 'inline' : 'linked', sourcesContent: true, outfile, format: 'iife', globalName: opts.global ?? 'App', logLevel: 'silent' });
  return { dir, js: readFileSync(outfile, 'utf8'), map: opts.inline ? '' : readFileSync(`${outfile}.map`, 'utf8') };
}
