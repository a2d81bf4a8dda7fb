import { it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, chromiumFlags, prepareRun } from './helpers/chromium.js';
import { startFixture } from './helpers/fixture-server.js';
import { startSink } from './helpers/sink.js';
const MODE = process.env.DIAG_MODE ?? 'normal';
it('diag2', async () => {
  const res: string[] = [];
  for (let run = 0; run < 10; run++) {
    const [sink, fixture] = await Promise.all([startSink(), startFixture()]);
    const dirs = prepareRun({ port: sink.port, trackAll: true, keepaliveMs: 600_000 });
    if (MODE === 'nowebrequest') {
      const p = join(dirs.extDir, 'sw.js');
      const s = readFileSync(p, 'utf8');
      if (!s.includes('chrome.webRequest.onHeadersReceived.addListener(')) throw new Error('anchor');
      writeFileSync(p, s.replace('chrome.webRequest.onHeadersReceived.addListener(', '((..._a) => undefined)('));
    }
    if (MODE === 'noinstall') {
      const p = join(dirs.extDir, 'sw.js');
      const s = readFileSync(p, 'utf8');
      if (!s.includes('chrome.runtime.onInstalled.addListener(')) throw new Error('anchor2');
      writeFileSync(p, s.replace('chrome.runtime.onInstalled.addListener(', '((..._a) => undefined)('));
    }
    const proc = spawn(CHROMIUM, ['--headless=new', ...chromiumFlags(dirs.extDir), `--user-data-dir=${dirs.profileDir}`, `${fixture.origin}/`], { stdio: ['ignore', 'ignore', 'ignore'] });
    await new Promise((r) => setTimeout(r, 9000));
    const n = sink.records('logs').length;
    res.push(String(n));
    proc.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    dirs.cleanup();
    await Promise.all([sink.close(), fixture.close()]);
  }
  process.stderr.write(`MODE ${MODE}: logs per run ${res.join(',')}\n`);
}, 300_000);
