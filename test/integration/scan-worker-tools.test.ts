/**
 * The tools' reads go through the real scan worker: noise-rule hits counted there land on the
 * caller's rules, and a scan worker that dies costs at most the read it held — answered with
 * scan_failed — while the next read, and every other agent, keep working. What the reads test
 * first, the header flags the ingest worker wrote, is there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { kindId } from '../../src/domain/kinds.js';
import { REC_CLASSIFIED, REC_ERROR } from '../../src/shm/index.js';
import { callTool, connectAgent } from '../helpers/mcp-agent.js';
import { batch, logRecord, Producer } from '../helpers/producer.js';
import { startTestServer } from '../helpers/server.js';
import { tempStateDir } from '../helpers/state-dir.js';

let server: App;
let producer: Producer;
const stateDir = tempStateDir('gasoline-scan-tools-');

beforeAll(async () => {
  server = await startTestServer({}, { faultInjection: true });
  producer = await Producer.connect(server.port);
  await producer.hello('scan-tools');
  producer.send(
    batch(0, {
      logs: [
        logRecord(1, { level: 'error', message: 'TypeError: cart is undefined' }),
        logRecord(2, { level: 'error', message: 'GET http://127.0.0.1:3000/favicon.ico 404', url: 'http://127.0.0.1:3000/favicon.ico' }),
        logRecord(3, { level: 'error', message: 'TypeError: cart is undefined' }),
      ],
    }),
  );
  await producer.ackFor(0);
});
afterAll(async () => {
  producer.close();
  await server.close();
});

describe('tools over the scan worker', () => {
  it('the ingest worker stores each record with header flags that say whether it is an error (what reads test instead of its bytes)', () => {
    const seen: number[] = [];
    server.reader.read(kindId('logs'), 0, 100, {
      filter: (v) => {
        seen.push(v.flags);
        return false;
      },
    });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const flags of seen) expect(flags & (REC_CLASSIFIED | REC_ERROR)).toBe(REC_CLASSIFIED | REC_ERROR);
  });

  it('noise hidden in the worker is counted on the caller\'s rule', async () => {
    const c = await connectAgent(server, stateDir, 'noise-counts');
    const r = await callTool(c, 'observe', { what: 'errors' });
    expect(r.text).toMatch(/errors \(new since your last look\): 2 matched \(1 distinct\), showing 1; 1 hidden by noise rules/);
    const rules = await callTool(c, 'configure', { action: 'noise_rule', noise_action: 'list' });
    expect(rules.text).toMatch(/url \/favicon\\\.ico\/i \(default\) hits=1/);
    const clusters = await callTool(c, 'analyze', { target: 'error_clusters' });
    expect(clusters.text).toContain('error_clusters: 1 distinct signatures over 2 errors');
    expect((await callTool(c, 'configure', { action: 'noise_rule', noise_action: 'list' })).text).toMatch(/hits=2/);
  });

  it('a scan worker crash costs at most one read, answered with scan_failed; reads go on', async () => {
    const a = await connectAgent(server, stateDir, 'crash-a');
    const b = await connectAgent(server, stateDir, 'crash-b');
    const restarts = server.scans.counts.restarts;
    server.scans.faultForTest('crash');
    const [ra, rb] = await Promise.all([callTool(a, 'observe', { what: 'errors', from: 'start' }), callTool(b, 'observe', { what: 'summary' })]);
    for (const r of [ra, rb]) {
      // a read the dying thread held fails with the code; one sent after it gets a new thread
      if (r.isError) expect(r.text).toMatch(/^scan_failed: /);
      else expect(r.text).toMatch(/^(errors|summary)/);
    }
    const again = await callTool(a, 'observe', { what: 'errors', from: 'start' });
    expect(again.isError).toBe(false);
    expect(again.text).toContain('2 matched');
    expect(server.scans.counts.restarts).toBe(restarts + 1);
    const health = server.health() as { scan_worker: { restarts: number } };
    expect(health.scan_worker.restarts).toBe(restarts + 1);
  });
});
