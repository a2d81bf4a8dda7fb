/**
 * Launching Debian's Chromium with the built extension, exactly as ../../../../shared/notes/chromium-e2e.md
 * established on this machine: fixed flags, a fresh profile and a per-run copy of the extension
 * with its own config.json (random ports, parallel runs).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Worker } from 'playwright-core';
import { TEST_PAIRING_KEY } from '../../helpers/pairing-key.js';

export const CHROMIUM = process.env.GASOLINE_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const SKIP_REASON = `e2e skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`;

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const EXTENSION_ID = 'pkpkhhbkobfcgmjenhmfgcphnfjiedej';

/** Flags from the notes; `--host-resolver-rules` is one argv entry, spaces included. */
export function chromiumFlags(extDir: string): string[] {
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1',
    `--disable-extensions-except=${extDir}`,
    `--load-extension=${extDir}`,
  ];
}

/**
 * Builds the extension into `out` (esbuild: well under a second). Every run builds its own copy:
 * vitest runs e2e files in parallel, and two builds into one extension/dist delete each other's
 * files mid-write (ENOTEMPTY, a half-built worker).
 */
export function buildExtension(out: string): void {
  execFileSync(process.execPath, [join(ROOT, 'extension', 'build.mjs'), '--out', out], { stdio: 'pipe' });
}

export interface ExtConfig {
  port: number;
  keepaliveMs?: number;
  trackAll?: boolean;
  perfDelayMs?: number;
  bodyBudgetMs?: number;
  captureBodies?: boolean;
  captureWebSockets?: boolean;
  /** the pairing secret (hex); default: the one every test server is preseeded with. '' = unpaired */
  pairingKey?: string;
}

export interface TempDirs {
  extDir: string;
  profileDir: string;
  cleanup(): void;
}

export function prepareRun(config: ExtConfig): TempDirs {
  const base = mkdtempSync(join(tmpdir(), 'gasoline-e2e-'));
  const extDir = join(base, 'ext');
  const profileDir = join(base, 'profile');
  buildExtension(extDir);
  writeFileSync(join(extDir, 'config.json'), JSON.stringify({ pairingKey: TEST_PAIRING_KEY, ...config }));
  return { extDir, profileDir, cleanup: () => removeProfile(base) };
}

/**
 * Chromium's helper processes outlive the browser by a moment and still write into the profile:
 * a plain recursive remove then failed with ENOTEMPTY once (2026-12-01, CI form on a slower
 * machine). rmSync retries exactly that error, and EBUSY, with a growing pause.
 */
function removeProfile(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

export interface Launched {
  ctx: BrowserContext;
  sw: Worker;
  extensionId: string;
  close(): Promise<void>;
}

export async function launchWithExtension(config: ExtConfig): Promise<Launched> {
  const dirs = prepareRun(config);
  const ctx = await chromium.launchPersistentContext(dirs.profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: chromiumFlags(dirs.extDir),
    ignoreDefaultArgs: ['--disable-extensions'],
  });
  const sw = ctx.serviceWorkers()[0] ?? (await ctx.waitForEvent('serviceworker', { timeout: 15_000 }));
  return {
    ctx,
    sw,
    extensionId: new URL(sw.url()).host,
    close: async () => {
      await ctx.close().catch(() => undefined);
      dirs.cleanup();
    },
  };
}

/** Plain browser, no extension: the baseline for overhead numbers. */
export async function launchPlain(): Promise<{ ctx: BrowserContext; close(): Promise<void> }> {
  const base = mkdtempSync(join(tmpdir(), 'gasoline-plain-'));
  const args = chromiumFlags('').filter((f) => !f.includes('extension'));
  const ctx = await chromium.launchPersistentContext(base, { executablePath: CHROMIUM, headless: true, args });
  return {
    ctx,
    close: async () => {
      await ctx.close().catch(() => undefined);
      removeProfile(base);
    },
  };
}

/** Command-line Chromium, no CDP attached: the only way to see real service-worker lifetime. */
export function spawnCli(config: ExtConfig, url: string): { proc: ChildProcess; stderr: () => string; stop(): Promise<void> } {
  const dirs = prepareRun(config);
  // its own process group, so that stop() ends the helper processes too: they outlived the
  // browser and kept writing into the profile past 5 s of removal retries (2026-12-01)
  // its temporary files inside the run's directory: a browser stopped by a signal leaves its
  // singleton socket's directory behind (two org.chromium.Chromium.* in /tmp per test run)
  const tmp = join(dirname(dirs.profileDir), 'tmp');
  mkdirSync(tmp, { recursive: true });
  const proc = spawn(CHROMIUM, ['--headless=new', ...chromiumFlags(dirs.extDir), `--user-data-dir=${dirs.profileDir}`, url], { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, TMPDIR: tmp } });
  const signalGroup = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-proc.pid!, sig);
    } catch {
      // the group is gone already
    }
  };
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    if (err.length < 200_000) err += d.toString();
  });
  return {
    proc,
    stderr: () => err,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        signalGroup('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (proc.exitCode === null && proc.signalCode === null) {
          signalGroup('SIGKILL');
          await exited;
        }
      }
      // whatever of the group is left after the browser itself
      signalGroup('SIGKILL');
      dirs.cleanup();
    },
  };
}
