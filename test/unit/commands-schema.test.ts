/** The command contract's bounds (src/domain/commands.ts): what the server refuses from an extension. */
import { describe, expect, it } from 'vitest';
import { A11yResult, DomQueryResult, InteractParams, DomQueryParams, LIMITS } from '../../src/domain/commands.js';

const node = { tag: 'div', bbox: { x: 0, y: 0, width: 1, height: 1 }, visible: true };
const dom = (over: Record<string, unknown>) => ({ url: 'http://a/', title: 't', match_count: 1, matches: [{ ...node, ...over }] });

function nest(depth: number): Record<string, unknown> {
  return depth === 0 ? { tag: 'span' } : { tag: 'div', children: [nest(depth - 1)] };
}

describe('command schemas', () => {
  it('accepts children down to depth 5 and refuses a sixth level', () => {
    expect(DomQueryResult.safeParse(dom({ children: [nest(4)] })).success).toBe(true);
    expect(DomQueryResult.safeParse(dom({ children: [nest(5)] })).success).toBe(false);
  });

  it('bounds text, matches, styles and attributes', () => {
    expect(DomQueryResult.safeParse(dom({ text: 'x'.repeat(LIMITS.text) })).success).toBe(true);
    expect(DomQueryResult.safeParse(dom({ text: 'x'.repeat(LIMITS.text + 1) })).success).toBe(false);
    const many = { url: 'u', title: 't', match_count: 99, matches: Array.from({ length: LIMITS.matches + 1 }, () => node) };
    expect(DomQueryResult.safeParse(many).success).toBe(false);
    const styles = Object.fromEntries(Array.from({ length: LIMITS.styles + 1 }, (_, i) => [`p${i}`, '1']));
    expect(DomQueryResult.safeParse(dom({ styles })).success).toBe(false);
    const attributes = Object.fromEntries(Array.from({ length: LIMITS.attributes + 1 }, (_, i) => [`a${i}`, '1']));
    expect(DomQueryResult.safeParse(dom({ attributes })).success).toBe(false);
  });

  it('holds accessibility nodes to 10 per rule and html to 200 characters', () => {
    const rule = (nodes: number, html: number) => ({ url: 'u', engine: 'axe', violations: [{ id: 'label', impact: 'critical', help: 'h', node_count: nodes, nodes: Array.from({ length: nodes }, () => ({ selector: '#a', html: 'h'.repeat(html), failure_summary: 'f' })) }] });
    expect(A11yResult.safeParse(rule(10, 200)).success).toBe(true);
    expect(A11yResult.safeParse(rule(11, 10)).success).toBe(false);
    expect(A11yResult.safeParse(rule(1, 201)).success).toBe(false);
  });

  it('names what an interact action is missing', () => {
    const r = InteractParams.safeParse({ action: 'type', selector: '#a' });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toBe('type needs text');
    expect(InteractParams.safeParse({ action: 'navigate', url: 'file:///etc/passwd' }).success).toBe(false);
    expect(InteractParams.safeParse({ action: 'refresh' }).success).toBe(true);
  });

  it('reads only property names that look like CSS properties', () => {
    expect(DomQueryParams.safeParse({ selector: 'a', properties: ['font-size', '--x'] }).success).toBe(false);
    expect(DomQueryParams.safeParse({ selector: 'a', properties: ['font-size', '-webkit-box-align'] }).success).toBe(true);
  });
});
