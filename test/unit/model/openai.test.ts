/**
 * The OpenAI-compatible adapter against a real HTTP server: streamed answers piece by piece, the
 * key only in the Authorization header, and every bound — retries only for 429/5xx/network before
 * the first byte, first-byte and total timeouts, the answer's size, a broken or malformed stream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ModelGateway, openAiAdapter, type RedactedPayload } from '../../../src/model/index.js';
import { ModelConfigSchema, type ModelConfig } from '../../../src/model/schema.js';
import { RecordingProvider, sseChunk } from '../../helpers/model-provider.js';

let provider: RecordingProvider;
beforeAll(async () => {
  provider = await RecordingProvider.start();
});
afterAll(async () => {
  await provider.close();
});
beforeEach(() => {
  provider.requests.length = 0;
});

const KEY = 'sk-test-key-0123456789abcdef';
const cfg = (over: Partial<ModelConfig> = {}): ModelConfig => ModelConfigSchema.parse({ adapter: 'openai', base_url: `${provider.baseUrl}/`, api_key: KEY, model: 'tiny', timeout_ms: 3000, first_byte_ms: 1000, retries: 1, ...over });
const payload = { system: 'sys', user: 'ctx', context: { since: null, records: 0, extension: 'absent', errors: [], failing: [], more_errors: 0, more_failing: 0, partial: false }, redacted: 0, policy: 0, cut: { errors: 0, failing: 0 } } as unknown as RedactedPayload;

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

describe('openai adapter', () => {
  it('streams: POST /chat/completions with stream:true, the pieces in order, the whole answer', async () => {
    provider.plans = [{ pieces: ['conc', 'lusion: ', 'it broke'], pieceDelayMs: 5 }];
    const pieces: string[] = [];
    const a = await openAiAdapter(cfg()).ask(payload, { onChunk: (s) => pieces.push(s) });
    expect(a).toEqual({ text: 'conclusion: it broke', adapter: 'openai', model: 'tiny' });
    expect(pieces).toEqual(['conc', 'lusion: ', 'it broke']);
    expect(provider.requests).toHaveLength(1);
    const r = provider.requests[0]!;
    expect(r.url).toBe('/v1/chat/completions');
    expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(r.body)).toEqual({ model: 'tiny', stream: true, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'ctx' }] });
  });

  it('retries a 5xx and a 429 (bounded by retries), never a 4xx', async () => {
    provider.plans = [{ status: 503 }, { pieces: ['fine'] }];
    expect((await openAiAdapter(cfg(), { backoffMs: 10 }).ask(payload)).text).toBe('fine');
    expect(provider.requests).toHaveLength(2);
    provider.requests.length = 0;
    provider.plans = [{ status: 429 }];
    const e = await openAiAdapter(cfg({ retries: 3 }), { backoffMs: 5 }).ask(payload).catch((x: unknown) => x as Error);
    expect(e).toMatchObject({ code: 'model_unavailable', message: 'the provider answered HTTP 429 (rate limited)' });
    expect(provider.requests).toHaveLength(4);
    provider.requests.length = 0;
    provider.plans = [{ status: 401 }];
    const e401 = await openAiAdapter(cfg({ retries: 3 }), { backoffMs: 5 }).ask(payload).catch((x: unknown) => x as Error);
    expect(e401).toMatchObject({ code: 'model_unavailable' });
    expect((e401 as Error).message).toContain('check model.api_key');
    expect((e401 as Error).message).not.toContain(KEY);
    expect(provider.requests).toHaveLength(1);
  });

  it('a network error is retried, then answered model_unavailable without the address', async () => {
    const dead = await RecordingProvider.start();
    const url = dead.baseUrl;
    await dead.close();
    const e = await openAiAdapter(cfg({ base_url: url, retries: 2 }), { backoffMs: 5 }).ask(payload).catch((x: unknown) => x as Error);
    expect(e).toMatchObject({ code: 'model_unavailable' });
    expect((e as Error).message).toMatch(/could not be reached \(TypeError: ECONNREFUSED\)/);
    expect((e as Error).message).not.toContain('127.0.0.1');
  });

  it('no first byte within first_byte_ms: retried, then model_timeout; a whole-call deadline bounds everything', async () => {
    provider.plans = [{ stallAfterHeaders: true }];
    const t0 = Date.now();
    expect(await code(openAiAdapter(cfg({ first_byte_ms: 200, retries: 1 }), { backoffMs: 10 }).ask(payload))).toBe('model_timeout');
    expect(provider.requests).toHaveLength(2);
    expect(Date.now() - t0).toBeLessThan(2000);
    provider.requests.length = 0;
    provider.plans = [{ hang: true }];
    const t1 = Date.now();
    expect(await code(openAiAdapter(cfg({ timeout_ms: 1000, first_byte_ms: 5000, retries: 3 })).ask(payload))).toBe('model_timeout');
    expect(Date.now() - t1).toBeLessThan(1800);
    expect(provider.requests).toHaveLength(1);
    // bytes arrived, then the deadline: not retried, what came is dropped
    provider.requests.length = 0;
    provider.plans = [{ pieces: Array.from({ length: 50 }, () => 'x'), pieceDelayMs: 50 }];
    expect(await code(openAiAdapter(cfg({ timeout_ms: 1000, retries: 3 })).ask(payload))).toBe('model_timeout');
    expect(provider.requests).toHaveLength(1);
  });

  it('bounds the answer, and a stream that breaks or is not JSON is not retried once bytes came', async () => {
    provider.plans = [{ pieces: Array.from({ length: 40 }, () => 'y'.repeat(100)) }];
    expect(await code(openAiAdapter(cfg({ max_answer_chars: 1000 })).ask(payload))).toBe('model_answer_too_large');
    provider.plans = [{ raw: `data: ${'z'.repeat(10_000)}` }];
    expect(await code(openAiAdapter(cfg({ max_answer_chars: 1000 })).ask(payload))).toBe('model_answer_too_large');
    provider.requests.length = 0;
    provider.plans = [{ pieces: ['half'], pieceDelayMs: 100, breakAfter: true }];
    expect(await code(openAiAdapter(cfg({ retries: 3 })).ask(payload))).toBe('model_unavailable');
    expect(provider.requests).toHaveLength(1);
    provider.plans = [{ raw: 'data: not json\n\n' }];
    expect(await code(openAiAdapter(cfg()).ask(payload))).toBe('model_unavailable');
    provider.plans = [{ raw: `${sseChunk('ok')}data: {"error":{"message":"sk-echo"}}\n\n` }];
    const e = await openAiAdapter(cfg()).ask(payload).catch((x: unknown) => x as Error);
    expect((e as Error).message).toBe('the provider sent an error in the stream');
    // no [DONE]: the stream broke off, with some of an answer or none; neither is taken, nor retried
    provider.requests.length = 0;
    provider.plans = [{ pieces: ['done anyway'], noDone: true }];
    const broke = await openAiAdapter(cfg()).ask(payload).catch((x: unknown) => x as Error & { code: string });
    expect((broke as { code: string }).code).toBe('model_unavailable');
    expect((broke as Error).message).toMatch(/stream broke off/);
    expect(provider.requests).toHaveLength(1);
    provider.plans = [{ pieces: [], noDone: true }];
    expect(await code(openAiAdapter(cfg()).ask(payload))).toBe('model_unavailable');
  });

  it('a signal already aborted: no request reaches the provider, and the call is refused at once', async () => {
    provider.plans = [{ pieces: ['never'] }];
    const ac = new AbortController();
    ac.abort();
    const e = await openAiAdapter(cfg({ retries: 3 })).ask(payload, { signal: ac.signal }).catch((x: unknown) => x as Error & { code: string });
    expect((e as { code: string }).code).toBe('model_unavailable');
    expect((e as Error).message).toMatch(/cancelled/);
    expect(provider.requests).toEqual([]);
  });

  it('a failing provider is counted by the gateway and answered, never thrown', async () => {
    provider.plans = [{ status: 500 }];
    const g = new ModelGateway(openAiAdapter(cfg({ retries: 0 })), () => ({ version: 2, redactText: (s) => s }), 100_000);
    const out = await g.ask({ system: 's', context: payload.context });
    expect(out.ok).toBe(false);
    expect(g.health()).toEqual({ adapter: 'openai', policy_version: 2, requests: 1, redacted: 0, blocked: 0, failed: 1, last_error: 'model_unavailable' });
    expect(JSON.stringify(g.health())).not.toContain(KEY);
  });
});
