/**
 * Runs inside the page after vendor/axe.min.js was injected into the same (ISOLATED) world.
 * Self-contained for chrome.scripting.executeScript; axe's result is mapped to plain, bounded
 * data there, because Chrome structured-clones what the function returns.
 */

export interface AxeArgs {
  scope?: string;
  tags?: string[];
  include_passes?: boolean;
}

export interface AxeLimits {
  rules: number;
  nodesPerRule: number;
  html: number;
  passes: number;
}

export function pageAxeLoaded(): boolean {
  return typeof (globalThis as { axe?: unknown }).axe === 'object';
}

interface AxeNode {
  target: unknown[];
  html: string;
  failureSummary?: string;
}
interface AxeRule {
  id: string;
  impact?: string | null;
  help: string;
  helpUrl?: string;
  nodes: AxeNode[];
}

export async function pageAxeRun(p: AxeArgs, L: AxeLimits): Promise<unknown> {
  const axe = (globalThis as { axe?: { version: string; run(ctx: unknown, opts: unknown): Promise<{ violations: AxeRule[]; passes: AxeRule[]; incomplete: AxeRule[] }> } }).axe;
  if (!axe) return { error: 'command_failed: axe-core did not load into the page' };
  // the ellipsis counts: a clipped string is exactly n characters
  const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  let context: unknown = document;
  if (p.scope) {
    try {
      if (!document.querySelector(p.scope)) return { error: `invalid_params: scope ${JSON.stringify(p.scope)} matches no element` };
    } catch (e) {
      return { error: `invalid_params: scope ${JSON.stringify(p.scope)} is not valid CSS (${(e as Error).message})` };
    }
    context = p.scope;
  }
  const opts: Record<string, unknown> = { resultTypes: ['violations'] };
  if (p.tags?.length) opts.runOnly = { type: 'tag', values: p.tags };
  let res: Awaited<ReturnType<typeof axe.run>>;
  try {
    res = await axe.run(context, opts);
  } catch (e) {
    return { error: `command_failed: axe-core: ${(e as Error).message}` };
  }
  const impacts = ['critical', 'serious', 'moderate', 'minor'];
  const out: Record<string, unknown> = {
    url: location.href.slice(0, 8192),
    engine: `axe-core ${axe.version}`,
    violations: res.violations.slice(0, L.rules).map((v) => ({
      id: clip(v.id, 120),
      impact: v.impact && impacts.includes(v.impact) ? v.impact : null,
      help: clip(v.help, 490),
      ...(v.helpUrl ? { help_url: clip(v.helpUrl, 490) } : {}),
      node_count: v.nodes.length,
      nodes: v.nodes.slice(0, L.nodesPerRule).map((n) => ({
        // a target is a list: one selector per shadow root on the way down
        selector: clip(n.target.map((t) => (Array.isArray(t) ? t.join(' ') : String(t))).join(' >>> '), 990),
        html: clip(n.html, L.html),
        failure_summary: clip(n.failureSummary ?? '', 1990),
      })),
    })),
    incomplete: res.incomplete.length,
  };
  if (p.scope) out.scope = p.scope;
  if (p.include_passes) out.passes = res.passes.slice(0, L.passes).map((r) => ({ id: clip(r.id, 120), node_count: r.nodes.length }));
  return out;
}
