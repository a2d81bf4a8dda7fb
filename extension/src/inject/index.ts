/**
 * The MAIN-world hook, run at document_start before the page's scripts. Installs every capture
 * once per document; a second copy (the extension was reloaded and re-injected into open tabs)
 * only re-opens the channel to the new content script.
 */
import { handshake } from './channel.js';
import { installActions } from './actions.js';
import { installConsole } from './console.js';
import { installErrors } from './errors.js';
import { installFetch, installXhr } from './network.js';
import { installPerf } from './perf.js';
import { installWebSocket } from './websocket.js';

const INSTANCE = Symbol.for('gasoline.inject.v1');
type Holder = { [INSTANCE]?: { handshake: () => void } };
const w = window as unknown as Holder;

const existing = w[INSTANCE];
if (existing) {
  existing.handshake();
} else {
  Object.defineProperty(w, INSTANCE, { value: { handshake }, enumerable: false });
  for (const install of [installConsole, installErrors, installFetch, installXhr, installWebSocket, installActions, installPerf]) {
    try {
      install();
    } catch {
      // one capture failing to install must not take the others (or the page) down
    }
  }
  handshake();
}
