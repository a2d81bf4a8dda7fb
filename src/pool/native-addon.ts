/**
 * Loading one of the package's N-API addons (native/<name>.c, committed prebuilt for linux-x64
 * under native/linux-x64/; nothing to compile at install). Each is loaded with RTLD_NOW, so a libc
 * without the call it binds fails at load, never at a call, and a missing or foreign binary is a
 * reason to report, never an exception.
 */
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

export type AddonLoad<T> = { addon: T } | { reason: string; missing?: true };

/** The binary for this platform: under native/ at the package's root, from src/pool or dist/src/pool. */
function binaryPath(name: string): string | undefined {
  return [`../../native/linux-x64/${name}.node`, `../../../native/linux-x64/${name}.node`]
    .map((p) => fileURLToPath(new URL(p, import.meta.url)))
    .find((p) => existsSync(p));
}

/** `name`'s addon with every function in `fns`, or why not (no binary for this platform, none in the package, or it did not load). */
export function loadAddon<T>(name: string, fns: readonly string[]): AddonLoad<T> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { reason: `no ${name} binary for ${process.platform}-${process.arch}`, missing: true };
  const file = binaryPath(name);
  if (!file) return { reason: `native/linux-x64/${name}.node is missing`, missing: true };
  try {
    const mod = { exports: {} as Record<string, unknown> };
    process.dlopen(mod, file, constants.dlopen.RTLD_NOW);
    for (const fn of fns) if (typeof mod.exports[fn] !== 'function') throw new Error(`the addon has no ${fn}()`);
    return { addon: mod.exports as T };
  } catch (e) {
    return { reason: e instanceof Error ? e.message : String(e) };
  }
}
