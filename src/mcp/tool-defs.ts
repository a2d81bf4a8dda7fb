/**
 * What an agent sees before it calls anything: the server's name and capabilities, the four
 * tools' names, descriptions and input schemas, and the guide resource. One module, imported by
 * the tool dispatcher (src/mcp/server.ts) and by the bridge (src/bridge/), so a bridge answers
 * initialize, tools/list and resources/* itself, at once, with exactly the bytes the daemon
 * would send. It imports no engine code: a bridge must start fast.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { INTERACT_ACTIONS } from '../domain/commands.js';
import { STREAM_EVENTS } from '../domain/streaming/stream-state.js';
import { VERSION } from '../version.js';
import { GUIDE, INSTRUCTIONS } from './guide.js';
import { unknownToolError } from './unknown-tool.js';

export const OBSERVE_WHATS = ['summary', 'errors', 'logs', 'network', 'network_bodies', 'websocket_events', 'websocket_status', 'actions', 'performance', 'page', 'timeline', 'error_bundles', 'command_result', 'ci'] as const;

export const ObserveInput = {
  what: z.enum(OBSERVE_WHATS).describe('summary first: everything new, with the call to make next'),
  limit: z.number().int().min(1).max(500).optional().describe('max lines, default 50'),
  fold: z.boolean().optional().describe('default true: repeats are one line ×count; false lists each'),
  budget: z.number().int().min(1000).max(60_000).optional().describe('max chars, default 8000; the rest by cursor'),
  from: z.enum(['new', 'start']).optional().describe('new (default): unread by you; start: all buffered'),
  after: z.string().max(200).optional().describe('cursor from a previous result: continue forward'),
  before: z.string().max(200).optional().describe('cursor: the records before it'),
  url: z.string().max(500).optional().describe('url substring'),
  contains: z.string().max(500).optional().describe('text substring'),
  tab_id: z.number().int().optional(),
  min_level: z.enum(['debug', 'log', 'info', 'warn', 'error']).optional().describe('logs'),
  method: z.string().max(16).optional().describe('network'),
  status_min: z.number().int().optional().describe('network'),
  status_max: z.number().int().optional().describe('network'),
  connection_id: z.string().max(200).optional().describe('websocket_events'),
  direction: z.enum(['incoming', 'outgoing']).optional().describe('websocket_events'),
  window_s: z.number().min(1).max(120).optional().describe('error_bundles: seconds before, default 5'),
  query_id: z.string().max(64).optional().describe('command_result'),
};

export const ANALYZE_TARGETS = ['performance', 'changes', 'error_clusters', 'security', 'dom', 'page_info', 'accessibility', 'triage'] as const;

export const AnalyzeInput = {
  target: z.enum(ANALYZE_TARGETS),
  checkpoint: z.string().max(165).optional().describe('changes: name or CLIENT:name'),
  url: z.string().max(500).optional().describe('url substring'),
  limit: z.number().int().min(1).max(200).optional(),
  budget: z.number().int().min(1000).max(60_000).optional().describe('max chars, default 8000'),
  selector: z.string().min(1).max(1000).optional().describe('dom: CSS selector'),
  include_styles: z.boolean().optional(),
  include_children: z.boolean().optional(),
  max_depth: z.number().int().min(1).max(5).optional(),
  properties: z.array(z.string().max(64)).max(30).optional().describe('dom: computed styles to read'),
  scope: z.string().min(1).max(1000).optional().describe('accessibility: CSS selector'),
  tags: z.array(z.string().max(40)).max(20).optional().describe('accessibility: e.g. wcag2aa'),
  include_passes: z.boolean().optional(),
  force_refresh: z.boolean().optional(),
  tab_id: z.number().int().optional(),
  // the guide says what triage does and how the model is configured
  question: z.string().max(2000).optional().describe('triage: a question'),
};

export const ConfigureInput = {
  action: z.enum(['health', 'clear', 'checkpoint', 'noise_rule', 'store', 'redaction', 'streaming', 'tab_filter', 'source_maps', 'export_har']),
  scope: z.enum(['mine', 'all', 'global']).optional().describe('clear: mine | all (empties shared buffers!); noise_rule, tab_filter: see guide'),
  checkpoint_action: z.enum(['create', 'list', 'delete']).optional(),
  noise_action: z.enum(['add', 'remove', 'list']).optional(),
  store_action: z.enum(['get', 'set', 'delete', 'list']).optional(),
  redaction_action: z.enum(['list', 'add', 'remove', 'test']).optional(),
  replacement: z.string().max(100).optional().describe('redaction add'),
  text: z.string().max(10_000).optional().describe('redaction test'),
  name: z.string().min(1).max(100).optional().describe('checkpoint name'),
  field: z.enum(['message', 'source', 'url']).optional().describe('noise_rule add'),
  pattern: z.string().min(1).max(500).optional().describe('noise_rule/redaction/tab_filter: regex'),
  // Chrome tab ids are non-negative int32 (the record header's tab field)
  tab_ids: z.array(z.number().int().min(0).max(2 ** 31 - 1)).min(1).max(20).optional(),
  id: z.string().max(20).optional().describe('noise_rule remove'),
  streaming_action: z.enum(['enable', 'disable', 'status']).optional().describe('push alerts'),
  events: z.array(z.enum(STREAM_EVENTS)).max(10).optional().describe('streaming: default ["all"]'),
  throttle_seconds: z.number().int().min(1).max(60).optional().describe('streaming, default 5'),
  url_filter: z.string().max(500).optional(),
  severity_min: z.enum(['info', 'warning', 'error']).optional().describe('streaming: default warning'),
  key: z.string().min(1).max(200).optional(),
  value: z.string().max(65_536).optional(),
  // export_har (the guide says the rest; every character here is paid on every agent turn): name is
  // the checkpoint (or time) to export from, url_filter and tab_ids filter; path is bounded in code
  path: z.string().optional(),
  limit: z.number().int().min(1).max(5000).optional(),
  // approvals (the guide says how to poll): the id an approval_required answer named
  approval_id: z.string().max(40).optional(),
};

export const InteractInput = {
  action: z.enum(INTERACT_ACTIONS),
  selector: z.string().min(1).max(1000).optional().describe('CSS selector'),
  text: z.string().max(10_000).optional().describe('type'),
  value: z.string().max(1000).optional().describe('select: option value'),
  url: z.string().max(8192).optional().describe('navigate'),
  timeout_ms: z.number().int().min(100).max(30_000).optional(),
  tab_id: z.number().int().optional(),
  approval_id: z.string().max(40).optional(),
};

export const TOOLS = {
  observe: {
    description: 'What the browser did, new since you last looked. Start with what:"summary". Repeats fold into one line ×count; answers fit budget chars, worst first; follow the after:"…" cursors they name for the rest. Alerts ride along. See gasoline://guide.',
    inputSchema: ObserveInput,
  },
  analyze: {
    description: 'Conclusions: triage, error_clusters, performance, changes, security; live page via the extension: dom, page_info, accessibility.',
    inputSchema: AnalyzeInput,
  },
  configure: { description: 'Actions: health, clear, checkpoint, noise_rule, store, redaction, streaming, tab_filter, source_maps, export_har. See gasoline://guide.', inputSchema: ConfigureInput },
  interact: { description: 'Drive the page (needs "Allow agent control" in the extension popup). See gasoline://guide.', inputSchema: InteractInput },
} as const;

export type ToolName = keyof typeof TOOLS;
export const TOOL_NAMES = Object.keys(TOOLS) as ToolName[];

/**
 * A new McpServer with gasoline's identity, capabilities and instructions, and the guide resource
 * registered; the caller registers the four tools with its own handlers (the dispatcher runs
 * them, a bridge forwards them).
 */
export function createMcpShell(): McpServer {
  const mcp = new McpServer({ name: 'gasoline', version: VERSION }, { capabilities: { tools: {}, logging: {}, resources: {} }, instructions: INSTRUCTIONS });
  mcp.registerResource('guide', 'gasoline://guide', { title: 'How to use Gasoline', mimeType: 'text/markdown' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/markdown', text: GUIDE }],
  }));
  return mcp;
}

/** For StdioLineTransport.preflight: an unknown tool is refused before the SDK sees it (./unknown-tool.ts). */
export function unknownToolPreflight(m: JSONRPCMessage): { code: number; message: string } | null {
  if (!('method' in m) || m.method !== 'tools/call') return null;
  return unknownToolError((m.params as { name?: unknown } | undefined)?.name, TOOL_NAMES);
}
