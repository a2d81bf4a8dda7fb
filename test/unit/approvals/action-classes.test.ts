/**
 * Every action of every tool schema is classed (issue 19 item 4): the walk takes the enums from
 * the schemas themselves, so an action added to a tool without a row in
 * src/domain/actions/classes.ts fails here instead of silently falling to the default.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ACTION_TABLE, classify } from '../../../src/domain/actions/classes.js';
import { TOOLS } from '../../../src/mcp/tool-defs.js';

type Shape = Record<string, z.ZodTypeAny>;
/** the values of an enum argument, through optional() and describe() */
const options = (shape: Shape, key: string): string[] => {
  let t = shape[key] as unknown as { def: { innerType?: unknown; entries?: Record<string, string> } };
  while (t.def.innerType) t = t.def.innerType as typeof t;
  return Object.values(t.def.entries ?? {});
};

describe('action classes', () => {
  it('classes every action of every tool schema, with every qualifier the schema allows', () => {
    for (const [tool, def] of Object.entries(TOOLS)) {
      const row = ACTION_TABLE[tool];
      expect(row, `${tool} has a row`).toBeDefined();
      const shape = def.inputSchema as Shape;
      const actions = options(shape, row!.key);
      // no row for an action the schema lost, no action of the schema without a row
      expect(Object.keys(row!.actions).sort(), tool).toEqual([...actions].sort());
      const quals: Array<Record<string, unknown>> = [{}];
      for (const k of ['scope', 'noise_action', 'redaction_action']) if (shape[k]) for (const v of options(shape, k)) quals.push({ [k]: v });
      quals.push({ value: 'on' }, { scope: 'global', noise_action: 'add' });
      for (const a of actions) for (const q of quals) expect(['read_only', 'mutating', 'destructive']).toContain(classify(tool, { [row!.key]: a, ...q }).class);
    }
  });

  it('classes the edges as decided', () => {
    const c = (tool: string, a: Record<string, unknown>): string => classify(tool, a).class;
    for (const a of ['navigate', 'refresh', 'back', 'forward', 'click', 'type', 'select']) expect(c('interact', { action: a })).toBe('mutating');
    expect(c('interact', { action: 'scroll_to' })).toBe('read_only');
    expect(c('interact', { action: 'wait_for' })).toBe('read_only');
    expect(c('configure', { action: 'clear' })).toBe('read_only');
    expect(c('configure', { action: 'clear', scope: 'mine' })).toBe('read_only');
    expect(c('configure', { action: 'clear', scope: 'all' })).toBe('destructive');
    expect(c('configure', { action: 'redaction', redaction_action: 'remove' })).toBe('destructive');
    expect(c('configure', { action: 'redaction', redaction_action: 'add' })).toBe('read_only');
    expect(c('configure', { action: 'noise_rule', noise_action: 'add' })).toBe('read_only');
    expect(c('configure', { action: 'noise_rule', noise_action: 'add', scope: 'global' })).toBe('mutating');
    expect(c('configure', { action: 'noise_rule', noise_action: 'list', scope: 'global' })).toBe('read_only');
    expect(c('configure', { action: 'source_maps' })).toBe('read_only');
    expect(c('configure', { action: 'source_maps', value: 'off' })).toBe('mutating');
    expect(c('observe', { what: 'errors' })).toBe('read_only');
    expect(c('analyze', { target: 'dom' })).toBe('read_only');
    expect(classify('configure', { action: 'clear', scope: 'all' }).label).toBe('configure clear scope:all');
  });

  it('an unknown tool or action is destructive, the most careful answer', () => {
    expect(classify('interact', { action: 'drop_database' }).class).toBe('destructive');
    expect(classify('nope', {}).class).toBe('destructive');
    expect(classify('interact', { action: '__proto__' }).class).toBe('destructive');
  });
});
