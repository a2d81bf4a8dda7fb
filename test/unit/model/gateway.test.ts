/**
 * The redaction gateway: the secret corpus in every model-bound field (system prompt, each record
 * of the context, the question) never reaches a payload; the rules added at run time apply and
 * move the policy version; a redaction that throws or cannot run lets nothing out; the context is
 * cut at record boundaries and says so.
 */
import { describe, expect, it } from 'vitest';
import { compileRedaction, LiveRedaction } from '../../../src/domain/redaction/index.js';
import { ModelGateway, offlineAdapter, openAiAdapter, redactForEgress, TriageContextSchema, type EgressPolicy, type ModelRequest, type TriageContext } from '../../../src/model/index.js';
import { ModelConfigSchema } from '../../../src/model/schema.js';
import { loadCorpus } from '../../helpers/redaction-carry.js';
import { RecordingProvider } from '../../helpers/model-provider.js';
import { leakIn, windows } from '../../helpers/leak-windows.js';

const T = Date.UTC(2026, 10, 25, 12, 0, 0);
const corpus = loadCorpus();
const secrets = corpus.filter((l) => !l.lookalike && l.secret);

/** the secret, JSON-escaped or %-encoded, or any 12-character window of it */
function leak(out: string, secret: string): string | null {
  return leakIn(windows(out), secret);
}


function contextOf(texts: string[]): TriageContext {
  return TriageContextSchema.parse({
    since: T,
    records: texts.length * 2,
    extension: 'connected',
    // whole texts in every field (the longest is ~300 characters): a secret cut in half before
    // redaction is a prefix no rule matches — the store's records were redacted whole at ingest
    errors: texts.map((t, i) => ({ message: t, signature: `sig ${i} ${t}`, count: 1, first: T, last: T + i, location: `src/a.ts:${i}:1`, page: `http://localhost:3000/?q=${t}`, before: [{ kind: 'log', text: `warn ${t}` }, { kind: 'action', text: `input ${t}`, selector: '#f' }] })),
    failing: texts.map((t, i) => ({ method: 'POST', url: t.startsWith('http') ? t : `http://localhost:3000/api?x=${t}`, status: 500, count: 1, last: T + i, error: t })),
  });
}

/** whole texts joined while they fit: a question cut mid-secret would test the cut, not the rules */
function wholeTexts(texts: string[], max: number): string {
  let q = 'is this ok?';
  for (const t of texts) if (q.length + t.length + 3 <= max) q += ` | ${t}`;
  return q;
}

const live = (): EgressPolicy => {
  const engine = compileRedaction();
  return { version: 0, redactText: (s) => engine.redactText(s) };
};

describe('redaction gateway', () => {
  it('lets no corpus secret into any model-bound field, in any carrier', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(150);
    // a context holds at most 200 errors and 200 requests: the corpus goes in slices
    for (let at = 0; at < secrets.length; at += 200) {
      const slice = secrets.slice(at, at + 200);
      const texts = slice.map((l) => l.text);
      const req: ModelRequest = { system: `triage. example of what never to echo: ${texts[0]}`, question: wholeTexts(texts, 2000), context: contextOf(texts) };
      const p = redactForEgress(req, live(), 1_000_000);
      const out = JSON.stringify(p);
      const w = windows(out);
      const leaked = slice.map((l) => [l.class, l.carrier, leakIn(w, l.secret!)]).filter(([, , x]) => x !== null);
      expect(leaked).toEqual([]);
      expect(p.redacted).toBeGreaterThanOrEqual(slice.length);
      expect(p.cut).toEqual({ errors: 0, failing: 0 });
    }
  });

  it('applies rules added at run time, and the policy version moves with them', () => {
    const rules = new LiveRedaction({ rules: [], allowlist: [] });
    const policy = (): EgressPolicy => ({ version: rules.version, redactText: (s) => rules.engine.redactText(s) });
    const req: ModelRequest = { system: 's', question: 'what about order ORD-778812?', context: contextOf(['checkout failed for ORD-778812']) };
    expect(redactForEgress(req, policy(), 100_000).user).toContain('ORD-778812');
    rules.add({ name: 'orders', pattern: 'ORD-\\d{6}' });
    const p = redactForEgress(req, policy(), 100_000);
    expect(p.policy).toBe(1);
    expect(JSON.stringify(p)).not.toContain('ORD-778812');
    expect(p.question).toContain('[REDACTED:orders]');
  });

  it('denies egress when redaction throws or there is no rule set: model_egress_blocked, nothing reaches the provider', async () => {
    const provider = await RecordingProvider.start();
    try {
      const cfg = ModelConfigSchema.parse({ adapter: 'openai', base_url: provider.baseUrl, model: 'm' });
      const throwing = new ModelGateway(openAiAdapter(cfg), () => ({ version: 4, redactText: () => { throw new Error('boom: Bearer abcdefghijklmnopqrstuvwx'); } }), 100_000);
      const out = await throwing.ask({ system: 's', context: contextOf(['x']) });
      expect(out.ok).toBe(false);
      if (out.ok) return;
      expect(out.error.code).toBe('model_egress_blocked');
      expect(out.blocked).toBe(true);
      expect(out.policy).toBe(4);
      // the thrown message may quote the text it failed on: only its class is said
      expect(out.error.message).toBe('redaction failed (Error): nothing was sent to the model');
      expect(throwing.stats).toMatchObject({ requests: 1, blocked: 1, failed: 0, last_error: 'model_egress_blocked' });
      const none = new ModelGateway(openAiAdapter(cfg), () => undefined, 100_000);
      const out2 = await none.ask({ system: 's', context: contextOf([]) });
      expect(!out2.ok && out2.error.code).toBe('model_egress_blocked');
      const policyThrows = new ModelGateway(openAiAdapter(cfg), () => { throw new Error('no engine'); }, 100_000);
      expect(((await policyThrows.ask({ system: 's', context: contextOf([]) })) as { error: { code: string } }).error.code).toBe('model_egress_blocked');
      expect(provider.requests).toEqual([]);
      expect(throwing.health()).toEqual({ adapter: 'openai', policy_version: 4, requests: 1, redacted: 0, blocked: 1, failed: 0, last_error: 'model_egress_blocked' });
    } finally {
      await provider.close();
    }
  });

  it('a time out of the Date range (a page sent ts 1e300) is written as the number: neither the gateway nor the offline adapter throws', async () => {
    const c = contextOf(['far future']);
    const far = { ...c, since: -1e300, errors: c.errors.map((e) => ({ ...e, first: 1e300, last: 1e300 })), failing: c.failing.map((f) => ({ ...f, last: 8.64e15 + 1 })) };
    const p = redactForEgress({ system: 's', context: far }, live(), 100_000);
    expect(p.user).toContain('since -1e+300');
    expect(p.user).toContain('first 1e+300 last 1e+300');
    expect(p.user).toContain('last 8640000000000001');
    const out = await new ModelGateway(offlineAdapter, live, 100_000).ask({ system: 's', context: far });
    expect(out.ok).toBe(true);
    expect(out.ok && out.answer.text).toContain('last 1e+300');
  });

  it('cuts the context at record boundaries within max_context_chars and says what it cut', () => {
    const texts = Array.from({ length: 40 }, (_, i) => `Error number ${i}: ${'x'.repeat(900)}`);
    const p = redactForEgress({ system: 's', context: contextOf(texts) }, live(), 10_000);
    const context = p.user.slice(0, p.user.lastIndexOf('\n\n'));
    expect(context.length).toBeLessThanOrEqual(10_000);
    expect(p.cut.errors).toBeGreaterThan(20);
    expect(p.cut.failing).toBe(40);
    // whole blocks only: every ERROR line that made it has its before-lines after it
    const shown = [...context.matchAll(/^ERROR ×1 "Error number (\d+)/gm)].map((m) => Number(m[1]));
    expect(shown).toEqual(Array.from({ length: 40 - p.cut.errors }, (_, i) => i));
    expect(context).toContain(`[cut by model.max_context_chars (10000): ${p.cut.errors} errors and 40 failing requests left out]`);
    expect(context.split('\n').filter((l) => l.startsWith('  before: ')).length).toBe(shown.length * 2);
  });

  it('the offline adapter concludes from the redacted context: what it says was through the rules', async () => {
    const g = new ModelGateway(offlineAdapter, live, 100_000);
    const bearer = secrets.find((l) => l.class === 'bearer' && l.carrier === 'header')!;
    const out = await g.ask({ system: 's', question: `token ${bearer.text}`, context: contextOf([bearer.text]) });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(leak(out.answer.text, bearer.secret!)).toBeNull();
    expect(out.answer.text).toContain('[REDACTED:');
    expect(g.stats).toMatchObject({ requests: 1, blocked: 0, failed: 0 });
    expect(g.stats.redacted).toBe(out.redacted);
  });
});
