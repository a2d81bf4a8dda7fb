/**
 * The candidate finder (prefilter.wat through prefilter-scan.ts) stands in for the pre-filter's
 * passes and for the base64 run probe on Latin-1 texts: it must mark exactly the records the
 * passes mark and report exactly the runs the probe reports, wherever a match falls against its
 * chunks of sixteen bytes, and the bytes committed must be what the .wat compiles to.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../fixtures/shm-gen.js';
import { findCandidates, markByPasses, markTriggered } from '../../../src/domain/redaction/trigger.js';
import { candidateRuns, eachRun, MAX_RUN, MIN_RUN } from '../../../src/domain/redaction/base64.js';
import { SCAN_MAX, scanCandidates } from '../../../src/domain/redaction/prefilter-scan.js';
import { PREFILTER_WASM } from '../../../src/domain/redaction/prefilter-wasm.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
// @ts-expect-error: a plain JavaScript module of the repository's scripts, without types
import { compilePrefilterWat } from '../../../scripts/prefilter-wat.mjs';

const rnd = mulberry32(17);
const pick = <T,>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;

// every anchor and what its confirmation reads, the runs' characters, and plain text
const PIECES = [
  'a', 'Z', '0', '5', '9', '+', '/', '=', '==', '-', '_', ' ', ':', '@', '.', '\n', '\t', '"', '\\', 'é', '\u00a0', 'ÿ',
  'token', 'Key', 'pass', 'https://', 'wss://', 'jdbc:oracle:thin:', '://u:p@', 'eyJ', 'ey', 'J', 'SG.', 'S', 'G', 'ks.sl', 'hooks.slack', 'k', 's',
  'PRIVATE KEY', 'PRI', 'Bearer ', 'BEARER ', 'Basic ', 'bearer ', 'basic ', 'B', 'b', 'AIza', 'AKIAABCDEFGHIJKLMNOP', 'A', 'ASIA',
  'ghp_', 'github_pat_', 'sk_live_', 'npm_', 'glpat-', 'xoxb-', 'sk-', '4111 1111 1111 1111', '5500-0000-0000-0004', '2222', '1234567890', '12345678',
  'aGVsbG8gd29ybGQ=', 'cGFzc3dvcmQ9aHVudGVyMg==', 'QUJD'.repeat(4), 'Zm9v'.repeat(5), 'x'.repeat(15), 'x'.repeat(16), 'word ', 'mounted module layout ',
];

function randomText(max: number): string {
  let s = '';
  const n = Math.floor(rnd() * max);
  for (let i = 0; i < n; i++) s += pick(PIECES);
  return s;
}

function joined(texts: string[]): { text: string; starts: number[] } {
  const starts: number[] = [];
  let at = 0;
  for (const t of texts) {
    starts.push(at);
    at += t.length + 1;
  }
  return { text: texts.join('\n'), starts };
}

/** what both paths mark, and whether the finder took the text */
function bothMarks(text: string, starts: number[]): { finder: string; passes: string; scanned: boolean } {
  const a = new Uint8Array(starts.length);
  const b = new Uint8Array(starts.length);
  markTriggered(text, starts, a);
  markByPasses(text, starts, b);
  return { finder: a.join(''), passes: b.join(''), scanned: findCandidates(text) !== null };
}

function probeRuns(text: string): number[] {
  const out: number[] = [];
  eachRun(text, (a, b) => {
    out.push(a, b);
    return false;
  });
  return out;
}

describe('the candidate finder', () => {
  it('is the module prefilter.wat compiles to', async () => {
    const source = readFileSync(new URL('../../../src/domain/redaction/prefilter.wat', import.meta.url), 'utf8');
    const bytes = (await compilePrefilterWat(source)) as Uint8Array;
    expect(Buffer.from(bytes).toString('base64')).toBe(PREFILTER_WASM);
  });

  it('runs here: a Latin-1 text of any length is scanned, one with a character above U+00FF is not', () => {
    expect(findCandidates('x'.repeat(200))).not.toBeNull();
    expect(findCandidates('x'.repeat(5))).not.toBeNull();
    expect(findCandidates('')).not.toBeNull();
    expect(findCandidates(`${'x'.repeat(200)}€`)).toBeNull();
  });

  it('marks a short text as the passes do, at every length from 0 to 40', () => {
    for (const piece of ['token:x', 'sk-', 'eyJ', 'AKIAABCDEFGHIJKLMNOP', '4111111111', 'hooks.slack', 'Bearer x']) {
      for (let n = 0; n <= 40; n++) {
        const text = `${'w'.repeat(n)}${piece}`.slice(0, Math.max(n, piece.length));
        const m = bothMarks(text, [0]);
        expect(m.finder, JSON.stringify(text)).toBe(m.passes);
      }
    }
  });

  it('marks exactly the records the passes mark, on 3 000 seeded batches', () => {
    let scanned = 0;
    let marked = 0;
    for (let round = 0; round < 3000; round++) {
      const texts = Array.from({ length: 1 + Math.floor(rnd() * 30) }, () => randomText(12));
      const { text, starts } = joined(texts);
      const m = bothMarks(text, starts);
      expect(m.finder, JSON.stringify(text)).toBe(m.passes);
      if (m.scanned) scanned++;
      marked += [...m.finder].filter((c) => c === '1').length;
    }
    // the finder answered most of them, and they held secrets to find
    expect(scanned).toBeGreaterThan(2500);
    expect(marked).toBeGreaterThan(5000);
  });

  it('finds every anchor at every offset against its chunks, and at the very end of the text', () => {
    const anchors = ['token:', 'key=', 'x=ABCDEFGHIJKLMNOPQRSTUVWX', 'https://u:pw@h', 'ghp_', 'github_pat_', 'sk_test_', 'npm_', 'glpat-', 'xoxp-', 'sk-', 'SG.', 'hooks.slack', 'eyJ', 'PRIVATE KEY', 'Bearer x', 'BASIC x', 'bearer x', 'basic x', 'AIza', 'AKIAABCDEFGHIJKLMNOP', '4111 1111 1111 1111', '4111111111'];
    for (const anchor of anchors) {
      for (let before = 128; before < 168; before++) {
        for (const after of ['', ' tail', '.'.repeat(17)]) {
          const text = `${'w'.repeat(before)}${anchor}${after}`;
          const m = bothMarks(text, [0]);
          expect(m.scanned).toBe(true);
          expect(m.finder, `${anchor} after ${before}${after ? ` then ${JSON.stringify(after)}` : ''}`).toBe('1');
          expect(m.passes).toBe('1');
        }
      }
    }
    // one character short of the card's ten, wherever it falls: neither path fires
    for (let before = 128; before < 168; before++) expect(bothMarks(`${'w'.repeat(before)}411111111`, [0])).toEqual({ finder: '0', passes: '0', scanned: true });
  });

  it('marks the record that holds a match when records are cut at every offset', () => {
    for (let cut = 1; cut < 40; cut++) {
      const texts = ['p'.repeat(cut), `${'q'.repeat(150 - cut)}sk-`, 'r'.repeat(cut), '4111 1111 1111 1111', `${'s'.repeat(cut)}=`, 'hooks.slack'];
      const { text, starts } = joined(texts);
      const m = bothMarks(text, starts);
      expect(m.finder, `cut ${cut}`).toBe(m.passes);
      expect(m.finder).toBe('010101');
    }
  });

  it('reports exactly the base64 runs the probe reports: lengths around 16 and 8192, padding, leads, every offset', () => {
    const texts: string[] = [];
    for (let before = 128; before < 160; before++) {
      for (const run of ['QUJDREVGR0hJSktM', 'QUJDREVGR0hJSkt', 'QUJDREVGR0hJSktMTU5P', 'aGVsbG8gd29ybGQ=', 'cGFzc3dvcmQ9aHVudGVyMg==', 'cGFzc3dvcmQ9aHVudGVyMg===', 'abcdefghijklmnopqrstuvwx', 'Zm9v'.repeat(8)]) {
        texts.push(`${' '.repeat(before)}${run}`, `${' '.repeat(before)}${run} after`, `${'x.'.repeat(before / 2)}${run}\n${run}`);
      }
    }
    texts.push(`${'w '.repeat(80)}${'QUJD'.repeat(MAX_RUN / 4)}`, `${'w '.repeat(80)}${'QUJD'.repeat(MAX_RUN / 4)}Q`, `${'w '.repeat(80)}${'QUJD'.repeat(MAX_RUN / 4 + 1)} QUJDREVGR0hJSktM`);
    for (let i = 0; i < 3000; i++) texts.push(randomText(40));
    let runs = 0;
    for (const t of texts) {
      const found = findCandidates(t);
      if (found === null) continue;
      const want = probeRuns(t);
      expect(candidateRuns(t, found), JSON.stringify(t.slice(0, 300))).toEqual(want);
      runs += want.length / 2;
    }
    expect(runs).toBeGreaterThan(1000);
    expect(MIN_RUN).toBe(16);
  });

  it('leaves a text above U+00FF, or longer than it scans, to the passes, which answer the same', () => {
    const engine = compileRedaction();
    const secret = 'token: hunter2hunter2';
    const wide = `${'€'.repeat(200)} ${secret}`;
    expect(findCandidates(wide)).toBeNull();
    expect(bothMarks(wide, [0])).toEqual({ finder: '1', passes: '1', scanned: false });
    const long = `${'word '.repeat(SCAN_MAX / 5 + 10)}${secret}`;
    expect(scanCandidates(long)).toBeNull();
    expect(bothMarks(long, [0])).toEqual({ finder: '1', passes: '1', scanned: false });
    expect(engine.redactText(wide)).toContain('[REDACTED');
  });

  it('grows its memory for a long text, answers the same after it, and a short text after that too', () => {
    const big = `${'mounted module layout '.repeat(30_000)}AKIAABCDEFGHIJKLMNOP ${'QUJD'.repeat(10)}`;
    const m = bothMarks(big, [0]);
    expect(m).toEqual({ finder: '1', passes: '1', scanned: true });
    expect(candidateRuns(big, findCandidates(big)!)).toEqual(probeRuns(big));
    const small = `${'z'.repeat(130)} npm_`;
    expect(bothMarks(small, [0])).toEqual({ finder: '1', passes: '1', scanned: true });
  });

  it('redacts a record whose base64 run decodes to a secret, found by the finder in a batch', () => {
    const engine = compileRedaction();
    const encoded = Buffer.from('password=hunter2hunter2').toString('base64');
    const recs = [
      { ts: 1, message: `${'plain words '.repeat(12)}` },
      { ts: 1, message: `${'plain words '.repeat(12)}${encoded}` },
      { ts: 1, message: `${'plain words '.repeat(12)}${Buffer.from('just some text here').toString('base64')}` },
    ];
    expect([...engine.triggered('logs', recs)]).toEqual([0, 1, 0]);
    expect((engine.redactRecord('logs', structuredClone(recs[1]!)) as { message: string }).message).not.toContain(encoded);
  });
});
