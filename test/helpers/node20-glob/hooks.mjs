/**
 * Module resolve hook (runs on the loader thread, registered by ./preload.mjs): every import of
 * `fs` / `node:fs` except the shim's own resolves to ./fs-with-glob.mjs.
 */
const SHIM = new URL('./fs-with-glob.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== SHIM) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
