import { it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM, chromiumFlags, prepareRun } from './helpers/chromium.js';
import { startFixture } from './helpers/fixture-server.js';
import { producerIds, startSink } from './helpers/sink.js';
it('diag', async () => {
  for (let run = 0; run < 4; run++) {
    const [sink, fixture] = await Promise.all([startSink(), startFixture()]);
    const dirs = prepareRun({ port: sink.port, trackAll: true, keepaliveMs: 600_000 });
    const proc = spawn(CHROMIUM, ['--headless=new', ...chromiumFlags(dirs.extDir), '--remote-debugging-port=9333', '--enable-logging=stderr', '--v=0', `--user-data-dir=${dirs.profileDir}`, `${fixture.origin}/`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => { if (err.length < 5_000_000) err += d.toString(); });
    const t0 = Date.now();
    const log: string[] = [];
    let alive = false;
    try {
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 5000));
        log.push(`${Math.round((Date.now() - t0) / 1000)}s ids=${producerIds(sink)}`);
      }
      alive = producerIds(sink).length > 0;
      log.push(`logs: ${sink.records('logs').length} network: ${sink.records('network').length}`);
      if (alive) {
        const ver = await fetch('http://127.0.0.1:9333/json/version', { signal: AbortSignal.timeout(5000) }).then((r) => r.text(), (e) => `ERR ${e}`);
        log.push(`version: ${ver.slice(0, 200)}`);
        const tl = await fetch('http://127.0.0.1:9333/json/list', { signal: AbortSignal.timeout(5000) }).then((r) => r.text(), (e) => `ERR ${e}`);
        log.push(`list: ${tl.slice(0, 1500)}`);
        const b = await chromium.connectOverCDP('http://127.0.0.1:9333', { timeout: 10_000 });
        for (const ctx of b.contexts()) {
          for (const p of ctx.pages()) {
            log.push(`page ${p.url()}`);
            try { log.push(`  eval ${await p.evaluate(() => JSON.stringify({ ready: (globalThis as any).document.readyState, g: Object.keys(globalThis).filter((k) => /gasoline/i.test(k)) }))}`); } catch (e) { log.push(`  eval err ${(e as Error).message}`); }
          }
          for (const w of ctx.serviceWorkers()) {
            log.push(`sw ${w.url()}`);
            try { log.push(`  ${await w.evaluate(() => JSON.stringify({ t: Date.now() }))}`); } catch (e) { log.push(`  sw err ${(e as Error).message}`); }
          }
        }
        await b.close().catch(() => undefined);
      }
    } catch (e) {
      log.push(`diag error ${(e as Error).message.slice(0, 300)}`);
    } finally {
      proc.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 500));
      dirs.cleanup();
      await Promise.all([sink.close(), fixture.close()]);
    }
    writeFileSync(`/tmp/diag-chrome-${run}.log`, err);
    process.stderr.write(`RUN ${run} alive=${alive}\n${log.join('\n')}\n`);
  }
}, 400_000);
