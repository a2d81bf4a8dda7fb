/**
 * The popup's toggles in real Chromium: a click is saved even when the popup closes right after it,
 * as a user's popup does when they click back into the page. The popup used to read the stored
 * settings, merge and write them itself, and a close before that read came back lost the click
 * while the checkbox had shown it (2 in 40 toggle-then-close runs on a loaded machine; the approvals
 * and panel e2e tests then waited for an approval the worker refused as agent_control_off).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { hasChromium, launchWithExtension, SKIP_REASON, type Launched } from './helpers/chromium.js';
import { startSink, type Sink } from './helpers/sink.js';

if (!hasChromium) console.warn(SKIP_REASON);

const BOX = "document.getElementById('allow_agent_control')";

describe.skipIf(!hasChromium)('popup settings in real Chromium', () => {
  let sink: Sink;
  let browser: Launched;

  beforeAll(async () => {
    sink = await startSink();
    browser = await launchWithExtension({ port: sink.port, trackAll: true });
  }, 45_000);

  afterAll(async () => {
    await browser?.close();
    await sink?.close();
  });

  /** a popup whose checkbox shows what the worker holds now */
  async function popup(): Promise<Page> {
    const p = await browser.ctx.newPage();
    await p.goto(`chrome-extension://${browser.extensionId}/popup.html`);
    // #server is empty until the first status from the worker is rendered (#state starts as '…')
    await waitFor('the popup rendered from the worker', () => p.evaluate<boolean>("document.getElementById('server').textContent.length > 0"));
    return p;
  }

  const stored = async (): Promise<unknown> => {
    const p = await popup();
    try {
      return await p.evaluate("chrome.storage.local.get('settings').then((s) => s.settings?.allow_agent_control)");
    } finally {
      await p.close();
    }
  };

  it('a toggle clicked just before the popup closes is saved and in force, however slow the popup page is', async () => {
    for (const on of [true, false, true]) {
      const p = await popup();
      expect(await p.evaluate(`${BOX}.checked`)).toBe(!on);
      // The page's own storage reads take half a second from now on, as on a machine where the
      // popup lost its core: nothing of the click may depend on the page living that long.
      await p.evaluate(`(() => {
        const get = chrome.storage.local.get.bind(chrome.storage.local);
        chrome.storage.local.get = (...a) => new Promise((r) => setTimeout(r, 500)).then(() => get(...a));
        ${BOX}.click();
      })()`);
      await p.close();
      await waitFor(`allow_agent_control ${on} stored`, async () => (await stored()) === on);
      // and the worker holds it: a fresh popup renders the worker's own status
      const again = await popup();
      expect(await again.evaluate(`${BOX}.checked`)).toBe(on);
      await again.close();
    }
  }, 60_000);

  it('two toggles clicked in one go are both kept', async () => {
    const p = await popup();
    const before = (await p.evaluate("({ ws: document.getElementById('capture_websockets').checked, bodies: document.getElementById('capture_bodies').checked })")) as { ws: boolean; bodies: boolean };
    await p.evaluate("document.getElementById('capture_websockets').click(); document.getElementById('capture_bodies').click()");
    await p.close();
    const want = { capture_websockets: !before.ws, capture_bodies: !before.bodies };
    await waitFor('both toggles stored', async () => {
      const q = await popup();
      try {
        const s = (await q.evaluate("chrome.storage.local.get('settings').then((s) => s.settings ?? {})")) as Record<string, unknown>;
        return s.capture_websockets === want.capture_websockets && s.capture_bodies === want.capture_bodies;
      } finally {
        await q.close();
      }
    });
  }, 60_000);
});
