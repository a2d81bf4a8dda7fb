import { it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { CHROMIUM, chromiumFlags, prepareRun } from './helpers/chromium.js';
import { startSink } from './helpers/sink.js';
const MODE = process.env.DIAG_MODE ?? 'ext';
it('diag3', async () => {
  const res: string[] = [];
  const html = readFileSync('test/fixtures/app/index.html');
  for (let run = 0; run < 10; run++) {
    let hits = 0;
    const srv = createServer((req, res) => { hits++; if (req.url === '/') { res.writeHead(200, { 'content-type': 'text/html' }); res.end(html); } else { res.writeHead(404); res.end(); } });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const origin = `http://127.0.0.1:${(srv.address() as any).port}`;
    const sink = await startSink();
    const dirs = prepareRun({ port: sink.port, trackAll: true, keepaliveMs: 600_000 });
    const flags = chromiumFlags(dirs.extDir).filter((f) => MODE === 'ext' || !/extension/.test(f));
    const port = 9400 + run;
    const proc = spawn(CHROMIUM, ['--headless=new', ...flags, `--remote-debugging-port=${port}`, `--user-data-dir=${dirs.profileDir}`, `${origin}/`], { stdio: ['ignore', 'ignore', 'ignore'] });
    await new Promise((r) => setTimeout(r, 8000));
    const list = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(4000) }).then((r) => r.json(), () => []) as any[];
    const page = list.find((t) => t.type === 'page');
    res.push(`${page?.title ? 'ok' : 'STUCK'}(hits=${hits},sw=${list.filter((t) => t.type === 'service_worker').length})`);
    proc.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    dirs.cleanup();
    srv.close();
    await sink.close();
  }
  process.stderr.write(`MODE ${MODE}: ${res.join(' ')}\n`);
}, 300_000);
