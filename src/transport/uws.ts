/**
 * Loads the native uWebSockets.js binary directly. The package's own entry point silently
 * falls back to a pure-JS implementation when the binary fails, and that fallback prints to
 * stdout (which belongs to MCP) — so we never load the entry point, and fail loudly instead.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

export class NativeUwsError extends Error {
  override name = 'NativeUwsError';
}

function load(): typeof UWS {
  const pkgDir = dirname(require.resolve('uWebSockets.js/package.json'));
  const file = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  let mod: typeof UWS;
  try {
    mod = require(file) as typeof UWS;
  } catch (e) {
    throw new NativeUwsError(
      `the native uWebSockets.js binary did not load (${file}): ${(e as Error).message}. ` +
        `Gasoline needs the native build (Node ABI ${process.versions.modules}, glibc); it will not run on the JS fallback.`,
    );
  }
  if (typeof mod.App !== 'function' || typeof mod.us_listen_socket_close !== 'function') {
    throw new NativeUwsError(`${file} loaded but does not look like uWebSockets.js`);
  }
  return mod;
}

export const uws: typeof UWS = load();
export type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket } from 'uWebSockets.js';
