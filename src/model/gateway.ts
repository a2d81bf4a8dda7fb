/**
 * The redaction gateway: the only way to a model. Every model-bound string — the system prompt,
 * each record of the context, the user's question — passes the egress stage, the same engine and
 * rules in force that tool answers pass (user rules added at run time included). The context is
 * rendered from the redacted records within max_context_chars (context-text.ts), and each block
 * passes the rules again as the text that leaves. If the rules cannot run (no rule set, a throw),
 * nothing leaves: model_egress_blocked. Counters for /health: requests, redacted, blocked, failed,
 * the last error's code — never a payload, a key or a provider's words.
 */
import { gasolineError, GasolineError, type ErrorCode } from '../errors.js';
import type { AskOptions, ModelAdapter, RedactedPayload } from './adapter.js';
import { errorBlock, renderContext, requestBlock } from './context-text.js';
import { ModelRequestSchema, type ModelAnswer, type ModelRequest, type TriageContext } from './schema.js';

/** The rule set in force, as the gateway uses it: its version and its text redaction. */
export interface EgressPolicy {
  readonly version: number;
  redactText(s: string): string;
}

/** undefined: no rule set could be had, so nothing may leave */
export type PolicySource = () => EgressPolicy | undefined;

const MARK = '[REDACTED:';

function markers(s: string): number {
  let n = 0;
  for (let i = s.indexOf(MARK); i >= 0; i = s.indexOf(MARK, i + MARK.length)) n++;
  return n;
}

/** every string of a JSON-shaped value through `f`; the shape stays */
function mapStrings<T>(v: T, f: (s: string) => string): T {
  if (typeof v === 'string') return f(v) as T;
  if (Array.isArray(v)) return v.map((x: unknown) => mapStrings(x, f)) as T;
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = mapStrings(x, f);
    return out as T;
  }
  return v;
}

/** Why egress was denied: the error's class only — its message may quote the very text it failed on. */
function blocked(why: string): GasolineError {
  return gasolineError('model_egress_blocked', `${why}: nothing was sent to the model`);
}

/**
 * The request as it may leave: redacted, rendered within `maxContextChars`, branded. Throws
 * model_egress_blocked when the rules cannot run.
 */
export function redactForEgress(req: ModelRequest, policy: EgressPolicy | undefined, maxContextChars: number): RedactedPayload {
  if (!policy) throw blocked('no redaction rule set is loaded');
  const parsed = ModelRequestSchema.safeParse(req);
  if (!parsed.success) throw blocked('the model request did not match its schema');
  try {
    const r = (s: string): string => {
      const out = policy.redactText(s);
      if (typeof out !== 'string') throw new TypeError('redaction returned no text');
      return out;
    };
    const context: TriageContext = mapStrings(parsed.data.context, r);
    const system = r(parsed.data.system);
    const question = parsed.data.question === undefined ? undefined : r(parsed.data.question);
    const rendered = renderContext(context, { errors: context.errors.map((e) => r(errorBlock(e))), failing: context.failing.map((f) => r(requestBlock(f))) }, maxContextChars);
    const user = `${rendered.text}\n\n${question ? `question: ${question}` : 'task: say what broke, with the evidence, and the next calls to make'}`;
    const payload = { system, user, ...(question !== undefined ? { question } : {}), context, redacted: Math.max(0, markers(system) - markers(parsed.data.system)) + markers(user), policy: policy.version, cut: rendered.cut };
    return payload as RedactedPayload;
  } catch (e) {
    throw blocked(`redaction failed (${e instanceof Error ? e.name : typeof e})`);
  }
}

export interface ModelStats {
  requests: number;
  /** secrets kept out of payloads that left (markers in them) */
  redacted: number;
  /** payloads denied because redaction could not run */
  blocked: number;
  /** provider failures (timeouts, refusals, broken streams) */
  failed: number;
  last_error: ErrorCode | null;
}

export type GatewayOutcome =
  | { ok: true; answer: ModelAnswer; policy: number; redacted: number; cut: RedactedPayload['cut'] }
  | { ok: false; error: GasolineError; policy: number; redacted: number; blocked: boolean };

export class ModelGateway {
  readonly stats: ModelStats = { requests: 0, redacted: 0, blocked: 0, failed: 0, last_error: null };

  constructor(
    readonly adapter: ModelAdapter,
    private readonly policy: PolicySource,
    private readonly maxContextChars: number,
  ) {}

  /** Redact, then ask. Never throws for a provider or a redaction failure: the outcome says it. */
  async ask(req: ModelRequest, o: AskOptions = {}): Promise<GatewayOutcome> {
    this.stats.requests++;
    let policy: EgressPolicy | undefined;
    let version = 0;
    let payload: RedactedPayload;
    try {
      policy = this.policy();
      version = policy?.version ?? 0;
      payload = redactForEgress(req, policy, this.maxContextChars);
    } catch (e) {
      const error = e instanceof GasolineError && e.code === 'model_egress_blocked' ? e : blocked(`the redaction policy could not be read (${e instanceof Error ? e.name : typeof e})`);
      this.stats.blocked++;
      this.stats.last_error = error.code;
      return { ok: false, error, policy: version, redacted: 0, blocked: true };
    }
    this.stats.redacted += payload.redacted;
    try {
      const answer = await this.adapter.ask(payload, o);
      return { ok: true, answer, policy: payload.policy, redacted: payload.redacted, cut: payload.cut };
    } catch (e) {
      const error = e instanceof GasolineError ? e : gasolineError('model_unavailable', `the ${this.adapter.name} adapter failed (${e instanceof Error ? e.name : typeof e})`);
      this.stats.failed++;
      this.stats.last_error = error.code;
      return { ok: false, error, policy: payload.policy, redacted: payload.redacted, blocked: false };
    }
  }

  /** The /health section: which adapter, which policy, the counters. Nothing secret. */
  health(): Record<string, unknown> {
    let version: number | null = null;
    try {
      version = this.policy()?.version ?? null;
    } catch {
      version = null;
    }
    return { adapter: this.adapter.name, policy_version: version, ...this.stats };
  }
}
