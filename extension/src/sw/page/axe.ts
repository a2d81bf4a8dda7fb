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
  /** tags kept per rule */
  tags: number;
  /** the rule's shortened fix text */
  fix: number;
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
  tags?: string[];
  nodes: AxeNode[];
}

export async function pageAxeRun(p: AxeArgs, L: AxeLimits): Promise<unknown> {
  const axe = (globalThis as { axe?: { version: string; run(ctx: unknown, opts: unknown): Promise<{ violations: AxeRule[]; passes: AxeRule[]; incomplete: AxeRule[]; inapplicable: AxeRule[] }> } }).axe;
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
  // axe words a failure as "Fix any of the following:\n  reason\n  reason…"; one line of
  // reasons is what the agent acts on, and every character of it is paid on every audit
  const shortFix = (summary: string | undefined, n: number): string => {
    const sections: Array<{ head: string; items: string[] }> = [];
    for (const raw of (summary ?? '').split('\n')) {
      const line = raw.trim();
      if (!line) continue;
      const head = /^Fix (any|all) of the following:?$/i.exec(line);
      if (head || !sections.length) sections.push({ head: head ? `${head[1]!.toLowerCase()} of:` : '', items: [] });
      if (!head) sections[sections.length - 1]!.items.push(line);
    }
    // whole reasons while they fit, the rest counted; a single reason needs no "any of:"
    const joined = (items: string[], room: number): string => {
      let out = '';
      let i = 0;
      for (; i < items.length; i++) {
        const next = out ? `${out}; ${items[i]}` : items[i]!;
        if (out && next.length > room - 12) break;
        out = next;
      }
      return i < items.length ? `${out} (+${items.length - i} more)` : out;
    };
    const kept = sections.filter((x) => x.items.length);
    const room = Math.floor(n / Math.max(kept.length, 1));
    return clip(kept.map((x) => (x.items.length > 1 && x.head ? `${x.head} ${joined(x.items, room - x.head.length - 1)}` : joined(x.items, room))).join(' — '), n);
  };
  // the criteria an agent can cite (wcag2aa, wcag143…) and best-practice; not axe's other catalogues
  const criteria = (tags: string[] | undefined): string[] => (tags ?? []).filter((t) => /^(wcag|best-practice$)/.test(t)).slice(0, L.tags).map((t) => clip(t, 40));
  const out: Record<string, unknown> = {
    url: location.href.slice(0, 8192),
    engine: `axe-core ${axe.version}`,
    violations: res.violations.slice(0, L.rules).map((v) => ({
      id: clip(v.id, 120),
      impact: v.impact && impacts.includes(v.impact) ? v.impact : null,
      help: clip(v.help, 490),
      ...(v.helpUrl ? { help_url: clip(v.helpUrl.replace(/\?application=axeAPI$/, ''), 490) } : {}),
      tags: criteria(v.tags),
      fix: shortFix(v.nodes[0]?.failureSummary, L.fix),
      node_count: v.nodes.length,
      nodes: v.nodes.slice(0, L.nodesPerRule).map((n) => ({
        // a target is a list: one selector per shadow root on the way down
        selector: clip(n.target.map((t) => (Array.isArray(t) ? t.join(' ') : String(t))).join(' >>> '), 990),
        html: clip(n.html, L.html),
        failure_summary: shortFix(n.failureSummary, L.fix),
      })),
    })),
    incomplete: res.incomplete.length,
    counts: { passes: res.passes.length, incomplete: res.incomplete.length, inapplicable: res.inapplicable.length },
  };
  if (p.scope) out.scope = p.scope;
  if (p.include_passes) out.passes = res.passes.slice(0, L.passes).map((r) => ({ id: clip(r.id, 120), node_count: r.nodes.length }));
  return out;
}
