/** The offline triage: deterministic, names its records, and says what to call next — with data or without. */
import { describe, expect, it } from 'vitest';
import { triage, TriageContextSchema, type TriageContext } from '../../../src/model/index.js';

const T = Date.UTC(2026, 10, 25, 12, 0, 0);

function ctx(over: Partial<TriageContext> = {}): TriageContext {
  return TriageContextSchema.parse({ since: T - 60_000, records: 120, extension: 'connected', errors: [], failing: [], ...over });
}

const cartError = {
  message: "TypeError: Cannot read properties of undefined (reading 'id')",
  signature: 'TypeError: Cannot read properties of undefined (reading <s>)',
  count: 3,
  first: T - 5000,
  last: T - 1000,
  location: 'src/cart.ts:42:7',
  mapped: true,
  page: 'http://localhost:3000/cart',
  before: [
    { kind: 'action', text: 'click #buy', selector: '#buy' },
    { kind: 'request', text: 'POST http://localhost:3000/api/cart → 500' },
  ],
};

describe('offline triage', () => {
  it('with nothing captured: says since when nothing broke, and what to call next', () => {
    const text = triage(ctx());
    expect(text).toBe(
      [
        `conclusion: nothing broke since ${new Date(T - 60_000).toISOString()}: no errors and no failing requests in 120 records`,
        'next:',
        '- observe({what:"summary"})',
        '- analyze({target:"performance"})',
      ].join('\n'),
    );
    expect(triage(ctx({ since: null, records: 0, extension: 'absent' }))).toContain('nothing captured yet: no browser is connected');
    expect(triage(ctx({ since: null, records: 0, extension: 'absent' }))).toContain('configure({action:"health"})');
  });

  it('names each record: the error with its source-mapped position and bundle, the request with method, URL and status', () => {
    const text = triage(ctx({ errors: [TriageContextSchema.shape.errors.element.parse(cartError)], failing: [{ method: 'POST', url: 'http://localhost:3000/api/cart?x=1', status: 500, count: 2, last: T - 1100 }] }));
    expect(text).toMatch(/^conclusion: 1 distinct error; the most frequent is "TypeError: .*" ×3 at "src\/cart.ts:42:7", right after a failing request \("POST http:\/\/localhost:3000\/api\/cart → 500"\): look at that endpoint first$/m);
    expect(text).toContain(`- error ×3 "TypeError: Cannot read properties of undefined (reading 'id')" at "src/cart.ts:42:7" (source-mapped), last ${new Date(T - 1000).toISOString()} on "http://localhost:3000/cart"`);
    expect(text).toContain('  before it: "click #buy"; "POST http://localhost:3000/api/cart → 500"');
    expect(text).toContain('- request ×2 POST "http://localhost:3000/api/cart?x=1" → 500');
    expect(text).toContain('- observe({what:"error_bundles"})');
    expect(text).toContain('- analyze({target:"dom", selector:"#buy"})');
    expect(text).toContain('- observe({what:"network", url:"/api/cart", status_min:400})');
  });

  it('is the same text for the same input, byte for byte, whatever the object identity', () => {
    const input = ctx({ errors: [TriageContextSchema.shape.errors.element.parse(cartError)], failing: [{ method: 'GET', url: 'http://x.test/a', status: 0, count: 1, last: T, error: 'net::ERR_FAILED' }] });
    const a = triage(input, 'why does checkout fail?');
    const b = triage(JSON.parse(JSON.stringify(input)) as TriageContext, 'why does checkout fail?');
    expect(b).toBe(a);
    expect(a).toContain('→ no response "net::ERR_FAILED"');
    expect(a).toContain('question "why does checkout fail?": the offline adapter answers every question with this triage');
  });

  it('with only failing requests, and with an error after a user action: concludes from what there is', () => {
    expect(triage(ctx({ failing: [{ method: 'GET', url: 'http://x.test/api/me', status: 401, count: 4, last: T }] }))).toMatch(/^conclusion: no page errors, but requests fail: GET "http:\/\/x.test\/api\/me" → 401 ×4$/m);
    const afterClick = triage(ctx({ errors: [TriageContextSchema.shape.errors.element.parse({ ...cartError, location: 'app.min.js:1:999', mapped: false, before: [{ kind: 'action', text: 'click [data-testid="pay"]', selector: '[data-testid="pay"]' }] })] }));
    expect(afterClick).toContain('at "app.min.js:1:999" (generated position), right after "click [data-testid=\\"pay\\"]"');
    expect(afterClick).toContain('analyze({target:"dom", selector:"[data-testid=\\"pay\\"]"})');
  });
});
