/**
 * Per-client state: read cursors ("what's new since I last looked"), checkpoints, noise rules,
 * a tab filter, the streaming config a session restores and a small key/value store. Shared
 * telemetry lives once in the rings; a client's view is cursors and filters. The registry
 * (registry.ts) owns the states, saves them (client-file.ts) and holds the global noise rules.
 */
import { KIND_COUNT } from '../domain/kinds.js';
import { gasolineError } from '../errors.js';
import { BUILTIN_NOISE, compileNoise, compileTabPattern, noiseField, type NoiseField, type NoiseTest } from '../query/index.js';
import { MAX_STORE_CHARS, type ClientFile, type SavedStreaming, type TabFilter } from './client-file.js';

export interface Checkpoint {
  name: string;
  created_at: string;
  /** per kind: the ordinal that was next when the checkpoint was made */
  ords: number[];
  /** made under an earlier daemon: its ordinals were reset to 0, so everything now buffered is after it */
  restarted?: boolean;
}

export interface NoiseRule {
  id: string;
  field: NoiseField;
  pattern: string;
  re: NoiseTest;
  builtin: boolean;
  hits: number;
  /** a rule every client applies (configure noise_rule add with scope:"global"); who added it */
  global?: { by: string };
}

/** The rules every client applies, held once by the registry. */
export interface SharedNoise {
  readonly rules: NoiseRule[];
  add(by: string, field: NoiseField, pattern: string): NoiseRule;
  remove(id: string): boolean;
}

const MAX_CHECKPOINTS = 50;
const MAX_NOISE_RULES = 100;
const MAX_STORE_KEYS = 1000;

export class ClientState {
  readonly cursors: number[] = new Array<number>(KIND_COUNT).fill(0);
  /** observe({what:"summary"}) reads on its own cursors, so the lists it points to still hold the details */
  readonly summaryCursors: number[] = new Array<number>(KIND_COUNT).fill(0);
  readonly checkpoints = new Map<string, Checkpoint>();
  /** this client's own rules (the defaults first); `noise` adds the global ones */
  readonly own: NoiseRule[] = [];
  /** null: every tab */
  tabFilter: TabFilter | null = null;
  /** null: never configured (a new session starts with streaming off) */
  streaming: SavedStreaming | null = null;
  /** user-named keys live in a Map: on a plain object "__proto__" or "constructor" would hit the prototype (#18 item 7) */
  readonly store = new Map<string, string>();
  private storeChars = 0;
  private nextRule = 1;

  constructor(
    readonly id: string,
    private readonly shared: SharedNoise = localNoise(),
    /** called after every change that should reach the disk; `urgent`: write now, not debounced */
    private changed: (urgent: boolean) => void = () => undefined,
    defaults = true,
  ) {
    if (defaults) for (const [field, pattern] of BUILTIN_NOISE) this.addNoise(field, pattern, true);
  }

  /** Own rules, then the global ones: what every read of this client hides. */
  get noise(): NoiseRule[] {
    return this.shared.rules.length ? [...this.own, ...this.shared.rules] : this.own;
  }

  addNoise(field: NoiseRule['field'], pattern: string, builtin = false, id?: string): NoiseRule {
    if (this.own.length >= MAX_NOISE_RULES) throw gasolineError('limit_reached', `at most ${MAX_NOISE_RULES} noise rules; remove one first`);
    // throws pattern_refused: what the linear-time engine cannot run, or too long
    const re = compileNoise(pattern);
    const rule: NoiseRule = { id: id ?? `n${this.nextRule++}`, field, pattern, re, builtin, hits: 0 };
    this.own.push(rule);
    this.changed(false);
    return rule;
  }

  /** A rule for every client; throws pattern_refused or limit_reached like addNoise. */
  addGlobalNoise(field: NoiseField, pattern: string): NoiseRule {
    return this.shared.add(this.id, field, pattern);
  }

  /** Own rules by id; a global rule (id g…) may be removed by any client: see docs/ARCHITECTURE.md "Per-client state". */
  removeNoise(id: string): boolean {
    const i = this.own.findIndex((r) => r.id === id);
    if (i < 0) return this.shared.remove(id);
    this.own.splice(i, 1);
    this.changed(false);
    return true;
  }

  /** The rule that hides this record, if any. */
  noisy(rec: Record<string, unknown>): NoiseRule | undefined {
    for (const r of this.noise) {
      const v = noiseField(rec, r.field);
      if (typeof v === 'string' && r.re.test(v)) {
        r.hits++;
        return r;
      }
    }
    return undefined;
  }

  addCheckpoint(name: string, ords: number[]): Checkpoint {
    if (!this.checkpoints.has(name) && this.checkpoints.size >= MAX_CHECKPOINTS) throw gasolineError('limit_reached', `at most ${MAX_CHECKPOINTS} checkpoints; delete one first`);
    const cp = { name, created_at: new Date().toISOString(), ords: [...ords] };
    this.checkpoints.set(name, cp);
    this.changed(false);
    return cp;
  }

  deleteCheckpoint(name: string): boolean {
    const had = this.checkpoints.delete(name);
    if (had) this.changed(false);
    return had;
  }

  setTabFilter(f: TabFilter | null): void {
    if (f && 'url' in f) compileTabPattern(f.url); // throws pattern_refused before anything changes
    this.tabFilter = f;
    this.changed(false);
  }

  setStreaming(s: SavedStreaming | null): void {
    this.streaming = s;
    this.changed(false);
  }

  /** A value the caller has already redacted: this lands on disk. Written at once: an agent that stores a note expects it kept. */
  storeSet(key: string, value: string): void {
    const old = this.store.get(key);
    if (old === undefined && this.store.size >= MAX_STORE_KEYS) throw gasolineError('limit_reached', `store holds at most ${MAX_STORE_KEYS} keys; delete one first`);
    const chars = this.storeChars - (old === undefined ? 0 : key.length + old.length) + key.length + value.length;
    if (chars > MAX_STORE_CHARS) throw gasolineError('limit_reached', `store holds at most ${MAX_STORE_CHARS} characters in all (now ${this.storeChars}); delete keys first`);
    this.store.set(key, value);
    this.storeChars = chars;
    this.changed(true);
  }

  storeDelete(key: string): boolean {
    const old = this.store.get(key);
    if (old === undefined) return false;
    this.store.delete(key);
    this.storeChars -= key.length + old.length;
    this.changed(true);
    return true;
  }

  /** The durable part, as the file holds it (client-file.ts). */
  toFile(epoch: string, lastSeen: number): ClientFile {
    return {
      v: 1,
      id: this.id,
      epoch,
      saved_at: new Date().toISOString(),
      last_seen: new Date(lastSeen).toISOString(),
      cursors: [...this.cursors],
      summary_cursors: [...this.summaryCursors],
      checkpoints: [...this.checkpoints.values()].map((c) => ({ name: c.name, created_at: c.created_at, ords: [...c.ords], ...(c.restarted ? { restarted: true } : {}) })),
      noise: this.own.map((r) => ({ id: r.id, field: r.field, pattern: r.pattern, builtin: r.builtin })),
      tab_filter: this.tabFilter,
      streaming: this.streaming,
      store: [...this.store],
    };
  }

  /**
   * A state from its file. Ordinals belong to the store they were read from: under another
   * epoch (the daemon restarted, its rings start empty at ordinal 0) cursors start at 0 — all
   * that is buffered now is new to this client — and checkpoints become "before this daemon
   * started" (ordinals 0, marked restarted).
   */
  static fromFile(f: ClientFile, epoch: string, shared: SharedNoise, changed: (urgent: boolean) => void): ClientState {
    const s = new ClientState(f.id, shared, () => undefined, false);
    const same = f.epoch === epoch;
    if (same) {
      f.cursors.forEach((c, k) => {
        s.cursors[k] = c;
      });
      f.summary_cursors.forEach((c, k) => {
        s.summaryCursors[k] = c;
      });
    }
    for (const c of f.checkpoints) s.checkpoints.set(c.name, same ? { ...c, ords: [...c.ords] } : { name: c.name, created_at: c.created_at, ords: new Array<number>(KIND_COUNT).fill(0), restarted: true });
    for (const r of f.noise) {
      try {
        s.addNoise(r.field, r.pattern, r.builtin, r.id);
      } catch {
        // a pattern this version refuses is dropped, the rest still load
      }
    }
    s.nextRule = 1 + Math.max(0, ...s.own.map((r) => Number(r.id.slice(1)) || 0));
    s.tabFilter = f.tab_filter;
    s.streaming = f.streaming;
    for (const [k, v] of f.store) s.loadStore(k, v);
    // from here on a change is saved; loading itself is not one
    s.changed = changed;
    return s;
  }

  /** the pre-#16 store file, read once (client-file.ts legacyStore) */
  loadStore(key: string, value: string): void {
    if (this.store.size >= MAX_STORE_KEYS || this.storeChars + key.length + value.length > MAX_STORE_CHARS) return;
    this.store.set(key, value);
    this.storeChars += key.length + value.length;
  }
}

/** Global rules nobody shares: a state built on its own (tests, the offline port without a registry). */
export function localNoise(): SharedNoise {
  const rules: NoiseRule[] = [];
  let next = 1;
  return {
    rules,
    add(by, field, pattern) {
      if (rules.length >= MAX_NOISE_RULES) throw gasolineError('limit_reached', `at most ${MAX_NOISE_RULES} global noise rules; remove one first`);
      const rule: NoiseRule = { id: `g${next++}`, field, pattern, re: compileNoise(pattern), builtin: false, hits: 0, global: { by } };
      rules.push(rule);
      return rule;
    },
    remove(id) {
      const i = rules.findIndex((r) => r.id === id);
      if (i < 0) return false;
      rules.splice(i, 1);
      return true;
    },
  };
}

// in a module of its own so a bridge can derive it without loading the engine
export { deriveClientId } from './client-id.js';
