/**
 * configure({action:"export_har"}): the captured traffic written to a HAR 1.2 file (the builder is
 * src/query/har.ts; `gasoline export har` calls this same action on the daemon).
 *
 * Where it may write. The daemon serves every agent on the machine from one working directory
 * that is none of theirs, so a relative path would mean nothing; and a path comes from an agent,
 * which reads page text that may try to steer it. So: no path → `<state dir>/exports/`, 0700;
 * a path must be absolute, end in `.har` (an export can never replace ~/.bashrc or a key file),
 * and its folder must already exist (nothing is created outside the state dir). The file is
 * written 0600 to a temporary name and renamed into place, so a reader never sees half of it and
 * a symlink at the path is replaced, never followed.
 */
import { lstatSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { KINDS } from '../../domain/kinds.js';
import { gasolineError } from '../../errors.js';
import { buildHar, readHarRecords } from '../../query/index.js';
import { makePrivateDir, writePrivateFileAsync } from '../../state-dir.js';
import { VERSION } from '../../version.js';
import type { ToolContext, ToolResult } from './context.js';
import { tabScope } from './tab-scope.js';

export interface ExportArgs {
  path?: string | undefined;
  url_filter?: string | undefined;
  /** since: a checkpoint of the caller's, or a time */
  name?: string | undefined;
  tab_ids?: number[] | undefined;
  limit?: number | undefined;
}

export const HAR_DEFAULT_ENTRIES = 1000;
/** PATH_MAX on Linux */
const MAX_PATH = 4096;
/** a file an agent or a tool opens whole: 32 MiB is ~1 000 requests with full captured bodies */
export const HAR_MAX_BYTES = 32 * 1024 * 1024;

/** What to export from (`name`): one of the caller's checkpoints, else a time (ISO 8601 or epoch ms). */
function sinceOf(ctx: ToolContext, since: string | undefined): { ords?: readonly number[]; ms?: number; said: string } {
  if (since === undefined) return { said: 'everything buffered' };
  const cp = ctx.client.checkpoints.get(since);
  if (cp) return { ords: cp.ords, said: `since checkpoint ${since}` };
  const ms = /^\d{10,16}$/.test(since) ? Number(since) : Date.parse(since);
  if (Number.isFinite(ms)) return { ms, said: `since ${new Date(ms).toISOString()}` };
  throw gasolineError('unknown_name', `name: no checkpoint "${since}" and not a time (ISO 8601 or epoch ms); checkpoint_action:"list" shows yours`);
}

function targetOf(stateDir: string, path: string | undefined): string {
  if (path === undefined) {
    const dir = join(stateDir, 'exports');
    makePrivateDir(dir);
    return join(dir, `gasoline-${new Date().toISOString().replace(/[:.]/g, '-')}.har`);
  }
  // the schema leaves the bound out (its characters cost every agent turn): it is checked here
  if (path.length > MAX_PATH) throw gasolineError('invalid_argument', `path: at most ${MAX_PATH} characters`);
  if (path.includes('\0') || !isAbsolute(path)) throw gasolineError('invalid_argument', 'path: an absolute path (the daemon serves several projects, so a relative one has no single meaning); leave it out for the state dir');
  if (!path.toLowerCase().endsWith('.har')) throw gasolineError('invalid_argument', 'path: must end in .har (an export never replaces any other file)');
  let dir: ReturnType<typeof statSync> | undefined;
  try {
    dir = statSync(dirname(path));
  } catch {
    dir = undefined;
  }
  if (!dir?.isDirectory()) throw gasolineError('invalid_argument', `path: the folder ${dirname(path)} does not exist (it is not created)`);
  try {
    if (lstatSync(path).isDirectory()) throw gasolineError('invalid_argument', `path: ${path} is a directory`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return path;
}

export async function exportHar(ctx: ToolContext, stateDir: string, a: ExportArgs): Promise<ToolResult> {
  const reader = ctx.reader();
  const since = sinceOf(ctx, a.name);
  const target = targetOf(stateDir, a.path);
  const maxEntries = a.limit ?? HAR_DEFAULT_ENTRIES;
  const read = await readHarRecords(reader, {
    from: since.ords ?? KINDS.map((_k, id) => reader.tailOrd(id)),
    url: a.url_filter,
    sinceMs: since.ms,
    tabs: a.tab_ids,
    scope: tabScope(ctx),
    maxEntries,
    maxBytes: HAR_MAX_BYTES,
  });
  const filters = [since.said, a.url_filter ? `url contains ${JSON.stringify(a.url_filter)}` : '', a.tab_ids ? `tabs ${a.tab_ids.join(',')}` : '', ctx.client.tabFilter ? 'your tab filter' : ''].filter(Boolean);
  const notRead = [read.missed ? `${read.missed} records evicted from the ring while reading` : '', read.partial ? 'the read stopped at its 5 s bound before the newest records' : ''].filter(Boolean);
  const har = await buildHar(read.network, read.bodies, {
    egress: ctx.port.egress(),
    creator: { name: 'gasoline', version: VERSION },
    comment: `exported by gasoline: ${[...filters, ...notRead].join('; ')}`.slice(0, 1000),
    maxEntries,
    maxBytes: HAR_MAX_BYTES,
  });
  try {
    await writePrivateFileAsync(target, har.text);
  } catch (e) {
    throw gasolineError('write_failed', `could not write ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  // older_records: matches the read let go (the oldest) to stay within the caps: never entries
  const dropped = { ...har.dropped, ...(read.dropped ? { older_records: read.dropped } : {}), ...(read.missed ? { evicted: read.missed } : {}) };
  const truncated = har.dropped.over_limit + har.dropped.over_bytes + read.dropped > 0 || read.partial;
  return ctx.text(JSON.stringify({ path: target, entries: har.entries, bytes: har.bytes, truncated, ...(truncated || read.missed ? { dropped } : {}), ...(read.partial ? { partial: true } : {}), filters: filters.join('; ') }));
}
