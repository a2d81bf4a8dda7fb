/**
 * interact: the agent drives the page through the extension. Every action needs the user's
 * "Allow agent control" toggle in the popup (off by default); the extension enforces it, so a
 * refusal arrives as agent_control_off and says whom to ask. Mutating actions are recorded as
 * actions with source "agent".
 */
import type { z } from 'zod';
import type { ToolContext, ToolResult } from './context.js';
import { runCommand } from './run-command.js';
import type { InteractInput } from '../tool-defs.js';

type Args = { [K in keyof typeof InteractInput]: z.infer<(typeof InteractInput)[K]> };

/** room for the extension's own deadline answer (page loads, wait_for) to arrive first */
const SLACK_MS = 2000;

export function interact(ctx: ToolContext, a: Args): Promise<ToolResult> {
  const { tab_id: tabId, ...params } = a;
  const deadlineMs = a.timeout_ms !== undefined ? a.timeout_ms + SLACK_MS : undefined;
  return runCommand(ctx, 'interact', params, { tabId, ...(deadlineMs !== undefined ? { deadlineMs } : {}) });
}
