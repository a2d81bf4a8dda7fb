/**
 * The extension's command registry: one result per command, and a handler that fails because
 * the service worker itself is being stopped (Chrome rejects its API calls with "No SW") answers
 * extension_disconnected, so the agent retries instead of reading a cryptic command failure.
 */
import { describe, expect, it } from 'vitest';
import { CommandRegistry } from '../../../extension/src/sw/commands.js';

const cmd = (type: string) => ({ t: 'cmd' as const, id: 'q1', type, params: {}, deadline_ms: 1000 });

describe('CommandRegistry', () => {
  it('words Chrome\'s "No SW" as extension_disconnected, any other failure as the error it was', async () => {
    const r = new CommandRegistry();
    r.register('act', () => Promise.reject(new Error('No SW')));
    r.register('dom', () => Promise.reject(new TypeError('x is not a function')));
    const gone = await r.dispatch(cmd('act'));
    expect(gone.status).toBe('error');
    expect(gone.error).toMatch(/^extension_disconnected: the extension's service worker stopped while running act;/);
    const other = await r.dispatch(cmd('dom'));
    expect(other.error).toBe('TypeError: x is not a function');
  });
});
