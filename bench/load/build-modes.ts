/**
 * Which modes the build under test has, read from its own `--help`: builds before issue 16 have
 * no bridge and no --standalone flag, and their default is the single process. `--compare`
 * against such a build runs that default for the standalone figures and reports every bridge
 * figure of that side as not measured, instead of inventing one.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export interface BuildModes {
  /** the default `bin/gasoline` is a bridge to a daemon */
  bridge: boolean;
  /** the single process needs `--standalone` (else it is the default) */
  standaloneFlag: boolean;
}

const cache = new Map<string, BuildModes>();

export function buildModes(root: string): BuildModes {
  const hit = cache.get(root);
  if (hit) return hit;
  // usage goes to stderr (stdout is JSON-RPC's), and some builds exit non-zero on --help
  const r = spawnSync(process.execPath, [join(root, 'bin/gasoline'), '--help'], { cwd: root, timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const help = `${r.stdout?.toString() ?? ''}${r.stderr?.toString() ?? ''}`;
  const standaloneFlag = /--standalone\b/.test(help);
  const modes = { standaloneFlag, bridge: standaloneFlag && /\bbridge\b/i.test(help) };
  cache.set(root, modes);
  return modes;
}

export const NO_BRIDGE = 'the build under test has no bridge mode (before issue 16): its default is the single process';
