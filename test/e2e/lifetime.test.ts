/**
 * Service-worker lifetime in command-line Chromium: no CDP attached, so Chrome's 30 s idle kill
 * is real (Playwright would keep the worker alive and hide it; notes pitfall 2). One browser
 * pings every 20 s and must keep its single connection through 70 s of silence (the bar); a control browser
 * that never pings must lose its connection, which shows the test can fail.
 *
 * The browsers open about:blank, not a page our content scripts match: a start URL that matches
 * them is, in about one launch of four here, never requested at all (the fixture server sees no
 * request, with or without our webRequest listener or install-time injection; never without the
 * extension) — Chromium holds a navigation until an extension's content scripts are loaded, and
 * with --load-extension at start-up that hold sometimes never ends. Such a tab also kept the idle
 * worker alive, so the control failed. The lifetime under test is the worker's, not a page's.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium, SKIP_REASON, spawnCli } from './helpers/chromium.js';
import { waitFor } from '../helpers/wait-for.js';
import { producerIds, startSink } from './helpers/sink.js';

if (!hasChromium) console.warn(SKIP_REASON);

const IDLE_MS = 70_000;

async function run(keepaliveMs: number): Promise<{ first: number[]; last: number[] }> {
  const sink = await startSink();
  const cli = spawnCli({ port: sink.port, keepaliveMs }, 'about:blank');
  try {
    const first = await waitFor('extension connected', () => {
      const ids = producerIds(sink);
      return ids.length ? ids : null;
    }, 20_000);
    await new Promise((r) => setTimeout(r, IDLE_MS)); // the idle time is the scenario: Chrome's clock, not ours
    return { first, last: producerIds(sink) };
  } finally {
    await cli.stop();
    await sink.close();
  }
}

describe.skipIf(!hasChromium)('service worker lifetime (command-line Chromium)', () => {
  it(`keeps one connection through ${IDLE_MS / 1000} s idle with the 20 s keepalive, and loses it without`, async () => {
    const [kept, control] = await Promise.all([run(20_000), run(10 * 60_000)]);
    expect(kept.first).toHaveLength(1);
    expect(kept.last, 'same connection, never reconnected').toEqual(kept.first);
    expect(control.last, 'the idle worker was stopped by Chrome').not.toContain(control.first[0]);
  }, 110_000);
});
