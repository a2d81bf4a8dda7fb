/**
 * Issue 17's cheaper detection, held to what detection did before: the hashes give the values
 * they gave (they are stored and shown), the noise count keeps its window and its bound, a batch
 * reads the clock once, and the edges of each shortcut still alert as before.
 */
import { describe, expect, it } from 'vitest';
import { Detector, digitFoldedHash } from '../../../src/domain/alerts/detect.js';
import { NoiseCounts } from '../../../src/domain/alerts/noise-count.js';
import { signatureHash } from '../../../src/domain/signals/signature-hash.js';
import { topFrame } from '../../../src/domain/signals/signature.js';
import type { Kind } from '../../../src/domain/kinds.js';
import { RECORD_SCHEMAS, type IngestedRecord } from '../../../src/domain/wire/schemas.js';
import { allocateDetectState, DetectState, hash32 } from '../../../src/shm/detect-state.js';
import { processBatchFrame } from '../../../src/domain/ingest/process.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { digitFoldedHashBefore, hash32Before, NoiseMapBefore, prng, signatureHashBefore, topFrameBefore } from './detect-oracle.js';

const T0 = 1_700_000_000_000;

function setup() {
  let now = T0;
  let reads = 0;
  const state = new DetectState(allocateDetectState());
  const clock = () => {
    reads++;
    return now;
  };
  return { d: new Detector(state, clock), state, advance: (ms: number) => (now += ms), reads: () => reads };
}

function see(d: Detector, kind: Kind, fields: object, pageUrl?: string): IngestedRecord {
  const rec = { ...RECORD_SCHEMAS[kind].partial().parse(fields), ts: T0 };
  const r = { kind, rec } as IngestedRecord;
  d.see(r, 1, pageUrl);
  return r;
}

/** Text from the characters each pass treats apart: digits, hex and other letters, quotes, line breaks, spaces, non-ASCII. */
function text(r: () => number, max: number): string {
  const alphabet = ['a', 'f', 'g', 'Z', 'E', '0', '7', '9', ' ', '  ', '\t', '\n', '\r', '"', "'", '-', ':', '.', '/', '(', ')', 'é', '中', '\ud83d\ude00', '\u00a0', 'word', 'user 42', '0xdeadbeef'];
  const n = Math.floor(r() * max);
  let s = '';
  while (s.length < n) s += alphabet[Math.floor(r() * alphabet.length)]!;
  return s;
}

describe('the hashes give the values they gave before', () => {
  it('signatureHash: every generated message, at every length around its 500-character cut and its 200-character quotes', () => {
    const r = prng(17);
    for (let i = 0; i < 4000; i++) {
      const s = text(r, i % 4 === 0 ? 900 : 120);
      expect(signatureHash(s), JSON.stringify(s)).toBe(signatureHashBefore(s));
      const seed = signatureHashBefore('seed');
      expect(signatureHash(s, seed)).toBe(signatureHashBefore(s, seed));
    }
    for (const s of ['', '"', "'x'", `"${'q'.repeat(199)}" after`, `"${'q'.repeat(200)}" after`, `"${'q'.repeat(201)}" after`, `${'w '.repeat(249)}"closes past the cut"`, `say "a\nb" now`, 'v2 v17 id42x deadbeef 3fa85f64', '\u00e9t\u00e9 12 caf\u00e9']) {
      expect(signatureHash(s), JSON.stringify(s)).toBe(signatureHashBefore(s));
    }
    // pinned: the values stored with error logs before this change
    expect(signatureHash('user 42 not found')).toBe(signatureHashBefore('user 42 not found'));
    expect(signatureHash('')).toBe(-2128831035);
  });

  it('digitFoldedHash: every generated line, at every length around its 300-character cut', () => {
    const r = prng(29);
    for (let i = 0; i < 4000; i++) {
      const s = text(r, i % 4 === 0 ? 600 : 140);
      expect(digitFoldedHash(s), JSON.stringify(s)).toBe(digitFoldedHashBefore(s));
    }
    for (const s of ['', '0', '00', 'a1', '1a', 'ab1', 'abc1', 'a1b2c3', 'ab12cd34', `${'x'.repeat(298)}12345`, `${'x'.repeat(299)}12345`, `${'x'.repeat(300)}9`, '12 34 56']) expect(digitFoldedHash(s), s).toBe(digitFoldedHashBefore(s));
  });

  it('hash32 (the shared table\'s keys): every generated text', () => {
    const r = prng(3);
    for (let i = 0; i < 2000; i++) {
      const s = text(r, 200);
      expect(hash32(s), JSON.stringify(s)).toBe(hash32Before(s));
    }
    expect(hash32('')).toBe(hash32Before(''));
  });

  it('topFrame: generated stacks, URLs on any line, extension frames, more lines than it reads', () => {
    const lines = [
      'Error: boom',
      '    at f (https://app.test/main.js:10:5)',
      '    at g (https://app.test/main.js?v=3:11:6)  ',
      '    at chrome-extension://abc/inject.js:1:2',
      '    at h (index.js:4:2)',
      '    at https://cdn.test/x.js:7',
      '    at file:///home/u/app.js:9:1\r',
      'no frame here',
      '    at see https://app.test/doc but no line',
      '',
      '    at k (http://a.test/b.js:1:1) trailing',
    ];
    const r = prng(41);
    for (let i = 0; i < 3000; i++) {
      const n = Math.floor(r() * 12);
      const stack = Array.from({ length: n }, () => lines[Math.floor(r() * lines.length)]!).join('\n');
      expect(topFrame(stack), JSON.stringify(stack)).toBe(topFrameBefore(stack));
    }
    for (const s of [undefined, '', '\n', 'https://a.test/x.js:1:1', 'Error\n\n\n\n\n\n\n\n    at https://a.test/late.js:1:1', 'Error\n    at https://a.test/x.js:1:1\n']) expect(topFrame(s)).toBe(topFrameBefore(s));
  });
});

describe('the noise count', () => {
  it('counts as the Map it replaces did: windows per key, emptied when a new key finds it full', () => {
    const r = prng(5);
    for (const max of [1, 2, 8, 64]) {
      const a = new NoiseCounts(max, 30);
      const b = new NoiseMapBefore(max, 30);
      let sec = 1_700_000_000;
      for (let i = 0; i < 20_000; i++) {
        if (r() < 0.01) sec += Math.floor(r() * 40);
        const key = (Math.floor(r() * max * 3) + 1) * 0x9e3779b1;
        const k = key | 0 || 1;
        expect(a.add(k, sec), `max ${max}, step ${i}`).toBe(b.add(k, sec));
      }
      expect(a.size).toBeLessThanOrEqual(max);
    }
  });

  it('a line alerts at its 50th repeat across batches, folded by digits, even after other lines filled the table once', () => {
    const { d } = setup();
    const line = (i: number) => ({ level: 'log', type: 'console', message: `poll ${i} done` });
    let alerts = 0;
    for (let i = 0; i < 49; i++) {
      see(d, 'logs', line(i));
      if (i % 10 === 9) alerts += d.take().length;
    }
    alerts += d.take().length;
    expect(alerts).toBe(0);
    // 4096 other lines: the 4096th new key empties the table, so poll's count starts over
    for (let i = 0; i < 4096; i++) see(d, 'logs', { level: 'info', type: 'console', message: `other ${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + ((i / 26) | 0) % 26)}${String.fromCharCode(97 + ((i / 676) | 0))}` });
    expect(d.take()).toHaveLength(0);
    for (let i = 0; i < 49; i++) see(d, 'logs', line(i));
    expect(d.take()).toHaveLength(0);
    see(d, 'logs', line(999_999));
    const out = d.take().map((e) => e.alert);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ category: 'noise', title: 'Noise: a console log repeats (50× in 30 s)', dedup_key: `noise:${digitFoldedHashBefore('poll 1 done')}` });
  });

  it('a repeat past the 30 s window starts the count over', () => {
    const { d, advance } = setup();
    for (let i = 0; i < 49; i++) see(d, 'logs', { level: 'warn', type: 'console', message: 'slow frame' });
    expect(d.take()).toHaveLength(0);
    advance(30_000);
    see(d, 'logs', { level: 'warn', type: 'console', message: 'slow frame' });
    expect(d.take()).toHaveLength(0);
    for (let i = 0; i < 49; i++) see(d, 'logs', { level: 'warn', type: 'console', message: 'slow frame' });
    expect(d.take().map((e) => e.alert.category)).toEqual(['noise']);
  });
});

describe('one clock read per batch', () => {
  it('a batch reads the clock once; the next batch, and a batch retried after a discard, read it again', () => {
    const { d, state, advance, reads } = setup();
    for (let i = 0; i < 30; i++) see(d, 'logs', { level: 'log', type: 'console', message: `line ${i}` });
    for (let i = 0; i < 30; i++) see(d, 'network', { method: 'GET', url: `https://api.test/v1/x?page=${i}`, status: 200, duration: 3 }, 'https://app.test/');
    see(d, 'logs', { level: 'error', type: 'console', message: 'first' });
    expect(reads()).toBe(1);
    d.take();
    // the alert's own timestamp reads the clock too; a new batch starts from a fresh read
    advance(5000);
    const r0 = reads();
    see(d, 'logs', { level: 'error', type: 'console', message: 'second' });
    see(d, 'logs', { level: 'error', type: 'console', message: 'third' });
    expect(reads() - r0).toBe(1);
    d.discard();
    advance(5000);
    see(d, 'logs', { level: 'error', type: 'console', message: 'second' });
    d.take();
    // the first batch's error in its second, the retried one in the second it was seen again
    const s0 = T0 / 1000;
    expect(state.errorsIn(s0, 1)).toBe(1);
    expect(state.errorsIn(s0 + 5, 1)).toBe(0);
    expect(state.errorsIn(s0 + 10, 1)).toBe(1);
  });

  it('an error in a later batch is new again after 30 s, though the detector was idle between', () => {
    const { d, advance } = setup();
    see(d, 'logs', { level: 'error', type: 'console', message: 'flaky' });
    expect(d.take()).toHaveLength(1);
    advance(31_000);
    see(d, 'logs', { level: 'error', type: 'console', message: 'flaky' });
    expect(d.take()).toHaveLength(1);
  });
});

describe('the shortcuts keep what they feed', () => {
  it('an error log stores the signature it stored before (message, then top frame)', () => {
    const { d } = setup();
    const stack = 'Error: x\n    at f (https://app.test/main.js?v=2:10:5)';
    const r = see(d, 'logs', { level: 'error', type: 'exception', message: "Cannot read 'a' of user 42", stack });
    const top = topFrameBefore(stack);
    expect(top).toBe('https://app.test/main.js:10');
    expect((r.rec as { _sig?: number })._sig).toBe(signatureHashBefore(top, signatureHashBefore("Cannot read 'a' of user 42")));
  });

  it('clicks on different pages of one batch keep their own paths; a click with no URL has none', () => {
    const { d } = setup();
    const dead = (url: string | undefined, css: string) => ({ type: 'click', ...(url ? { url } : {}), effect: 'none', selectors: { css_path: css } });
    see(d, 'actions', dead('https://app.test/a?x=1', 'button.one'));
    see(d, 'actions', dead('https://app.test/b', 'button.one'));
    see(d, 'actions', dead('https://app.test/a', 'button.two'));
    see(d, 'actions', dead(undefined, 'button.three'));
    const targets = d.take().map((e) => e.alert.context?.target);
    expect(targets).toEqual(['app.test/a button.one', 'app.test/b button.one', 'app.test/a button.two', ' button.three']);
  });

  it('security findings of several requests in one batch each name their own request', () => {
    const { d } = setup();
    see(d, 'network', { method: 'GET', url: 'https://u:p@one.test/x', status: 200, duration: 1 }, 'https://app.test/');
    see(d, 'network', { method: 'GET', url: 'https://two.test/y', status: 200, duration: 1 }, 'https://app.test/');
    see(d, 'network', { method: 'GET', url: 'http://three.test/z?token=1', status: 200, duration: 1 }, 'https://app.test/');
    const titles = d.take().map((e) => e.alert.title);
    expect(titles).toEqual(['Security: credentials in URL (userinfo) (u:p@one.test)', 'Security: credential-like query parameter in URL (three.test)', 'Security: mixed content (http request from an https page) (three.test)']);
  });
});

describe('the worker path hands detection each record with its kind', () => {
  it('one wrapper per array: every call sees its own record and kind, in order', () => {
    const seen: Array<[string, unknown]> = [];
    const frame = {
      t: 'batch',
      seq: 1,
      page_url: 'https://app.test/',
      logs: [0, 1, 2].map((i) => ({ ts: T0 + i, level: 'log', type: 'console', message: `line ${i}` })),
      network: [0, 1].map((i) => ({ ts: T0 + i, method: 'GET', url: `https://api.test/${i}`, status: 200, duration: 1 })),
    };
    const out = processBatchFrame(frame as never, { recvTime: T0, redactor: compileRedaction(), limits: { max_events_per_batch: 100, max_errors_per_ack: 10 }, detect: (r) => seen.push([r.kind, r.rec]) });
    expect(out.records).toHaveLength(5);
    expect(seen.map(([k, rec]) => `${k} ${(rec as { message?: string; url?: string }).message ?? (rec as { url: string }).url}`)).toEqual(['logs line 0', 'logs line 1', 'logs line 2', 'network https://api.test/0', 'network https://api.test/1']);
    expect(new Set(seen.map(([, rec]) => rec)).size).toBe(5);
  });
});
