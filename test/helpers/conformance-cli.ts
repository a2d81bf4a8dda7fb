/**
 * Runs one scenario of the official MCP conformance suite (@modelcontextprotocol/conformance, its
 * `conformance server` CLI) against a URL and returns the checks it wrote. The CLI runs as its
 * own process group on Node 20 through ./node20-glob/preload.mjs (it imports `fs.globSync`, a
 * Node 22 export); a run past its deadline is killed, group and all.
 *
 * How the CLI reports: with `-o DIR` it writes DIR/server-<scenario>-<time>/checks.json, an array
 * of checks whose status is SUCCESS, FAILURE, WARNING or INFO, and exits 1 when any is FAILURE.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConformanceCheck {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: Record<string, unknown>;
}

export interface ScenarioRun {
  scenario: string;
  exitCode: number | null;
  checks: ConformanceCheck[];
  /** stdout + stderr, for the failure message */
  output: string;
}

/** process groups of runs still going, for a test's afterAll to end whatever a failure left */
const live = new Set<number>();

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  live.delete(pid);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export function killConformanceRuns(): void {
  for (const pid of [...live]) killGroup(pid);
}

const PRELOAD = fileURLToPath(new URL('./node20-glob/preload.mjs', import.meta.url));

function cliPath(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('@modelcontextprotocol/conformance/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { bin: { conformance: string } };
  return join(dirname(pkgPath), pkg.bin.conformance);
}

export async function runConformanceScenario(url: string, scenario: string, timeoutMs = 20_000): Promise<ScenarioRun> {
  const out = mkdtempSync(join(tmpdir(), 'gasoline-conformance-'));
  try {
    const child = spawn(process.execPath, ['--import', PRELOAD, cliPath(), 'server', '--url', url, '--scenario', scenario, '-o', out], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    if (child.pid) live.add(child.pid);
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    clearTimeout(timer);
    // a scenario may leave a child of its own behind; the group goes with the run
    killGroup(child.pid);
    if (exitCode === null) throw new Error(`conformance scenario ${scenario} did not finish within ${timeoutMs} ms:\n${output}`);
    const dir = readdirSync(out).find((d) => d.startsWith(`server-${scenario}-`));
    if (!dir) throw new Error(`conformance scenario ${scenario} wrote no results (exit ${exitCode}):\n${output}`);
    const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as ConformanceCheck[];
    return { scenario, exitCode, checks, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
