/**
 * Progress notifications of a streamed answer (src/mcp/progress.ts): redacted as one text so a
 * secret split across pieces is one match, whole lines only, coalesced to one per 100 ms or 1 KiB,
 * and held back (counted) while the transport's gate is shut — the held text goes with the next.
 */
import { describe, expect, it } from 'vitest';
import { ProgressStream } from '../../../src/mcp/progress.js';

const redact = (s: string): string => s.replace(/acme_[a-z0-9]{32}/g, '[REDACTED:acme]');
const KEY = 'acme_0123456789abcdefghijklmnopqrstuv';

function stream(o: { gate?: () => boolean } = {}) {
  const clock = { t: 0 };
  const sent: Array<{ message: string; n: number }> = [];
  const s = new ProgressStream({ redact, send: (message, n) => sent.push({ message, n }), now: () => clock.t, ...o });
  return { s, sent, clock };
}

describe('progress of a streamed answer', () => {
  it('a secret split across two pieces goes out redacted, never in part', () => {
    const { s, sent, clock } = stream();
    s.push(`token ${KEY.slice(0, 15)}`);
    clock.t += 200;
    s.push(`${KEY.slice(15)} leaked\nnext`);
    s.end();
    expect(sent.map((x) => x.message)).toEqual(['token [REDACTED:acme] leaked\n', 'next']);
    expect(sent.map((x) => x.n)).toEqual([1, 2]);
    for (let i = 0; i + 6 <= KEY.length; i++) expect(sent.map((x) => x.message).join('')).not.toContain(KEY.slice(i, i + 6));
  });

  it('coalesces: pieces faster than 100 ms go together, unless 1 KiB waits', () => {
    const { s, sent, clock } = stream();
    for (let i = 0; i < 500; i++) {
      s.push(`line ${i}\n`);
      clock.t += 1;
    }
    s.end();
    // 500 pieces over 500 ms, ~4 KiB: one per 100 ms or per KiB at most, never one per piece
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.length).toBeLessThanOrEqual(12);
    expect(sent.map((x) => x.message).join('')).toBe(Array.from({ length: 500 }, (_, i) => `line ${i}\n`).join(''));
  });

  it('holds back and counts while the gate is shut; the held text goes with the next', () => {
    let open = false;
    const { s, sent, clock } = stream({ gate: () => open });
    s.push('one\n');
    clock.t += 200;
    s.push('two\n');
    expect(sent).toEqual([]);
    expect(s.dropped).toBe(2);
    open = true;
    clock.t += 200;
    s.push('three\n');
    expect(sent.map((x) => x.message)).toEqual(['one\ntwo\nthree\n']);
  });
});
