/**
 * interact: the agent drives the page through the extension. Every action needs the user's
 * "Allow agent control" toggle in the popup (off by default); the extension enforces it, so a
 * refusal arrives as agent_control_off and says whom to ask. Mutating actions are recorded as
 * actions with source "agent".
 */
import { z } from 'zod';
import { INTERACT_ACTIONS } from '../../domain/commands.js';
import type { ToolContext, ToolResult } from './context.js';
import { runCommand } from './run-command.js';

export const InteractInput = {
  action: z.enum(INTERACT_ACTIONS).describe('navigate|refresh|back|forward|click|type|select|scroll_to|wait_for'),
  selector: z.string().min(1).max(1000).optional().describe('CSS selector'),
  text: z.string().max(10_000).optional().describe('type'),
  value: z.string().max(1000).optional().describe('select: option value'),
  url: z.string().max(8192).optional().describe('navigate'),
  timeout_ms: z.number().int().min(100).max(30_000).optional(),
  tab_id: z.number().int().optional(),
};

type Args = { [K in keyof typeof InteractInput]: z.infer<(typeof InteractInput)[K]> };

/** room for the extension's own deadline answer (page loads, wait_for) to arrive first */
const SLACK_MS = 2000;

export function interact(ctx: ToolContext, a: Args): Promise<ToolResult> {
  const { tab_id: tabId, ...params } = a;
  const deadlineMs = a.timeout_ms !== undefined ? a.timeout_ms + SLACK_MS : undefined;
  return runCommand(ctx, 'interact', params, { tabId, ...(deadlineMs !== undefined ? { deadlineMs } : {}) });
}
