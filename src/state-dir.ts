/**
 * The state directory is ours alone: what agents store there (notes that may quote a page, a
 * path, a token the redaction missed) is no other local user's business. Directories are 0700
 * and files 0600, set explicitly: the mode given to mkdir/open is masked by the umask (000 gave
 * 0777/0666, 022 gave 0755/0644) and does nothing to a path that already exists, so a chmod
 * follows every creation, and startup repairs what an older version or a loose umask left.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { chmod, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
/** group and other bits: any of them set is wider than we allow */
const WIDER = 0o077;
/**
 * A state dir holds a store/ folder of per-client files. Startup time stays bounded on a tree far
 * bigger than that: the walk stops there (what we write ourselves is 0600 regardless).
 */
const MAX_ENTRIES = 50_000;
const MAX_DEPTH = 4;

/** A state directory we may not use as it is and cannot repair: the process refuses to start. */
export class StateDirError extends Error {
  constructor(readonly path: string, why: string) {
    super(`state directory ${path}: ${why}; fix it, or choose another with --state-dir or GASOLINE_STATE_DIR`);
    this.name = 'StateDirError';
  }
}

/** mkdir -p, then 0700 whatever the umask did. */
export function makePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: DIR_MODE });
  chmodSync(path, DIR_MODE);
}

/**
 * Writes a whole file atomically (temp file, then rename) with mode 0600. The temp file is
 * created exclusively (O_EXCL: never through a planted file or symlink, never an old file's wider
 * mode) and named by pid, so two processes sharing a store do not trip over each other's.
 */
export function writePrivateFile(path: string, data: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  try {
    writeFileSync(tmp, data, { mode: FILE_MODE, flag: 'wx' });
    // a umask such as 0277 strips our own write bit; the mode is ours to decide
    chmodSync(tmp, FILE_MODE);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** writePrivateFile off the event loop: for large files written on main (a HAR export holds up to 32 MiB). */
export async function writePrivateFileAsync(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  try {
    await writeFile(tmp, data, { mode: FILE_MODE, flag: 'wx' });
    await chmod(tmp, FILE_MODE);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Startup check of the state directory and everything in it: modes wider than 0700/0600 are
 * repaired (returned, to be logged); a path owned by another user, or one we cannot chmod, throws
 * StateDirError. A directory that does not exist is fine (nothing to protect yet). Symlinks inside
 * are left alone: chmod would follow them out of the tree, and we never create any.
 */
export function secureStateDir(dir: string): string[] {
  // platforms without uids (Windows) have no modes to check either
  const uid = process.getuid?.();
  if (uid === undefined) return [];
  let st: Stats;
  try {
    // the directory itself may be a symlink the user made (e.g. to another disk): follow it
    st = statSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StateDirError(dir, `cannot be read (${(e as Error).message})`);
  }
  if (!st.isDirectory()) throw new StateDirError(dir, 'is not a directory');
  const fixed: string[] = [];
  const budget = { entries: 0 };
  secure(dir, dir, st, uid, fixed, budget, 0);
  return fixed;
}

function secure(root: string, path: string, st: Stats, uid: number, fixed: string[], budget: { entries: number }, depth: number): void {
  if (st.uid !== uid) throw new StateDirError(root, `${path} belongs to uid ${st.uid}, not to this process's uid ${uid}`);
  const isDir = st.isDirectory();
  // a directory also needs all of its owner bits (a umask of 0277 leaves 0500, and we must write)
  if (isDir ? (st.mode & 0o777) !== DIR_MODE : (st.mode & WIDER) !== 0) {
    const want = isDir ? DIR_MODE : FILE_MODE;
    try {
      chmodSync(path, want);
    } catch (e) {
      throw new StateDirError(root, `${path} has mode ${(st.mode & 0o777).toString(8)} and cannot be set to ${want.toString(8)} (${(e as Error).message})`);
    }
    fixed.push(path);
  }
  if (!isDir) return;
  if (depth >= MAX_DEPTH) return;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch (e) {
    throw new StateDirError(root, `${path} cannot be listed (${(e as Error).message})`);
  }
  for (const name of names) {
    if (++budget.entries > MAX_ENTRIES) return;
    const child = join(path, name);
    let cst: Stats;
    try {
      cst = lstatSync(child);
    } catch {
      continue; // removed while we looked
    }
    if (cst.isSymbolicLink()) continue;
    if (cst.isDirectory() || cst.isFile()) secure(root, child, cst, uid, fixed, budget, depth + 1);
  }
}
