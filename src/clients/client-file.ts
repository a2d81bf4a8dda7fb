/**
 * One client's durable state on disk: <state_dir>/clients/<id>.json, 0600, written by atomic
 * rename (state-dir.ts). The zod schema is the file format; a file that does not parse, does not
 * match it or is larger than MAX_CLIENT_FILE is set aside as `<id>.json.bad` with a warning and
 * the client starts fresh — a damaged file never stops the daemon.
 */
import { readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { KIND_COUNT } from '../domain/kinds.js';
import { STREAM_EVENTS } from '../domain/streaming/stream-state.js';
import { SEVERITIES } from '../domain/alerts/alert.js';
import { log } from '../log.js';
import { makePrivateDir, writePrivateFile } from '../state-dir.js';

/** Bytes a client file may hold. The parts are bounded below it by construction (store 256 KiB, 50 checkpoints, 100 rules). */
export const MAX_CLIENT_FILE = 1024 * 1024;
/** The store's total size (keys and values, in UTF-16 units): a note pad, not a database. */
export const MAX_STORE_CHARS = 256 * 1024;

const ords = z.array(z.number().int().min(0)).length(KIND_COUNT);

export const TabFilterSchema = z.union([
  z.object({ tab_ids: z.array(z.number().int()).min(1).max(20) }).strict(),
  z.object({ url: z.string().min(1).max(200) }).strict(),
]);
export type TabFilter = z.infer<typeof TabFilterSchema>;

/** What a client asked streaming to be, restored on its next session (src/mcp/server.ts). */
export const SavedStreamingSchema = z.object({
  enabled: z.boolean(),
  events: z.array(z.enum(STREAM_EVENTS)).min(1).max(10),
  throttle_seconds: z.number().int().min(1).max(60),
  url_filter: z.string().max(500).nullable(),
  severity_min: z.enum(SEVERITIES),
});
export type SavedStreaming = z.infer<typeof SavedStreamingSchema>;

export const NoiseRuleFileSchema = z.object({ id: z.string().max(20), field: z.enum(['message', 'source', 'url']), pattern: z.string().min(1).max(500), builtin: z.boolean() });

export const ClientFileSchema = z.object({
  v: z.literal(1),
  id: z.string().max(64),
  /** the store epoch the ordinals below belong to (registry.ts): another epoch's ordinals mean nothing */
  epoch: z.string().max(64),
  saved_at: z.string().max(40),
  last_seen: z.string().max(40),
  cursors: ords,
  summary_cursors: ords,
  checkpoints: z.array(z.object({ name: z.string().min(1).max(100), created_at: z.string().max(40), ords, restarted: z.boolean().optional() })).max(50),
  noise: z.array(NoiseRuleFileSchema).max(100),
  tab_filter: TabFilterSchema.nullable(),
  streaming: SavedStreamingSchema.nullable(),
  store: z.array(z.tuple([z.string().max(200), z.string().max(65_536)])).max(1000),
});
export type ClientFile = z.infer<typeof ClientFileSchema>;

export function clientFilePath(dir: string, id: string): string {
  return join(dir, 'clients', `${id}.json`);
}

export type LoadResult = { kind: 'none' } | { kind: 'ok'; file: ClientFile } | { kind: 'bad'; why: string };

/** The saved state of `id`, none, or — set aside as .bad — why it could not be used. */
export function loadClientFile(dir: string, id: string): LoadResult {
  const path = clientFilePath(dir, id);
  let why: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_CLIENT_FILE) why = `${size} bytes, over the ${MAX_CLIENT_FILE}-byte bound`;
    else {
      const parsed = ClientFileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
      if (parsed.success && parsed.data.id === id) return { kind: 'ok', file: parsed.data };
      why = parsed.success ? `it belongs to client ${JSON.stringify(parsed.data.id)}` : parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    why = (e as Error).message;
  }
  try {
    renameSync(path, `${path}.bad`);
  } catch (e) {
    why += `; could not set it aside: ${(e as Error).message}`;
  }
  log.warn('client state file set aside; the client starts fresh', { client: id, file: `${path}.bad`, why });
  return { kind: 'bad', why };
}

/** Writes atomically; a state too large is refused (logged, the previous file stays) rather than cut anywhere. */
export function saveClientFile(dir: string, file: ClientFile): boolean {
  const json = JSON.stringify(file);
  if (Buffer.byteLength(json) > MAX_CLIENT_FILE) {
    log.warn('client state not saved: over the size bound', { client: file.id, bytes: Buffer.byteLength(json), max: MAX_CLIENT_FILE });
    return false;
  }
  try {
    makePrivateDir(join(dir, 'clients'));
    writePrivateFile(clientFilePath(dir, file.id), json);
    return true;
  } catch (e) {
    log.warn('client state not saved', { client: file.id, error: (e as Error).message });
    return false;
  }
}

/** The key/value store as it was kept before #16 (<state_dir>/store/<id>.json), read once when a client has no file yet. */
export function legacyStore(dir: string, id: string): Array<[string, string]> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, 'store', `${id.replace(/[^a-zA-Z0-9_.-]/g, '_')}.json`), 'utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
    // JSON.parse makes "__proto__" an own property, so Object.entries sees every key the file holds
    return Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0].length <= 200 && e[1].length <= 65_536).slice(0, 1000);
  } catch {
    return [];
  }
}
