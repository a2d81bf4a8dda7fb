/** `gasoline --status` lists the session table and the approval policy (issue 19 item 3). */
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/bridge/control.js';
import { gapNote } from '../../../src/bridge/upstream.js';

describe('--status sessions', () => {
  it('lists each session with transport, client, name and state, and the approval policy', () => {
    const lines = formatStatus({
      version: '0.1.0',
      port: 7890,
      mode: 'server',
      pid: 1,
      uptime_s: 5,
      mcp_sessions: [
        { tag: 'abcd1234', transport: 'bridge', client_id: 'proj', client_name: 'claude-code 2.1', created: 'T0', last_seen: 'T1', state: 'degraded', degraded_reason: 'notifications dropped' },
        { tag: 'ef567890', transport: 'stdio', client_id: 'p2', client_name: null, created: 'T0', last_seen: 'T2', state: 'closed' },
      ],
      approvals: { policy: { mutating: 'ask', destructive: 'deny' }, watch: true, pending: 2 },
    });
    expect(lines).toContain('mcp sessions: 1 open, 2 listed');
    expect(lines).toContain('  abcd1234 bridge proj "claude-code 2.1": degraded (notifications dropped), since T0, last seen T1');
    expect(lines).toContain('  ef567890 stdio p2: closed, since T0, last seen T2');
    expect(lines).toContain('approvals: mutating ask, destructive deny, WATCH MODE; 2 waiting for the user');
  });

  it('a lost session says it was re-initialised, and what survived', () => {
    expect(gapNote({ pid: 5, at: 0 }, 5, false)).toContain('a new session was opened (re-initialised)');
    expect(gapNote({ pid: 5, at: 0 }, 6, false)).toContain('approval ids from before are gone');
  });
});
