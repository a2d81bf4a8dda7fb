/**
 * What the picture scripts (screenshot-popup.mjs, screenshot-panel.mjs) share: a free port, a
 * bounded wait, and a daemon's /health.
 */
import { createServer } from 'node:http';

/** `want` when it is free (the popup's picture shows the default port), else any free port. */
export function freePort(want = 0) {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => (want ? freePort(0).then(res) : res(0)));
    s.listen(want, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Polls `fn` every 100 ms until it gives something truthy; throws after `ms`. */
export async function until(what, fn, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const health = async (port) => (await fetch(`http://127.0.0.1:${port}/health`)).json();
