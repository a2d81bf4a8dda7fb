/**
 * The compiled record checks (src/domain/wire/fast-check.ts) against the zod schemas they are
 * compiled from: whenever a check accepts a value, zod accepts it too and returns the same output
 * (same keys, same order, same values); every record the bench and the extension send is accepted
 * by the check (else the hot path would fall back to zod and the speed-up would be gone unseen).
 */
import { pack, Packr, unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { compileCheck, NOT_SURE } from '../../../src/domain/wire/fast-check.js';
import { BatchFrameSchema, RECORD_SCHEMAS } from '../../../src/domain/wire/schemas.js';
import { KINDS, type Kind } from '../../../src/domain/kinds.js';
import { batchRecords, prng } from '../../../bench/load/frames.js';
import { mulberry32 } from '../../fixtures/shm-gen.js';

const T = 1_732_280_000_000;
/** one record per kind with every field set */
const FULL: Record<Kind, Record<string, unknown>> = {
  logs: { ts: T, level: 'error', type: 'exception', message: 'boom', args: ['a', 1, { b: [null] }], url: 'https://a.test/', source: 's.js', stack: 'Error: boom', filename: 'f.js', lineno: 3, colno: 4, method: 'GET', request_url: 'https://a.test/x', status: 500, status_text: 'Server Error', duration: 1.5, response: 'r', error: 'e', headers: { 'content-type': 'text/plain', Authorization: 'Bearer x' }, args_truncated: false, response_truncated: true },
  ext_logs: { ts: '2024-11-22T10:00:00.000Z', level: 'info', type: 'console', message: 'ext' },
  network: { ts: T, method: 'POST', url: 'https://a.test/api', status: 201, duration: 12.25, initiator_type: 'fetch', transfer_size: 10, encoded_body_size: 9, decoded_body_size: 27, page_url: 'https://a.test/', error: 'x' },
  network_bodies: { ts: T, method: 'GET', url: 'https://a.test/b', status: 200, content_type: 'application/json', duration: 3, request_headers: { a: 'b' }, response_headers: {}, request_body: '{}', response_body: '{"ok":true}', request_truncated: false, response_truncated: false, document: true, cookies: [{ name: 'sid', secure: true, http_only: true, same_site: 'lax', domain: 'a.test', path: '/', partitioned: false, expiry: 'session' }, { name: 'x', secure: false, http_only: false, expiry: 'deletion' }], cookies_dropped: 2 },
  ws_events: { ts: T, event: 'message', id: 'ws-1', url: 'wss://a.test/', direction: 'incoming', data: '{"x":1}', size: 7, code: 1000, reason: 'bye', truncated: false, adopted: true },
  actions: { ts: T, type: 'click', url: 'https://a.test/', selectors: { test_id: 't', aria_label: 'a', role: 'button', id: 'i', text: 'Go', css_path: 'main > button' }, value: 'v', key: 'Enter', from_url: 'https://a.test/1', to_url: 'https://a.test/2', scroll_y: 10.5, source: 'user' },
  perf: { ts: T, url: 'https://a.test/', timing: { ttfb: 1, fcp: null, lcp: 2.5, cls: 0.01, inp: null, dom_content_loaded: 5, load: 6 }, long_tasks: { count: 1, total_blocking_time: 50, longest: 80 }, resources: { count: 3, transfer_size: 1000 } },
};

/** values that sit on the schemas' edges, of every type */
const EDGES: unknown[] = [
  undefined, null, true, false, 0, -0, 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY,
  2 ** 53, 2 ** 53 - 1, -(2 ** 53), -(2 ** 53) + 1, 2 ** 53 + 2, 1e308, T, '', 'x', 'log', 'error', 'click', 'message', 'GET',
  '2024-11-22T10:00:00Z', 'x'.repeat(32), 'x'.repeat(33), 'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(128), 'x'.repeat(129), 'x'.repeat(256), 'x'.repeat(257),
  'x'.repeat(1024), 'x'.repeat(1025), 'x'.repeat(4096), 'x'.repeat(4097), 'x'.repeat(1024 * 1024), 'x'.repeat(1024 * 1024 + 1),
  [], [1, 'a'], new Array(1000).fill(0), new Array(1001).fill(0), {}, { a: 'b' }, { a: 1 }, { ['x'.repeat(1025)]: 'v' }, new Uint8Array(3),
  Object.create(null), JSON.parse('{"__proto__":"x"}'), { constructor: 'x' }, new Date(0),
];

function assertSame(kind: Kind, v: unknown): 'fast' | 'zod' {
  const fast = compileCheck(RECORD_SCHEMAS[kind])!;
  const got = fast(v);
  if (got === NOT_SURE) return 'zod';
  const z = RECORD_SCHEMAS[kind].safeParse(v);
  if (!z.success) expect.fail(`zod refused what the check accepted: ${kind} ${z.error.issues[0]!.path.join('.')}: ${z.error.issues[0]!.message}`);
  expect(got).toStrictEqual(z.data);
  // the same key order too: the stored JSON is the answer
  expect(JSON.stringify(got)).toBe(JSON.stringify(z.data));
  return 'fast';
}

function mutate(r: () => number, rec: Record<string, unknown>, depth = 0): unknown {
  const pick = <T,>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const out: Record<string, unknown> = { ...rec };
  const keys = Object.keys(out);
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const op = r();
    const k = pick(keys);
    if (op < 0.15) delete out[k];
    else if (op < 0.25) out[pick(['extra', 'zz', '__proto__', 'toString', '0'])] = pick(EDGES);
    else if (op < 0.4 && depth < 2 && out[k] !== null && typeof out[k] === 'object' && !Array.isArray(out[k])) out[k] = mutate(r, out[k] as Record<string, unknown>, depth + 1);
    else out[k] = pick(EDGES);
  }
  return r() < 0.05 ? pick(EDGES) : out;
}

describe('compiled record checks', () => {
  it('compile for every kind (none silently falls back to zod)', () => {
    for (const k of KINDS) expect(compileCheck(RECORD_SCHEMAS[k]), k).not.toBeNull();
  });

  it('accept every full record, and the bench mix, with zod output', () => {
    for (const k of KINDS) expect(assertSame(k, FULL[k])).toBe('fast');
    const r = prng(5);
    for (let b = 0; b < 20; b++) {
      const mix = batchRecords(r);
      // through msgpack records as the extension sends them, and as plain maps
      const viaRecords = new Packr({ useRecords: true, mapsAsObjects: true }).unpack(new Packr({ useRecords: true }).pack(mix)) as typeof mix;
      const viaMaps = unpack(pack(mix)) as typeof mix;
      for (const m of [mix, viaRecords, viaMaps]) for (const k of ['logs', 'network', 'ws_events', 'actions'] as const) for (const rec of m[k]) expect(assertSame(k, rec)).toBe('fast');
    }
  });

  it('agree with zod on 40 000 fuzzed records, valid and not', () => {
    const r = mulberry32(17);
    let fast = 0;
    let zod = 0;
    for (let i = 0; i < 40_000; i++) {
      const k = KINDS[i % KINDS.length]!;
      if (assertSame(k, mutate(r, FULL[k])) === 'fast') fast++;
      else zod++;
    }
    // both sides were exercised
    expect(fast).toBeGreaterThan(1000);
    expect(zod).toBeGreaterThan(1000);
  });

  it('hold for the batch frame schema too (decode checks batches with it)', () => {
    const check = compileCheck(BatchFrameSchema)!;
    expect(check).not.toBeNull();
    const full = { t: 'batch', seq: 3, sent_at: 1.5, tab_id: 7, page_url: 'https://a.test/', logs: [FULL.logs], network: [], extra: 1 };
    const r = mulberry32(23);
    let fast = 0;
    for (let i = 0; i < 5000; i++) {
      const v = i === 0 ? full : mutate(r, full);
      const got = check(v);
      if (got === NOT_SURE) continue;
      fast++;
      const z = BatchFrameSchema.safeParse(v);
      if (!z.success) expect.fail(`zod refused a frame the check accepted: ${z.error.issues[0]!.path.join('.')}: ${z.error.issues[0]!.message}`);
      expect(got).toStrictEqual(z.data);
      expect(JSON.stringify(got)).toBe(JSON.stringify(z.data));
    }
    expect(fast).toBeGreaterThan(500);
  });

  it('leave to zod what they do not model: an explicit undefined, odd prototypes', () => {
    expect(compileCheck(RECORD_SCHEMAS.logs)!({ ...FULL.logs, url: undefined })).toBe(NOT_SURE);
    expect(compileCheck(RECORD_SCHEMAS.logs)!({ ...FULL.logs, headers: Object.create(null) })).toBe(NOT_SURE);
    expect(compileCheck(RECORD_SCHEMAS.logs)!({ ...FULL.logs, headers: JSON.parse('{"__proto__":"x"}') })).toBe(NOT_SURE);
  });
});
