/**
 * The tool-call hook (metrics, the client's trail) reports a call once its answer is on its way,
 * not ahead of it (issue 17 item 3: the trail's file write could take main's core before the
 * answer was written) — with what it reported before: redacted arguments, the answer's size, the
 * error code, and a failing hook never failing the call.
 */
import { describe, expect, it } from 'vitest';
import { timedTool } from '../../../src/mcp/call-hook.js';
import type { ToolCall } from '../../../src/mcp/port.js';
import type { ToolResult } from '../../../src/mcp/tools/context.js';

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

function hooked(fn: (a: { q: string }) => Promise<ToolResult>, onCall: (c: ToolCall) => void) {
  return timedTool({ clientId: 'c1', onCall, redact: (v) => JSON.parse(JSON.stringify(v).replaceAll('secret', '[redacted]')) }, 'observe', (a: { q: string }, _extra: unknown) => fn(a));
}

describe('timedTool', () => {
  it('reports after the answer was handed back, with redacted arguments, size and duration', async () => {
    const calls: ToolCall[] = [];
    const order: string[] = [];
    const call = hooked(async () => ({ content: [{ type: 'text', text: 'abcd' }] }), (c) => {
      calls.push(c);
      order.push('hook');
    });
    const r = await call({ q: 'my secret' }, {});
    order.push('answer');
    expect(r.content[0]).toEqual({ type: 'text', text: 'abcd' });
    expect(calls).toHaveLength(0);
    await nextTurn();
    expect(order).toEqual(['answer', 'hook']);
    expect(calls[0]).toMatchObject({ clientId: 'c1', tool: 'observe', args: { q: 'my [redacted]' }, resultChars: 4, isError: false });
    expect(calls[0]!.ms).toBeGreaterThanOrEqual(0);
  });

  it('a catalog error answer reports its code; a thrown call reports internal and still throws', async () => {
    const calls: ToolCall[] = [];
    const refused = hooked(async () => ({ content: [{ type: 'text', text: 'scan_busy: 32 reads are waiting' }], isError: true }), (c) => calls.push(c));
    await refused({ q: '' }, {});
    const thrown = hooked(async () => Promise.reject(new Error('boom')), (c) => calls.push(c));
    await expect(thrown({ q: '' }, {})).rejects.toThrow('boom');
    await nextTurn();
    expect(calls.map((c) => [c.isError, c.code])).toEqual([
      [true, 'scan_busy'],
      [true, 'internal'],
    ]);
  });

  it('a hook that throws never fails the call', async () => {
    const call = hooked(async () => ({ content: [{ type: 'text', text: 'ok' }] }), () => {
      throw new Error('hook broke');
    });
    await expect(call({ q: '' }, {})).resolves.toMatchObject({ content: [{ text: 'ok' }] });
    await nextTurn();
  });
});
