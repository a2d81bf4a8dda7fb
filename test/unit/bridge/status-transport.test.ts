/** `gasoline --status` says whether the browser transport opens, the redaction policy in force, and whether the extension is paired and connected (issue 19 item 7). */
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/bridge/control.js';
import { describeExtension, describeRedaction } from '../../../src/bridge/transport-check.js';

const base = { version: '0.1.0', port: 7890, mode: 'server', pid: 1, uptime_s: 5 };

describe('--status: transport, redaction policy, extension', () => {
  it('prints the /mcp check with the live panel tokens, the rules in force and the pairing state', () => {
    const lines = formatStatus(
      { ...base, extension: { connected: true, paired: true, producers: [{}] }, redaction: { builtin_rules: 18, user_rules: 2, rules_version: 3 }, panel_tokens: { live: 1 } },
      { ok: true, detail: '/mcp initialize answered in 9 ms (protocol 2025-06-18)' },
    );
    expect(lines).toContain('extension: paired and connected (1 producer)');
    expect(lines).toContain('browser transport: ok — /mcp initialize answered in 9 ms (protocol 2025-06-18); 1 panel token live');
    expect(lines).toContain('redaction policy: loaded: 18 built-in + 2 rules of yours, rules version 3');
  });

  it('a failed check, a connected extension that is not paired, and a policy version when the daemon has one', () => {
    const lines = formatStatus(
      { ...base, extension: { connected: true, paired: false, producers: [{}, {}] }, redaction: { builtin_rules: 18, user_rules: 1, rules_version: 0, policy_version: 'p7', redaction_failed: 2 } },
      { ok: false, detail: 'no bridge token in /x to try /mcp with' },
    );
    expect(lines).toContain('extension: connected but NOT paired (run: gasoline pair) (2 producers)');
    expect(lines).toContain('browser transport: FAILED — no bridge token in /x to try /mcp with');
    expect(lines).toContain('redaction policy: loaded: 18 built-in + 1 rule of yours, rules version 0, policy p7, 2 record(s) failed redaction');
  });

  it('without a report of either: not connected, no redaction block; no transport line when it was not checked', () => {
    expect(describeExtension({})).toEqual({ state: 'absent', detail: 'not connected' });
    expect(describeRedaction({})).toEqual({ ok: false, detail: 'the daemon reports no redaction block' });
    const lines = formatStatus(base);
    expect(lines).toContain('extension: not connected');
    expect(lines.some((l) => l.startsWith('browser transport'))).toBe(false);
  });
});
