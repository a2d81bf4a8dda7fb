/**
 * interact: the agent drives the page through the extension. Every action needs the user's
 * "Allow agent control" toggle in the popup (off by default); the extension enforces it, so a
 * refusal arrives as agent_control_off and says whom to ask. That switch is the master switch;
 * within it, each mutating action (src/domain/actions/classes.ts) also passes the approval gate
 * (./approval-gate.ts): the user's policy, or the user's decision in the browser. Mutating actions are recorded as
 * actions with source "agent".
 */
import type { z } from 'zod';
import type { ToolContext, ToolResult } from './context.js';
import { runCommand } from './run-command.js';
import { passGate } from './approval-gate.js';
import type { InteractInput } from '../tool-defs.js';

type Args = { [K in keyof typeof InteractInput]: z.infer<(typeof InteractInput)[K]> };

/** room for the extension's own deadline answer (page loads, wait_for) to arrive first */
const SLACK_MS = 2000;

export async function interact(ctx: ToolContext, a: Args): Promise<ToolResult> {
  // mutating actions wait for the user's approval (or their policy); an approval pins its tab
  const tabId = await passGate(ctx, 'interact', a);
  const { tab_id: _tab, approval_id: _approval, ...params } = a;
  const deadlineMs = a.timeout_ms !== undefined ? a.timeout_ms + SLACK_MS : undefined;
  return runCommand(ctx, 'interact', params, { tabId, ...(deadlineMs !== undefined ? { deadlineMs } : {}) });
}
