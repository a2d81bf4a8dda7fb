/**
 * The on-demand commands the server may send (src/domain/commands.ts holds the server's side of
 * the same contract): dom_query, page_info, a11y_audit, interact. Each runs in the target tab
 * through chrome.scripting; axe-core is injected only when an audit is asked for. interact is
 * refused unless the user turned on "Allow agent control" in the popup, and each mutating action
 * is emitted into the normal batch stream as an action record with source "agent".
 */
import type { CommandContext, CommandRegistry } from './commands.js';
import type { Tracking } from './tracking.js';
import type { Settings } from '../shared/settings.js';
import { AGENT_MARK, type WireRecord } from '../shared/protocol.js';
import { pageDomQuery, pagePageInfo, type DomLimits } from './page/dom.js';
import { pageAxeLoaded, pageAxeRun, type AxeLimits } from './page/axe.js';
import { pageAct, type ActArgs, type ActDone } from './page/act.js';

export interface HandlerDeps {
  settings(): Settings;
  tracking: Tracking;
  /** hands agent action records to the transport, like captured records */
  emitActions(tabId: number, pageUrl: string, actions: WireRecord[]): void;
}

/** Same numbers as the server's schema (src/domain/commands.ts LIMITS); it rejects anything above. */
const DOM_LIMITS: DomLimits = { matches: 50, text: 500, childText: 100, children: 20, depth: 5, attributes: 30, forms: 20, fields: 50, headings: 50 };
const AXE_LIMITS: AxeLimits = { rules: 100, nodesPerRule: 10, html: 200, passes: 200, tags: 12, fix: 240 };
const AXE_CACHE_MS = 30_000;
const AXE_CACHE_MAX = 20;
const VALUE_MAX = 256;

class CommandError extends Error {
  constructor(code: string, message: string) {
    super(message);
    // The registry sends `${name}: ${message}`; the server reads the code back from the name.
    this.name = code;
  }
}

const fail = (code: string, message: string): never => {
  throw new CommandError(code, message);
};

function str(v: unknown, field: string, max: number, required = false): string | undefined {
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) return fail('invalid_params', `${field} must be a string of 1..${max} characters`);
  return v;
}

function obj(params: unknown): Record<string, unknown> {
  return params && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
}

export function registerHandlers(commands: CommandRegistry, deps: HandlerDeps): { targetTab: (ctx: CommandContext) => Promise<chrome.tabs.Tab & { id: number }> } {
  /** The tab to act on: the one the server named, else the active tracked web page. Only tracked tabs are ours to read. */
  async function targetTab(ctx: CommandContext): Promise<chrome.tabs.Tab & { id: number }> {
    let tab: chrome.tabs.Tab | undefined;
    if (ctx.tabId !== undefined) {
      tab = await chrome.tabs.get(ctx.tabId).catch(() => undefined);
      if (!tab) fail('command_failed', `no tab ${ctx.tabId}; observe({what:"page"}) shows the tracked one`);
    } else {
      const web = (await chrome.tabs.query({ url: ['http://*/*', 'https://*/*'] })).filter((t) => deps.tracking.isTracked(t.id));
      // prefer the active tab of the focused window, then the most recently used tracked tab
      tab = web.find((t) => t.active) ?? web.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0))[0];
      if (!tab) fail('command_failed', 'no tracked web page to run on: open the app in a tab and track it in the Gasoline popup');
    }
    if (!deps.tracking.isTracked(tab!.id)) fail('command_failed', `tab ${tab!.id} is not tracked: ask the user to track it in the Gasoline popup`);
    if (!/^https?:/.test(tab!.url ?? '')) fail('command_failed', `tab ${tab!.id} shows ${JSON.stringify((tab!.url ?? '').slice(0, 100))}, not a web page`);
    return tab as chrome.tabs.Tab & { id: number };
  }

  async function inPage<A extends unknown[], R>(tabId: number, func: (...args: A) => R, args: A): Promise<Awaited<R>> {
    const [res] = await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, func: func as never, args: args as never });
    const v = res?.result as Awaited<R> | { error: string } | undefined;
    if (v === undefined || v === null) fail('command_failed', 'the page returned nothing (it may be navigating); retry');
    if (typeof v === 'object' && v !== null && 'error' in v && typeof v.error === 'string') {
      const m = /^([a-z_]+): ([\s\S]*)$/.exec(v.error);
      fail(m ? m[1]! : 'command_failed', m ? m[2]! : v.error);
    }
    return v as Awaited<R>;
  }

  commands.register('dom_query', async (params, ctx) => {
    const p = obj(params);
    const tab = await targetTab(ctx);
    const props = Array.isArray(p.properties) ? p.properties.filter((x): x is string => typeof x === 'string' && x.length <= 64).slice(0, 30) : undefined;
    const args = {
      selector: str(p.selector, 'selector', 1000, true)!,
      include_styles: p.include_styles === true,
      include_children: p.include_children === true,
      max_depth: typeof p.max_depth === 'number' ? p.max_depth : 2,
      ...(props ? { properties: props } : {}),
    };
    return inPage(tab.id, pageDomQuery, [args, DOM_LIMITS]);
  });

  commands.register('page_info', async (_params, ctx) => {
    const tab = await targetTab(ctx);
    return inPage(tab.id, pagePageInfo, [DOM_LIMITS]);
  });

  const axeCache = new Map<string, { at: number; result: Record<string, unknown> }>();
  commands.register('a11y_audit', async (params, ctx) => {
    const p = obj(params);
    const tab = await targetTab(ctx);
    const tags = Array.isArray(p.tags) ? p.tags.filter((x): x is string => typeof x === 'string' && x.length <= 40).slice(0, 20) : undefined;
    const args = { ...(p.scope !== undefined ? { scope: str(p.scope, 'scope', 1000)! } : {}), ...(tags?.length ? { tags } : {}), include_passes: p.include_passes === true };
    const key = JSON.stringify([tab.url, args]);
    const hit = axeCache.get(key);
    if (hit && p.force_refresh !== true && Date.now() - hit.at < AXE_CACHE_MS) return { ...hit.result, cached_age_ms: Date.now() - hit.at };
    // ~650 KB: injected on demand, once per document, never on page load.
    const [loaded] = await chrome.scripting.executeScript({ target: { tabId: tab.id, frameIds: [0] }, func: pageAxeLoaded });
    if (loaded?.result !== true) await chrome.scripting.executeScript({ target: { tabId: tab.id, frameIds: [0] }, files: ['vendor/axe.min.js'] });
    if (ctx.signal.aborted) fail('command_timeout', 'aborted at the deadline');
    const result = (await inPage(tab.id, pageAxeRun, [args, AXE_LIMITS])) as Record<string, unknown>;
    axeCache.delete(key);
    axeCache.set(key, { at: Date.now(), result });
    if (axeCache.size > AXE_CACHE_MAX) axeCache.delete(axeCache.keys().next().value as string);
    return result;
  });

  commands.register('interact', async (params, ctx) => {
    const p = obj(params);
    if (!deps.settings().allow_agent_control) {
      fail('agent_control_off', 'agent control is off in the Gasoline extension. Ask the user to open the Gasoline popup and switch on "Allow agent control", then retry.');
    }
    const tab = await targetTab(ctx);
    const action = p.action;
    const record = (r: Omit<WireRecord, 'ts' | 'source'>, url: string): void => {
      if (deps.tracking.isTracked(tab.id)) deps.emitActions(tab.id, url, [{ ts: Date.now(), ...r, source: 'agent' }]);
    };
    switch (action) {
      case 'navigate':
      case 'refresh':
      case 'back':
      case 'forward': {
        const from = tab.url ?? '';
        const url = action === 'navigate' ? str(p.url, 'url', 8192, true)! : undefined;
        if (url !== undefined && !/^https?:\/\//i.test(url)) fail('invalid_params', 'navigate only to http(s) URLs');
        const after = await navigate(tab.id, action, url, ctx.signal);
        record({ type: 'navigate', url: from, from_url: from, to_url: after.url ?? '' }, from);
        return { action, url: (after.url ?? '').slice(0, 8192), title: (after.title ?? '').slice(0, 1024), detail: `${action} finished loading` };
      }
      case 'click':
      case 'type':
      case 'select':
      case 'scroll_to':
      case 'wait_for': {
        const args: ActArgs = { action, selector: str(p.selector, 'selector', 1000, true)! };
        if (p.text !== undefined) args.text = str(p.text, 'text', 10_000)!;
        if (p.value !== undefined) args.value = str(p.value, 'value', 1000)!;
        if (typeof p.timeout_ms === 'number') args.timeout_ms = Math.min(Math.max(p.timeout_ms, 100), 30_000);
        const done = (await inPage(tab.id, pageAct, [args, AGENT_MARK])) as ActDone;
        if (action === 'click') record({ type: 'click', url: done.url, selectors: done.selectors }, done.url);
        if (action === 'type' || action === 'select') record({ type: action === 'type' ? 'input' : 'select', url: done.url, selectors: done.selectors, value: done.sensitive ? '[redacted]' : (done.value ?? '').slice(0, VALUE_MAX) }, done.url);
        if (action === 'scroll_to') record({ type: 'scroll', url: done.url, selectors: done.selectors, scroll_y: done.scroll_y }, done.url);
        return { action, url: done.url, title: done.title, detail: done.detail };
      }
      default:
        return fail('invalid_params', `unknown action ${JSON.stringify(action)}`);
    }
  });
  // approvals name the tab an action would run on, chosen exactly as the action would choose it
  return { targetTab };
}

/**
 * Starts a navigation and waits until the tab has loaded again. A same-document history step
 * (pushState) never reports "loading", so a step that stays complete for a moment counts too.
 */
async function navigate(tabId: number, how: 'navigate' | 'refresh' | 'back' | 'forward', url: string | undefined, signal: AbortSignal): Promise<chrome.tabs.Tab> {
  let sawLoading = false;
  const onUpdated = (id: number, info: { status?: string }): void => {
    if (id === tabId && info.status === 'loading') sawLoading = true;
  };
  chrome.tabs.onUpdated.addListener(onUpdated);
  try {
    try {
      if (how === 'navigate') await chrome.tabs.update(tabId, { url: url! });
      else if (how === 'refresh') await chrome.tabs.reload(tabId);
      else if (how === 'back') await chrome.tabs.goBack(tabId);
      else await chrome.tabs.goForward(tabId);
    } catch (e) {
      fail('command_failed', `${how}: ${(e as Error).message}`);
    }
    const t0 = Date.now();
    for (;;) {
      if (signal.aborted) fail('command_timeout', `${how} did not finish loading before the deadline`);
      const tab = await chrome.tabs.get(tabId);
      if (tab.status === 'complete' && (sawLoading || Date.now() - t0 > 1000)) return tab;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    chrome.tabs.onUpdated.removeListener(onUpdated);
  }
}
