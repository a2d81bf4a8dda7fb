/**
 * The daemon's clients: one ClientState per client id, shared by that client's sessions, bounded
 * (a typed `client_limit` when every slot holds a client with a session open), saved under
 * <state_dir>/clients/ (client-file.ts) after a change (debounced), on a session's close and on
 * shutdown, restored when the client returns — also by a new daemon on the same state dir — and
 * purged (memory and file) once unseen for the TTL. The sweep timer is unref'd and stopped by
 * shutdown().
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { KINDS } from '../domain/kinds.js';
import { gasolineError } from '../errors.js';
import { log } from '../log.js';
import { compileNoise, type NoiseField } from '../query/index.js';
import { writePrivateFile } from '../state-dir.js';
import { clientFilePath, legacyStore, loadClientFile, NoiseRuleFileSchema, saveClientFile } from './client-file.js';
import { ClientState, localNoise, type NoiseRule, type SharedNoise } from './client-state.js';

export interface RegistryOptions {
  /** the state dir; without one nothing is saved (tests, a registry for one process) */
  dir?: string | undefined;
  /** clients held at once (config clients.max) */
  max?: number;
  /** a client unseen this long is purged, memory and file (config clients.ttl_s × 1000) */
  ttlMs?: number;
  /**
   * Names the store the cursors and checkpoints point into. A new daemon has new, empty rings
   * whose ordinals start again at 0, so its registry gets a new epoch (the default: random per
   * registry) and ordinals saved under another one are reset (ClientState.fromFile).
   */
  epoch?: string;
  now?: () => number;
  /** how long after a change the state is written (debounce) */
  saveDelayMs?: number;
  /** how often the TTL sweep runs (default: ttl / 4, at most a minute) */
  sweepMs?: number;
}

/** What /health lists per client. */
export interface ClientInfo {
  id: string;
  sessions: number;
  /** when the client's first open session began; null with none open */
  connected_at: string | null;
  last_seen: string;
  /** per kind: records still buffered that the client has not read (newest ordinal − max(cursor, oldest buffered)) */
  cursor_lag: Record<string, number>;
  /** the largest of those: how far behind the client is in its most behind kind */
  cursor_lag_max: number;
}

interface Entry {
  state: ClientState;
  sessions: number;
  connectedAt: number | null;
  lastSeen: number;
  saveTimer: NodeJS.Timeout | undefined;
}

const GlobalNoiseFile = z.object({ v: z.literal(1), rules: z.array(NoiseRuleFileSchema.extend({ by: z.string().max(64) })).max(100) });

export class ClientRegistry {
  readonly epoch: string;
  private readonly map = new Map<string, Entry>();
  private readonly max: number;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly saveDelayMs: number;
  private readonly sweepTimer: NodeJS.Timeout | undefined;
  private readonly global: SharedNoise;
  private stopped = false;

  constructor(private readonly o: RegistryOptions = {}) {
    this.max = o.max ?? 32;
    this.ttlMs = o.ttlMs ?? 3_600_000;
    this.now = o.now ?? Date.now;
    this.saveDelayMs = o.saveDelayMs ?? 1000;
    this.epoch = o.epoch ?? randomUUID();
    this.global = this.loadGlobalNoise();
    if (o.dir !== undefined) {
      this.sweepTimer = setInterval(() => this.sweep(), o.sweepMs ?? Math.min(60_000, Math.max(1000, this.ttlMs / 4)));
      this.sweepTimer.unref();
    }
  }

  /** The client's state, loaded or made; marks it seen. Throws client_limit when no slot can be freed. */
  get(id: string): ClientState {
    const e = this.entry(id);
    e.lastSeen = this.now();
    // the caller may move cursors (a tool call): written after the debounce
    this.changed(id, false);
    return e.state;
  }

  /** The state of a client held now or saved, without making one (e.g. `B:before` names client B's checkpoint). */
  peek(id: string): ClientState | undefined {
    const held = this.map.get(id);
    if (held) return held.state;
    if (this.o.dir === undefined || !this.savable(id)) return undefined;
    const f = loadClientFile(this.o.dir, id);
    return f.kind === 'ok' ? ClientState.fromFile(f.file, this.epoch, this.global, () => undefined) : undefined;
  }

  /** A session of `id` begins. Throws client_limit (every slot holds a client with a session open). */
  open(id: string): ClientState {
    const e = this.entry(id);
    e.sessions++;
    e.lastSeen = this.now();
    e.connectedAt ??= e.lastSeen;
    return e.state;
  }

  /** A session of `id` ended: its state is written now. Unknown ids and extra closes are ignored. */
  close(id: string): void {
    const e = this.map.get(id);
    if (!e || e.sessions === 0) return;
    e.sessions--;
    e.lastSeen = this.now();
    if (e.sessions === 0) e.connectedAt = null;
    this.save(id, e);
  }

  list(reader?: { latestOrd(k: number): number; tailOrd(k: number): number }): ClientInfo[] {
    return [...this.map.entries()].map(([id, e]) => {
      const lag: Record<string, number> = {};
      let maxLag = 0;
      KINDS.forEach((k, i) => {
        const n = reader ? Math.max(0, reader.latestOrd(i) - Math.max(e.state.cursors[i]!, reader.tailOrd(i))) : 0;
        lag[k] = n;
        maxLag = Math.max(maxLag, n);
      });
      return { id, sessions: e.sessions, connected_at: e.connectedAt === null ? null : new Date(e.connectedAt).toISOString(), last_seen: new Date(e.lastSeen).toISOString(), cursor_lag: lag, cursor_lag_max: maxLag };
    });
  }

  get size(): number {
    return this.map.size;
  }

  /** Purges clients unseen for the TTL with no session open, and saved files older than it. */
  sweep(): void {
    const cutoff = this.now() - this.ttlMs;
    for (const [id, e] of this.map) {
      if (e.sessions > 0 || e.lastSeen > cutoff) continue;
      clearTimeout(e.saveTimer);
      this.map.delete(id);
      this.removeFile(id);
      log.info('client purged after its TTL', { client: id });
    }
    if (this.o.dir === undefined) return;
    let names: string[];
    try {
      names = readdirSync(join(this.o.dir, 'clients'));
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const id = name.slice(0, -'.json'.length);
      if (this.map.has(id)) continue;
      try {
        // a file is written whenever its client was seen: its mtime is the client's last sighting
        if (statSync(join(this.o.dir, 'clients', name)).mtimeMs <= cutoff) this.removeFile(id);
      } catch {
        // gone meanwhile
      }
    }
  }

  /** Writes every held client now (shutdown), stops the timers; idempotent. */
  shutdown(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.sweepTimer);
    for (const [id, e] of this.map) this.save(id, e);
  }

  private entry(id: string): Entry {
    let e = this.map.get(id);
    if (e) return e;
    if (this.map.size >= this.max) this.evictIdle();
    const state = this.load(id);
    e = { state, sessions: 0, connectedAt: null, lastSeen: this.now(), saveTimer: undefined };
    this.map.set(id, e);
    return e;
  }

  /** Frees the slot of the client without a session seen longest ago (saved, so it comes back as it was). */
  private evictIdle(): void {
    let victim: [string, Entry] | undefined;
    for (const kv of this.map) if (kv[1].sessions === 0 && (!victim || kv[1].lastSeen < victim[1].lastSeen)) victim = kv;
    if (!victim) throw gasolineError('client_limit', `the daemon already serves ${this.max} clients, each with a session open; close one of those agents (or raise clients.max)`, { max: this.max });
    this.save(victim[0], victim[1]);
    this.map.delete(victim[0]);
  }

  private load(id: string): ClientState {
    const changed = (urgent: boolean): void => this.changed(id, urgent);
    const dir = this.o.dir;
    if (dir !== undefined && this.savable(id)) {
      const f = loadClientFile(dir, id);
      if (f.kind === 'ok') return ClientState.fromFile(f.file, this.epoch, this.global, changed);
      const s = new ClientState(id, this.global, changed);
      if (f.kind === 'none') for (const [k, v] of legacyStore(dir, id)) s.loadStore(k, v);
      return s;
    }
    return new ClientState(id, this.global, changed);
  }

  private changed(id: string, urgent: boolean): void {
    const e = this.map.get(id);
    if (!e || this.o.dir === undefined) return;
    if (urgent) {
      this.save(id, e);
      return;
    }
    // cursors move on every read: one write per client per delay at most
    e.saveTimer ??= setTimeout(() => {
      e.saveTimer = undefined;
      if (this.map.get(id) === e) this.save(id, e);
    }, this.saveDelayMs).unref();
  }

  private save(id: string, e: Entry): void {
    clearTimeout(e.saveTimer);
    e.saveTimer = undefined;
    if (this.o.dir === undefined || !this.savable(id)) return;
    saveClientFile(this.o.dir, e.state.toFile(this.epoch, e.lastSeen));
  }

  /** ids become file names: only the inert ones of the bridge contract (CLIENT_ID_RE), never "." or "..". */
  private savable(id: string): boolean {
    return /^[A-Za-z0-9._-]{1,64}$/.test(id) && !/^\.+$/.test(id);
  }

  private removeFile(id: string): void {
    if (this.o.dir === undefined || !this.savable(id)) return;
    rmSync(clientFilePath(this.o.dir, id), { force: true });
  }

  private globalPath(): string | undefined {
    return this.o.dir === undefined ? undefined : join(this.o.dir, 'noise-global.json');
  }

  /** Global noise rules: held once, applied by every client, saved beside the clients' files. */
  private loadGlobalNoise(): SharedNoise {
    const shared = localNoise();
    const path = this.globalPath();
    const save = (): void => {
      if (!path) return;
      const rules = shared.rules.map((r) => ({ id: r.id, field: r.field, pattern: r.pattern, builtin: false, by: r.global?.by ?? '' }));
      try {
        writePrivateFile(path, JSON.stringify({ v: 1, rules }));
      } catch (e) {
        log.warn('global noise rules not saved', { error: (e as Error).message });
      }
    };
    if (path) {
      try {
        const parsed = GlobalNoiseFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
        if (parsed.success) {
          for (const r of parsed.data.rules) {
            try {
              shared.rules.push({ id: r.id, field: r.field, pattern: r.pattern, re: compileNoise(r.pattern), builtin: false, hits: 0, global: { by: r.by } });
            } catch {
              // a pattern this version refuses is dropped
            }
          }
        } else log.warn('global noise rules file ignored', { file: path });
      } catch {
        // none yet
      }
    }
    // ids go on after the highest one loaded, so a removed id is never reused for another rule
    let next = 1 + Math.max(0, ...shared.rules.map((r) => Number(r.id.slice(1)) || 0));
    return {
      rules: shared.rules,
      add: (by: string, field: NoiseField, pattern: string): NoiseRule => {
        if (shared.rules.length >= 100) throw gasolineError('limit_reached', 'at most 100 global noise rules; remove one first');
        const rule: NoiseRule = { id: `g${next++}`, field, pattern, re: compileNoise(pattern), builtin: false, hits: 0, global: { by } };
        shared.rules.push(rule);
        save();
        return rule;
      },
      remove: (id: string): boolean => {
        const ok = shared.remove(id);
        if (ok) save();
        return ok;
      },
    };
  }
}
