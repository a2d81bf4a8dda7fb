/**
 * Per-client state: read cursors ("what's new since I last looked"), checkpoints and noise
 * rules. Shared telemetry lives once in the rings; a client's view is cursors and filters.
 */
import { KIND_COUNT } from '../domain/kinds.js';
import { gasolineError } from '../errors.js';
import { BUILTIN_NOISE, compileNoise, noiseField, type NoiseField, type NoiseTest } from '../query/index.js';

export interface Checkpoint {
  name: string;
  created_at: string;
  /** per kind: the ordinal that was next when the checkpoint was made */
  ords: number[];
}

export interface NoiseRule {
  id: string;
  field: NoiseField;
  pattern: string;
  re: NoiseTest;
  builtin: boolean;
  hits: number;
}

const MAX_CHECKPOINTS = 50;
const MAX_NOISE_RULES = 100;

export class ClientState {
  readonly cursors: number[] = new Array<number>(KIND_COUNT).fill(0);
  /** observe({what:"summary"}) reads on its own cursors, so the lists it points to still hold the details */
  readonly summaryCursors: number[] = new Array<number>(KIND_COUNT).fill(0);
  readonly checkpoints = new Map<string, Checkpoint>();
  readonly noise: NoiseRule[] = [];
  private nextRule = 1;

  constructor(readonly id: string) {
    for (const [field, pattern] of BUILTIN_NOISE) this.addNoise(field, pattern, true);
  }

  addNoise(field: NoiseRule['field'], pattern: string, builtin = false): NoiseRule {
    if (this.noise.length >= MAX_NOISE_RULES) throw gasolineError('limit_reached', `at most ${MAX_NOISE_RULES} noise rules; remove one first`);
    // throws pattern_refused: what the linear-time engine cannot run, or too long
    const re = compileNoise(pattern);
    const rule: NoiseRule = { id: `n${this.nextRule++}`, field, pattern, re, builtin, hits: 0 };
    this.noise.push(rule);
    return rule;
  }

  removeNoise(id: string): boolean {
    const i = this.noise.findIndex((r) => r.id === id);
    if (i < 0) return false;
    this.noise.splice(i, 1);
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
    return cp;
  }
}

// in a module of its own so a bridge can derive it without loading the engine
export { deriveClientId } from './client-id.js';

/** Bounded registry of client states (one per MCP client identity). */
export class ClientRegistry {
  private readonly map = new Map<string, ClientState>();
  constructor(private readonly max = 64) {}
  get(id: string): ClientState {
    let s = this.map.get(id);
    if (!s) {
      if (this.map.size >= this.max) {
        const oldest = this.map.keys().next().value;
        if (oldest !== undefined) this.map.delete(oldest);
      }
      s = new ClientState(id);
      this.map.set(id, s);
    }
    return s;
  }
}
