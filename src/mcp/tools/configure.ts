/**
 * configure: health, clearing (the caller's cursors, or — destructive — the shared buffers),
 * checkpoints, noise rules (own or global), the tab filter, a small per-client key/value store, the
 * source-map switch and the HAR export (./export-har.ts).
 */
import type { z } from 'zod';
import { KINDS, KIND_COUNT } from '../../domain/kinds.js';
import { gasolineError } from '../../errors.js';
import { MAX_TAB_PATTERN } from '../../query/index.js';
import { RedactionConfigError } from '../../domain/redaction/index.js';
import { noIngest, type ToolContext, type ToolResult } from './context.js';
import type { StreamState } from '../../domain/streaming/stream-state.js';
import { saveStreaming } from './streaming-saved.js';
import { exportHar } from './export-har.js';
import { passGate } from './approval-gate.js';
import type { ConfigureInput } from '../tool-defs.js';

type Args = { [K in keyof typeof ConfigureInput]: z.infer<(typeof ConfigureInput)[K]> };

export interface ConfigureDeps {
  mcpHealth: () => Record<string, unknown>;
  /** where an export without a path goes (<state dir>/exports/) */
  stateDir: string;
  stream?: StreamState;
}

export async function configure(ctx: ToolContext, deps: ConfigureDeps, a: Args): Promise<ToolResult> {
  // what changes other clients' view or loses data (clear scope:all, redaction remove, …) asks first
  await passGate(ctx, 'configure', a);
  switch (a.action) {
    case 'health':
      return ctx.text(JSON.stringify({ ...ctx.port.health(), mcp: deps.mcpHealth() }));
    case 'clear':
      return clear(ctx, a);
    case 'checkpoint':
      return checkpoint(ctx, a);
    case 'noise_rule':
      return noise(ctx, a);
    case 'store':
      return store(ctx, a);
    case 'tab_filter':
      return tabFilter(ctx, a);
    case 'redaction':
      return redaction(ctx, a);
    case 'streaming':
      return streaming(ctx, deps, a);
    case 'source_maps':
      return sourceMaps(ctx, a);
    case 'export_har':
      return exportHar(ctx, deps.stateDir, a);
  }
}

/**
 * Source-mapped stacks for this daemon, every client's (issue 21 item 4): value "on" or "off", no
 * value for the status. Off: no map is fetched and stacks read as the page generated them.
 */
function sourceMaps(ctx: ToolContext, a: Args): ToolResult {
  const stacks = ctx.port.stacks;
  if (!stacks) throw noIngest(ctx) ?? gasolineError('no_ingest');
  if (a.value !== undefined) {
    if (a.value !== 'on' && a.value !== 'off') throw gasolineError('invalid_argument', 'source_maps takes value "on" or "off" (no value: the status)');
    stacks.setEnabled(a.value === 'on');
  }
  const state = stacks.enabled
    ? 'on: stacks from bundled code show original file:line:col and source line, with maps fetched only from the page\'s own origin on localhost or a private network'
    : 'off: stacks show generated positions; nothing is fetched';
  return ctx.text(`source maps ${state} (for every client of this daemon)\n${JSON.stringify(stacks.stats())}`);
}

function streaming(ctx: ToolContext, deps: ConfigureDeps, a: Args): ToolResult {
  if (!deps.stream) throw gasolineError('internal', 'streaming is not available in this session');
  const r = deps.stream.configure({
    streaming_action: a.streaming_action ?? 'status',
    ...(a.events ? { events: a.events } : {}),
    ...(a.throttle_seconds !== undefined ? { throttle_seconds: a.throttle_seconds } : {}),
    ...(a.url_filter !== undefined ? { url_filter: a.url_filter } : {}),
    ...(a.severity_min ? { severity_min: a.severity_min } : {}),
  });
  if ('error' in r) throw gasolineError(r.error.code, r.error.message);
  // kept with the client: its next session (a reconnecting bridge, a restarted daemon) restores it
  if (a.streaming_action === 'enable' || a.streaming_action === 'disable') saveStreaming(deps.stream, ctx.client);
  return ctx.text(JSON.stringify(r));
}

function redaction(ctx: ToolContext, a: Args): ToolResult {
  const live = ctx.port.rules;
  if (!live) throw noIngest(ctx) ?? gasolineError('no_ingest');
  const act = a.redaction_action ?? 'list';
  if (act === 'list') {
    const rules = live.engine.listRules();
    return ctx.text(`redaction rules (${rules.length}, version ${live.version}):\n${rules.map((r) => `${r.name}${r.builtin ? '' : ' (yours)'}`).join(', ')}`);
  }
  if (act === 'test') {
    if (a.text === undefined) throw gasolineError('invalid_argument', 'redaction_action:"test" needs text');
    const t = live.engine.test(a.text);
    return ctx.text(`becomes: ${JSON.stringify(t.output)}\nfindings: ${t.findings.map((f) => `${f.class}@${f.start}-${f.end}`).join(', ') || 'none'}`);
  }
  if (!a.name) throw gasolineError('invalid_argument', `redaction_action:"${act}" needs name (lowercase letters, digits, _)`);
  try {
    if (act === 'remove') live.remove(a.name);
    else {
      if (!a.pattern) throw gasolineError('invalid_argument', 'redaction_action:"add" needs pattern (regex)');
      live.add({ name: a.name, pattern: a.pattern, replacement: a.replacement });
    }
  } catch (e) {
    if (e instanceof RedactionConfigError) throw gasolineError(e.code, `${e.message}; the active rules are unchanged`);
    throw e;
  }
  return ctx.text(`${act === 'add' ? 'added' : 'removed'} redaction rule "${a.name}": it applies to everything ingested from now on and to every answer`);
}

async function clear(ctx: ToolContext, a: Args): Promise<ToolResult> {
  const reader = ctx.reader();
  if ((a.scope ?? 'mine') === 'mine') {
    for (let k = 0; k < KIND_COUNT; k++) ctx.client.cursors[k] = ctx.client.summaryCursors[k] = reader.latestOrd(k);
    return ctx.text('cleared your read cursors: observe now shows only what arrives from here on (other clients and the buffers are untouched)');
  }
  // The commit lock is never waited for on main: retry on later ticks, bounded.
  for (let i = 0; i < 200; i++) {
    if (reader.tryClear(KINDS.map((_k, id) => id))) return ctx.text('DESTRUCTIVE: emptied the shared buffers for every client; cleared records are counted in health');
    await new Promise((r) => setImmediate(r));
  }
  throw gasolineError('buffers_busy', 'the buffers are busy with ingest right now; try again');
}

function checkpoint(ctx: ToolContext, a: Args): ToolResult {
  const act = a.checkpoint_action ?? 'list';
  if (act === 'list') {
    const cps = [...ctx.client.checkpoints.values()];
    return ctx.text(cps.length ? `checkpoints:\n${cps.map((c) => `${c.name} ${c.created_at}${c.restarted ? ' (before the daemon restarted)' : ''}`).join('\n')}` : 'no checkpoints; create one with checkpoint_action:"create", name:"..."');
  }
  if (!a.name) throw gasolineError('invalid_argument', `checkpoint_action:"${act}" needs name`);
  if (act === 'delete') {
    if (!ctx.client.deleteCheckpoint(a.name)) throw gasolineError('unknown_name', `no checkpoint "${a.name}"; list them with checkpoint_action:"list"`);
    return ctx.text(`deleted checkpoint "${a.name}"`);
  }
  const reader = ctx.reader();
  // throws limit_reached when the client holds the most checkpoints it may
  ctx.client.addCheckpoint(a.name, KINDS.map((_k, id) => reader.latestOrd(id)));
  return ctx.text(`checkpoint "${a.name}" created; later: analyze({target:"changes", checkpoint:"${a.name}"})`);
}

function noise(ctx: ToolContext, a: Args): ToolResult {
  const act = a.noise_action ?? 'list';
  if (act === 'list') return ctx.text(`noise rules (matching records are hidden from observe and counted):\n${ctx.client.noise.map((r) => `${r.id} ${r.field} /${r.pattern}/i${r.builtin ? ' (default)' : ''}${r.global ? ` (global, by ${r.global.by})` : ''} hits=${r.hits}`).join('\n')}`);
  if (act === 'remove') {
    if (!a.id) throw gasolineError('invalid_argument', 'noise_action:"remove" needs id (see noise_action:"list")');
    if (!ctx.client.removeNoise(a.id)) throw gasolineError('unknown_name', `no noise rule ${a.id}; list them with noise_action:"list"`);
    return ctx.text(`removed noise rule ${a.id}`);
  }
  if (!a.pattern || !a.field) throw gasolineError('invalid_argument', 'noise_action:"add" needs field (message|source|url) and pattern (regex)');
  // throws pattern_refused (not RE2, too large) or limit_reached
  if (a.scope === 'global') {
    const g = ctx.client.addGlobalNoise(a.field, a.pattern);
    return ctx.text(`added global noise rule ${g.id}: ${g.field} /${g.pattern}/i — every client hides what it matches; any client may remove it`);
  }
  const r = ctx.client.addNoise(a.field, a.pattern);
  return ctx.text(`added noise rule ${r.id}: ${r.field} /${r.pattern}/i`);
}

function store(ctx: ToolContext, a: Args): ToolResult {
  const data = ctx.client.store;
  const act = a.store_action ?? 'list';
  if (act === 'list') return ctx.text(data.size ? `store keys: ${[...data.keys()].join(', ')}` : 'store is empty');
  if (!a.key) throw gasolineError('invalid_argument', `store_action:"${act}" needs key`);
  if (act === 'get') {
    const v = data.get(a.key);
    if (v === undefined) throw gasolineError('unknown_name', `no key "${a.key}" (store_action:"list" shows keys)`);
    return ctx.text(v);
  }
  if (act === 'delete') ctx.client.storeDelete(a.key);
  else {
    if (a.value === undefined) throw gasolineError('invalid_argument', 'store_action:"set" needs value');
    // a file we write is egress too: a secret pasted into a note is not kept; throws limit_reached
    ctx.client.storeSet(a.key, ctx.redact(a.value));
  }
  return ctx.text(act === 'delete' ? `deleted "${a.key}"` : `stored "${a.key}"`);
}

/**
 * Which tabs this client sees: a page URL pattern (linear-time, like noise rules) or tab ids.
 * Every tool, the alert block and streaming then keep only those tabs; scope:"all" clears it.
 */
function tabFilter(ctx: ToolContext, a: Args): ToolResult {
  const c = ctx.client;
  if (a.scope === 'all') {
    c.setTabFilter(null);
    return ctx.text('tab filter cleared: you see every tab');
  }
  if (a.pattern !== undefined && a.tab_ids !== undefined) throw gasolineError('invalid_argument', 'tab_filter takes pattern (page URL regex) or tab_ids, not both');
  if (a.pattern !== undefined) {
    if (a.pattern.length > MAX_TAB_PATTERN) throw gasolineError('invalid_argument', `tab_filter pattern: at most ${MAX_TAB_PATTERN} characters`);
    // throws pattern_refused (not RE2, too large) before the filter changes
    c.setTabFilter({ url: a.pattern });
  } else if (a.tab_ids !== undefined) c.setTabFilter({ tab_ids: [...new Set(a.tab_ids)] });
  const f = c.tabFilter;
  const now = !f ? 'none: you see every tab' : 'url' in f ? `tabs whose page URL matches /${f.url}/i` : `tab ids ${f.tab_ids.join(', ')}`;
  return ctx.text(`tab filter: ${now}${f ? ' (observe, analyze, alerts and streaming keep only these; clear with scope:"all")' : ''}`);
}
