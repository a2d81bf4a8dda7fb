/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against a real
 * daemon's /mcp (#16: "the MCP conformance scenarios pass against /mcp"), offline, on Node 20.
 *
 * Two things stand between the suite's CLI and our daemon, and neither is bent in the product:
 * - it imports `fs.globSync` (Node 22); test/helpers/node20-glob/preload.mjs supplies a real one;
 * - its client sends no headers of its own, so /mcp answers it 401 (pinned below); a bearer proxy
 *   (test/helpers/bearer-proxy.ts) adds the token and is otherwise invisible.
 *
 * Applicable scenarios are those any MCP server over streamable HTTP must pass. The others test
 * fixtures of the suite's reference "everything" server that Gasoline has no reason to carry:
 * - tools-call-* (test_simple_text, test_image_content, …), json-schema-2020-12,
 *   elicitation-sep1034-defaults, elicitation-sep1330-enums: its test_* tools. (tools-call-simple-text
 *   and tools-call-error would "pass" anyway, on our unknown-tool answer, which proves nothing.)
 * - resources-read-text, resources-read-binary, resources-templates-read: its test:// resources.
 * - resources-subscribe, resources-unsubscribe, completion-complete, prompts-*: capabilities we do
 *   not declare (no subscriptions, completions or prompts); -32601 is the spec's answer.
 * - server-sse-polling: needs its test_reconnection tool (and is "pending" in the suite itself).
 *
 * dns-rebinding-protection: its "rejected" half (Host and Origin evil.example.com) is refused by
 * the guard's Host check; its "accepted" half sends `Origin: http://127.0.0.1:<port>`, the daemon's
 * own loopback origin, which the guard accepts (no page is ever served under it).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { type BearerProxy, startBearerProxy } from '../helpers/bearer-proxy.js';
import { killConformanceRuns, runConformanceScenario, type ScenarioRun } from '../helpers/conformance-cli.js';
import { startTestServer } from '../helpers/server.js';

const APPLICABLE = ['server-initialize', 'ping', 'logging-set-level', 'tools-list', 'resources-list', 'server-sse-multiple-streams'];

interface Daemon {
  server: App;
  proxy: BearerProxy;
  dir: string;
  url: string;
}

async function daemon(over: Parameters<typeof startTestServer>[0] = {}): Promise<Daemon> {
  const dir = mkdtempSync(join(tmpdir(), 'gasoline-conformance-state-'));
  const server = await startTestServer({ state_dir: dir, ...over }, { mcpHttp: true });
  const proxy = await startBearerProxy({ port: server.port, token: server.token as string });
  return { server, proxy, dir, url: `http://127.0.0.1:${proxy.port}/mcp` };
}

async function stop(d: Daemon | undefined): Promise<void> {
  if (!d) return;
  await d.proxy.close();
  await d.server.close();
  rmSync(d.dir, { recursive: true, force: true });
}

const summary = (r: ScenarioRun): string => `${r.scenario} (exit ${r.exitCode}):\n${JSON.stringify(r.checks.filter((c) => c.status !== 'INFO'), null, 1)}\n${r.output}`;

function expectPassed(r: ScenarioRun): void {
  const failed = r.checks.filter((c) => c.status === 'FAILURE');
  expect(failed, summary(r)).toEqual([]);
  expect(r.checks.some((c) => c.status === 'SUCCESS'), summary(r)).toBe(true);
  expect(r.exitCode, summary(r)).toBe(0);
}

let d: Daemon | undefined;

beforeAll(async () => {
  d = await daemon();
});

afterAll(async () => {
  killConformanceRuns();
  await stop(d);
});

describe('MCP conformance suite against /mcp (through the bearer proxy)', () => {
  it.each(APPLICABLE)('%s passes', async (scenario) => {
    const before = d!.proxy.forwarded;
    expectPassed(await runConformanceScenario(d!.url, scenario));
    expect(d!.proxy.forwarded).toBeGreaterThan(before);
  });

  it('dns-rebinding-protection passes: a foreign Host is refused before anything else, our own loopback Origin is accepted', async () => {
    const r = await runConformanceScenario(d!.url, 'dns-rebinding-protection');
    expectPassed(r);
    // Host is checked before Origin: the guard's Host half refused it
    expect(r.checks.find((c) => c.id === 'localhost-host-rebinding-rejected')?.details, summary(r)).toMatchObject({ statusCode: 403, body: { error: 'host_refused' } });
  });

  it('the suite without the proxy is refused: 401 unauthorized (its client sends no token)', async () => {
    const r = await runConformanceScenario(`http://127.0.0.1:${d!.server.port}/mcp`, 'server-initialize');
    expect(r.exitCode, summary(r)).toBe(1);
    expect(r.checks.find((c) => c.id === 'server-initialize')?.errorMessage, summary(r)).toMatch(/unauthorized/);
  });
});

describe('test/helpers/node20-glob: the suite\'s `fs.globSync` on Node 20', () => {
  it('globs for real, as Node 22 does (on Node 22 the preload steps aside and the same answers hold)', () => {
    const root = mkdtempSync(join(tmpdir(), 'gasoline-glob-'));
    try {
      for (const d of ['a/b', 'c', '.hidden']) mkdirSync(join(root, d), { recursive: true });
      for (const f of ['checks.json', 'a/checks.json', 'a/b/checks.json', 'c/other.json', '.hidden/checks.json']) writeFileSync(join(root, f), '[]');
      const preload = fileURLToPath(new URL('../helpers/node20-glob/preload.mjs', import.meta.url));
      // the named import is what fails to link on Node 20 without the preload
      const code = `import { globSync, existsSync } from 'fs';
        const cwd = process.argv[1];
        console.log(JSON.stringify([existsSync(cwd), globSync('**/checks.json', { cwd }).sort(), globSync('*/*.json', { cwd }).sort(), globSync('a/?/check*', { cwd })]));`;
      const out = execFileSync(process.execPath, ['--import', preload, '--input-type=module', '-e', code, root], { encoding: 'utf8', timeout: 10_000 });
      expect(JSON.parse(out)).toEqual([true, ['a/b/checks.json', 'a/checks.json', 'checks.json'], ['a/checks.json', 'c/other.json'], ['a/b/checks.json']]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
