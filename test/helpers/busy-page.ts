/**
 * Issue 8's scenario: a busy page sends 5 000 records of noise with four real problems hidden in
 * it, one of them repeated 40 times with different ids and numbers each time. Seeded, so every
 * run sends the same bytes.
 */
import { mulberry32 } from '../fixtures/shm-gen.js';

type R = Record<string, unknown>;

export const PAGE = 'http://127.0.0.1:3000/shop';

/** Unique substrings, one per problem, as they appear in a result line. */
export const PROBLEMS = {
  exception: "TypeError: Cannot read properties of undefined (reading 'total')",
  console: 'Payment SDK failed to initialize',
  // as an answer shows it: the URL is page text, quoted
  failedRequest: 'POST "http://127.0.0.1:3000/api/orders/',
  rejection: 'QuotaExceededError: localStorage is full',
} as const;

export const REPEATS = 40;

export interface Scenario {
  batches: Array<Record<string, R[]>>;
  /** JSON size of every record sent: what an agent would read without Gasoline's answers */
  rawChars: number;
  records: number;
}

export function busyPage(seed = 8, noise = 5000): Scenario {
  const rnd = mulberry32(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const t0 = Date.now() - 60_000;
  const at = (i: number) => t0 + i * 10;
  const noiseRec = (i: number): [string, R] => {
    const r = rnd();
    if (r < 0.45) return ['logs', { ts: at(i), level: rnd() < 0.5 ? 'info' : 'debug', type: 'console', message: `render tick ${i} took ${int(16)}ms (${int(300)} nodes)`, url: PAGE }];
    if (r < 0.5) return ['logs', { ts: at(i), level: 'warn', type: 'console', message: `slow frame ${int(100)}ms in ProductGrid`, url: PAGE }];
    if (r < 0.52) return ['logs', { ts: at(i), level: 'error', type: 'network', message: 'GET /favicon.ico 404', method: 'GET', request_url: 'http://127.0.0.1:3000/favicon.ico', status: 404, url: 'http://127.0.0.1:3000/favicon.ico' }];
    if (r < 0.8) return ['network', { ts: at(i), method: 'GET', url: `http://127.0.0.1:3000/api/products/${int(5000)}?variant=${int(9)}`, status: 200, duration: 5 + int(80), transfer_size: 200 + int(4000), page_url: PAGE }];
    if (r < 0.93) return ['ws_events', { ts: at(i), event: 'message', id: 'live-1', direction: 'incoming', data: JSON.stringify({ type: 'price', sku: int(5000), price: int(10000) / 100 }) }];
    return ['actions', { ts: at(i), type: 'scroll', url: PAGE, scroll_y: int(8000) }];
  };
  const problems: Array<(i: number) => Array<[string, R]>> = [];
  for (let n = 0; n < REPEATS; n++) {
    problems.push((i) => [
      ['logs', { ts: at(i), level: 'error', type: 'exception', message: `${PROBLEMS.exception} for cart ${1000 + int(9000)} at ${new Date(at(i)).toISOString()}`, stack: `TypeError: Cannot read properties of undefined (reading 'total')\n    at CartSummary (http://127.0.0.1:3000/assets/cart.js:88:17)\n    at renderWithHooks (http://127.0.0.1:3000/assets/react-dom.js:1200:22)`, url: PAGE }],
    ]);
  }
  problems.push((i) => [['logs', { ts: at(i), level: 'error', type: 'console', message: `${PROBLEMS.console}: timeout after 3000ms`, args: ['PaymentSDK', { retry: 3 }], url: PAGE }]]);
  problems.push((i) => [
    ['logs', { ts: at(i), level: 'error', type: 'network', message: 'POST /api/orders/9172 500', method: 'POST', request_url: 'http://127.0.0.1:3000/api/orders/9172', status: 500, response: '{"error":"inventory service unavailable"}', url: PAGE }],
    ['network', { ts: at(i), method: 'POST', url: 'http://127.0.0.1:3000/api/orders/9172', status: 500, duration: 312, page_url: PAGE }],
  ]);
  problems.push((i) => [['logs', { ts: at(i), level: 'error', type: 'exception', message: `Uncaught (in promise) ${PROBLEMS.rejection}`, stack: `${PROBLEMS.rejection}\n    at saveDraft (http://127.0.0.1:3000/assets/draft.js:41:9)`, url: PAGE }]]);
  // spread the problems over the noise at seeded positions
  const slots = new Map<number, Array<(i: number) => Array<[string, R]>>>();
  for (const p of problems) {
    const s = int(noise);
    slots.set(s, [...(slots.get(s) ?? []), p]);
  }
  const all: Array<[string, R]> = [];
  for (let i = 0; i < noise; i++) {
    all.push(noiseRec(i));
    for (const p of slots.get(i) ?? []) all.push(...p(i));
  }
  all.push(['ws_events', { ts: at(noise), event: 'close', id: 'live-1', code: 1006, reason: '' }]);
  const batches: Array<Record<string, R[]>> = [];
  for (let i = 0; i < all.length; i += 100) {
    const b: Record<string, R[]> = {};
    for (const [kind, rec] of all.slice(i, i + 100)) (b[kind] ??= []).push(rec);
    batches.push(b);
  }
  return { batches, rawChars: all.reduce((n, [, r]) => n + JSON.stringify(r).length, 0), records: all.length };
}
