/**
 * Issue 20 item 7: a record found by `contains` shows the text it was found by. The line of a
 * failed request's console record names method, URL and status; when its message is what
 * matched, the line carries that stretch of the message too.
 */
import { describe, expect, it } from 'vitest';
import { kindId } from '../../../src/domain/kinds.js';
import { line, matchNote } from '../../../src/mcp/render/format.js';
import type { Hit, Rec } from '../../../src/query/index.js';

const hit = (kind: 'logs' | 'network', rec: Record<string, unknown>): Hit => ({ kind: kindId(kind), rec: rec as Rec, clientTime: 0, tab: -1 }) as unknown as Hit;

const failed = { level: 'error', type: 'network', message: 'POST https://api.test/orders → 500 (upstream payment gateway timed out)', method: 'POST', request_url: 'https://api.test/orders', status: 500 };

describe('a contains match is shown', () => {
  it('a network console line matched by its message shows the matching stretch of it', () => {
    const l = line(hit('logs', failed), 'gateway timed');
    expect(l).toContain('network POST "https://api.test/orders" → 500');
    expect(l).toMatch(/ message="…?[^"]*payment gateway timed out\)"$/);
  });

  it('nothing is added when the line already shows the match, or without contains', () => {
    expect(line(hit('logs', failed), 'API.TEST/orders')).toBe(line(hit('logs', failed)));
    expect(line(hit('logs', failed))).not.toContain('message=');
  });

  it('a long field is cut around the match, the match whole, quoted as page text', () => {
    const long = `${'a'.repeat(500)} NEEDLE "quoted"\n${'b'.repeat(500)}`;
    const note = matchNote({ type: 'exception', message: 'shown', stack: long } as Rec, 'x', 'needle "quoted"');
    expect(note.startsWith(' stack="…')).toBe(true);
    expect(note).toContain('NEEDLE \\"quoted\\"\\nbbb');
    expect(note.length).toBeLessThan(200);
    expect(note).not.toContain('\n');
  });

  it('a match only in a field name adds nothing', () => {
    expect(matchNote({ level: 'error', message: 'x' } as Rec, 'x', 'level')).toBe('');
  });
});
