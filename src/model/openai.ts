/**
 * An OpenAI-compatible chat completions provider, streamed: POST {base_url}/chat/completions with
 * `stream: true`, the answer read as server-sent events (sse.ts) and handed on piece by piece.
 *
 * Every wait is bounded: the whole call by timeout_ms (retries included), each attempt's first
 * byte by first_byte_ms, the answer by max_answer_chars. A 429, a 5xx, a network error or a silent
 * provider before any byte of the answer arrived is tried again (at most `retries` times, with
 * backoff, within the deadline); once a byte arrived nothing is repeated, so no piece of an answer
 * is ever sent twice. Messages never quote the key, the base URL or the provider's body: a
 * provider's error text may echo what it was sent.
 */
import { gasolineError, GasolineError } from '../errors.js';
import type { AskOptions, ModelAdapter, RedactedPayload } from './adapter.js';
import type { ModelAnswer, ModelConfig } from './schema.js';
import { SseParser, SseTooLarge } from './sse.js';

export interface OpenAiOptions {
  /** I/O is injectable (tests in-process use a real server all the same) */
  fetch?: typeof fetch;
  /** the first retry's wait; doubles each time */
  backoffMs?: number;
}

/** raw bytes of one streamed answer at most: framing costs ~150 bytes per piece, so well above the text bound */
const MAX_STREAM_BYTES = 16 * 1024 * 1024;

type Attempt = { ok: true; answer: ModelAnswer } | { ok: false; retry: boolean; error: GasolineError };

export function openAiAdapter(cfg: ModelConfig, o: OpenAiOptions = {}): ModelAdapter {
  const doFetch = o.fetch ?? fetch;
  const backoff = o.backoffMs ?? 250;
  const url = `${(cfg.base_url ?? '').replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (cfg.api_key) headers.authorization = `Bearer ${cfg.api_key}`;

  async function attempt(p: RedactedPayload, deadline: number, opt: AskOptions): Promise<Attempt> {
    // an 'abort' listener added to a signal already aborted never fires: look first
    if (opt.signal?.aborted) return { ok: false, retry: false, error: cancelled() };
    const ac = new AbortController();
    let why: 'first_byte' | 'total' | 'caller' | undefined;
    const stop = (w: typeof why): void => {
      why ??= w;
      ac.abort();
    };
    const onCaller = (): void => stop('caller');
    opt.signal?.addEventListener('abort', onCaller, { once: true });
    const remaining = Math.max(0, deadline - Date.now());
    const total = setTimeout(() => stop('total'), remaining);
    let firstByte: NodeJS.Timeout | undefined = setTimeout(() => stop('first_byte'), Math.min(cfg.first_byte_ms, remaining));
    let gotByte = false;
    const failed = (e: unknown): Attempt => {
      if (e instanceof GasolineError) return { ok: false, retry: false, error: e };
      if (e instanceof SseTooLarge) return { ok: false, retry: false, error: gasolineError('model_answer_too_large', `the provider sent one event larger than the answer bound (model.max_answer_chars ${cfg.max_answer_chars})`) };
      if (why === 'caller') return { ok: false, retry: false, error: cancelled() };
      if (why === 'total') return { ok: false, retry: false, error: gasolineError('model_timeout', `no whole answer within model.timeout_ms (${cfg.timeout_ms} ms)${gotByte ? '; what had arrived is dropped' : ''}`) };
      if (gotByte) return { ok: false, retry: false, error: gasolineError('model_unavailable', 'the provider\'s stream broke off mid-answer; what had arrived is dropped') };
      if (why === 'first_byte') return { ok: false, retry: true, error: gasolineError('model_timeout', `no first byte from the provider within model.first_byte_ms (${cfg.first_byte_ms} ms)`) };
      return { ok: false, retry: true, error: gasolineError('model_unavailable', `the provider could not be reached (${(e as Error)?.name ?? 'error'}${networkCode(e)})`) };
    };
    try {
      const body = JSON.stringify({ model: cfg.model, stream: true, messages: [{ role: 'system', content: p.system }, { role: 'user', content: p.user }] });
      let res: Response;
      try {
        res = await doFetch(url, { method: 'POST', headers, body, signal: ac.signal, redirect: 'error' });
      } catch (e) {
        return failed(e);
      }
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel().catch(() => undefined);
        return { ok: false, retry: true, error: gasolineError('model_unavailable', `the provider answered HTTP ${res.status}${res.status === 429 ? ' (rate limited)' : ''}`) };
      }
      if (!res.ok || !res.body) {
        await res.body?.cancel().catch(() => undefined);
        const hint = res.status === 401 || res.status === 403 ? ' (check model.api_key in the config file)' : res.status === 404 ? ' (check model.base_url and model.model)' : '';
        return { ok: false, retry: false, error: gasolineError('model_unavailable', `the provider refused the request: HTTP ${res.status}${hint}`) };
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const sse = new SseParser(cfg.max_answer_chars * 4 + 4096);
      let text = '';
      let bytes = 0;
      let done = false;
      try {
        while (!done) {
          const r = await reader.read();
          if (r.done) break;
          if (!gotByte) {
            gotByte = true;
            clearTimeout(firstByte);
            firstByte = undefined;
          }
          bytes += r.value.byteLength;
          if (bytes > MAX_STREAM_BYTES) throw gasolineError('model_answer_too_large', `the provider's stream passed ${MAX_STREAM_BYTES} bytes`);
          for (const data of sse.push(decoder.decode(r.value, { stream: true }))) {
            if (data === '[DONE]') {
              done = true;
              break;
            }
            const piece = pieceOf(data);
            if (!piece) continue;
            text += piece;
            if (text.length > cfg.max_answer_chars) throw gasolineError('model_answer_too_large', `the answer passed model.max_answer_chars (${cfg.max_answer_chars}); it was cut off`);
            opt.onChunk?.(piece);
          }
        }
      } catch (e) {
        return failed(e);
      } finally {
        // an answer finished by [DONE] may leave the connection open: let it go now
        await reader.cancel().catch(() => undefined);
      }
      if (!done && !text) return { ok: false, retry: false, error: gasolineError('model_unavailable', 'the provider\'s stream ended without an answer') };
      // text without [DONE]: the connection ended mid-answer, and a cut answer would read as a whole one
      if (!done) return { ok: false, retry: false, error: gasolineError('model_unavailable', 'the provider\'s stream broke off mid-answer (no [DONE]); what had arrived is dropped') };
      return { ok: true, answer: { text, adapter: 'openai', ...(cfg.model ? { model: cfg.model } : {}) } };
    } finally {
      clearTimeout(total);
      if (firstByte) clearTimeout(firstByte);
      opt.signal?.removeEventListener('abort', onCaller);
    }
  }

  return {
    name: 'openai',
    async ask(p: RedactedPayload, opt: AskOptions = {}): Promise<ModelAnswer> {
      const deadline = Date.now() + cfg.timeout_ms;
      let last: GasolineError | undefined;
      for (let i = 0; i <= cfg.retries; i++) {
        if (i > 0) {
          const wait = Math.min(backoff * 2 ** (i - 1), deadline - Date.now());
          if (wait < 0 || opt.signal?.aborted) break;
          await new Promise((r) => setTimeout(r, wait));
          if (Date.now() >= deadline) break;
        }
        const a = await attempt(p, deadline, opt);
        if (a.ok) return a.answer;
        last = a.error;
        if (!a.retry) throw a.error;
      }
      if (Date.now() >= deadline) throw gasolineError('model_timeout', `no answer within model.timeout_ms (${cfg.timeout_ms} ms), retries included${last ? `; last: ${last.message}` : ''}`);
      throw last ?? gasolineError('model_unavailable', 'the provider did not answer');
    },
  };
}

const cancelled = (): GasolineError => gasolineError('model_unavailable', 'the call was cancelled before the model answered');

/** The text an event adds: a chat completion chunk's delta (or a whole message, from providers that send one). */
function pieceOf(data: string): string {
  let obj: unknown;
  try {
    obj = JSON.parse(data);
  } catch {
    throw gasolineError('model_unavailable', 'the provider streamed an event that is not JSON');
  }
  if (!obj || typeof obj !== 'object') return '';
  const o = obj as { error?: unknown; choices?: Array<{ delta?: { content?: unknown }; message?: { content?: unknown } }> };
  if (o.error !== undefined) throw gasolineError('model_unavailable', 'the provider sent an error in the stream');
  const c = o.choices?.[0];
  const piece = c?.delta?.content ?? c?.message?.content;
  return typeof piece === 'string' ? piece : '';
}

/** ECONNREFUSED and the like, from undici's cause: a stable word, never the address */
function networkCode(e: unknown): string {
  const code = (e as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' && /^[A-Z_]{3,40}$/.test(code) ? `: ${code}` : '';
}
