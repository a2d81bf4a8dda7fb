/**
 * Issue 19's "context build + redaction p95 < 180 ms for a 100 KB payload": a triage context as
 * the tool builds it (200 errors with their bundles, 200 failing requests, one record in fifty
 * with a secret where they show up) through the redaction gateway — schema check, every field
 * through the rules in force, the context rendered within max_context_chars (100 000, so the cut
 * runs too), each block through the rules again as it leaves. The store read that fills the
 * context is observe's and analyze's scan path, measured by their own profiles.
 * Run: `node dist/bench/micro/model-egress.bench.js`; `pnpm bench` runs it too.
 */
import { pathToFileURL } from 'node:url';
import { compileRedaction } from '../../src/domain/redaction/index.js';
import { redactForEgress, TRIAGE_SYSTEM, TriageContextSchema, type ModelRequest } from '../../src/model/index.js';

export interface ModelEgressResult {
  name: string;
  /** characters of the rendered context and question that leave */
  payload_chars: number;
  /** what the records held before the cut */
  source_chars: number;
  iterations: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

function request(): ModelRequest {
  const T = Date.UTC(2026, 10, 25, 12);
  const secret = (i: number): string => (i % 50 === 0 ? ` Authorization: Bearer tK9f2LmQ8xZ4vB7nR1wE${String(i).padStart(4, '0')}` : i % 50 === 25 ? ' ?access_token=9f8e7d6c5b4a39281716aa' : '');
  const errors = Array.from({ length: 200 }, (_, i) => ({
    message: `TypeError: Cannot read properties of undefined (reading 'item${i % 17}') while rendering CartRow for order ${1000 + i} in checkout step ${i % 5}${secret(i)}`,
    signature: `TypeError: Cannot read properties of undefined (reading <s>) CartRow ${i % 17}`,
    count: 1 + (i % 9),
    first: T + i,
    last: T + i * 10,
    location: `src/components/cart/CartRow${i % 17}.tsx:${40 + (i % 60)}:${7 + (i % 30)}`,
    mapped: i % 3 !== 0,
    page: `http://localhost:3000/checkout/step/${i % 5}?session=s${i}`,
    before: [
      { kind: 'action', text: `click [data-testid="pay-${i % 7}"]`, selector: `[data-testid="pay-${i % 7}"]` },
      { kind: 'request', text: `POST http://localhost:3000/api/cart/items/${i}?include=prices,discounts${secret(i + 25)} → ${i % 4 ? 500 : 200}` },
      { kind: 'log', text: `warn [cart] price for sku-${i} missing; falling back to the list price of the catalog entry` },
      { kind: 'request', text: `GET http://localhost:3000/api/catalog/sku-${i}/availability → 200` },
    ],
  }));
  const failing = Array.from({ length: 200 }, (_, i) => ({ method: i % 3 ? 'POST' : 'GET', url: `http://localhost:3000/api/orders/${5000 + i}/lines?expand=product,tax${secret(i + 10)}`, status: [500, 502, 404, 0][i % 4]!, count: 1 + (i % 4), last: T + i * 7, ...(i % 4 === 3 ? { error: 'net::ERR_CONNECTION_RESET' } : {}) }));
  return { system: TRIAGE_SYSTEM, question: 'why does checkout fail after paying?', context: TriageContextSchema.parse({ since: T, records: 12_345, extension: 'connected', errors, failing }) };
}

export function runModelEgressBench(o: { quick?: boolean } = {}): Promise<ModelEgressResult[]> {
  const engine = compileRedaction();
  const policy = { version: 0, redactText: (s: string) => engine.redactText(s) };
  const req = request();
  const source = JSON.stringify(req.context).length;
  const iterations = o.quick === false ? 400 : 150;
  for (let i = 0; i < 15; i++) redactForEgress(req, policy, 100_000);
  const ms: number[] = [];
  let chars = 0;
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    const p = redactForEgress(req, policy, 100_000);
    ms.push(performance.now() - t0);
    chars = p.user.length;
  }
  ms.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]! * 100) / 100;
  return Promise.resolve([{ name: 'context build + redaction, 100 KB payload', payload_chars: chars, source_chars: source, iterations, p50_ms: at(0.5), p95_ms: at(0.95), p99_ms: at(0.99), max_ms: at(1) }]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stderr.write(`${JSON.stringify(await runModelEgressBench(), null, 2)}\n`);
}
