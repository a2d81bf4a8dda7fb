/**
 * Command answers as compact text. Everything the extension reports about the page (text, html,
 * attributes, labels, urls, titles) goes through page-text.ts: quoted, line breaks escaped, never
 * a line of its own (#18 item 2). Every answer shows page data, so every one ends with the note.
 */
import { IMPACTS, type CommandResult, type CommandType } from '../../domain/commands.js';
import { PAGE_NOTE, pageFlat, pageJson, pageText, pageWord as w } from './page-text.js';

const q = (v: unknown): string => pageText(v, Infinity);

/** `footer` (who answered) goes before the untrusted-data note, which always ends the answer. */
export function formatResult(type: CommandType, result: unknown, footer?: string): string {
  return `${render(type, result)}\n${footer ? `${footer}\n` : ''}${PAGE_NOTE}`;
}

function render(type: CommandType, result: unknown): string {
  switch (type) {
    case 'dom_query':
      return dom(result as CommandResult<'dom_query'>);
    case 'page_info':
      return pageInfo(result as CommandResult<'page_info'>);
    case 'a11y_audit':
      return a11y(result as CommandResult<'a11y_audit'>);
    case 'interact':
      return interact(result as CommandResult<'interact'>);
    case 'approval_request':
      // the gate reads the decision itself (src/mcp/tools/approval-gate.ts); shown only if fetched by id
      return `approval: the user chose ${pageFlat((result as CommandResult<'approval_request'>).decision)}`;
  }
}

function dom(r: CommandResult<'dom_query'>): string {
  const head = `dom: ${r.match_count} matched, ${r.matches.length} shown${r.match_count > r.matches.length ? ' (refine the selector for the rest)' : ''} on ${q(r.url)}`;
  const rows = r.matches.map((m, i) => {
    const { tag, id, classes, bbox, visible, selector, ...rest } = m;
    const name = `${tag}${id ? `#${id}` : ''}${classes?.length ? `.${classes.join('.')}` : ''}`;
    const box = `${Math.round(bbox.x)},${Math.round(bbox.y)} ${Math.round(bbox.width)}×${Math.round(bbox.height)}`;
    // the page chose the ids and tags it is built from, so it is quoted like all page text
    return `[${i}] ${q(name)}${selector ? ` sel=${q(selector)}` : ''} ${visible ? 'visible' : 'hidden'} box=${box} ${pageJson(rest)}`;
  });
  return [head, ...rows].join('\n');
}

function pageInfo(r: CommandResult<'page_info'>): string {
  const lines = [
    `page_info: ${q(r.url)} title=${q(r.title)}`,
    `viewport ${r.viewport.width}×${r.viewport.height}, scroll ${Math.round(r.scroll.x)},${Math.round(r.scroll.y)}, document height ${Math.round(r.document_height)}`,
    `counts: links=${r.counts.links} images=${r.counts.images} interactive=${r.counts.interactive} forms=${r.counts.forms}`,
  ];
  if (r.headings.length) lines.push(`headings: ${r.headings.map((h) => `h${h.level} ${q(h.text)}`).join(', ')}`);
  for (const f of r.forms) {
    const fields = f.fields.map((x) => `${w(x.tag)}${x.type ? `[${w(x.type)}]` : ''}${x.name ? ` name=${q(x.name)}` : x.id ? ` id=${q(x.id)}` : ''}${x.label ? ` label=${q(x.label)}` : ' (no label)'}${x.required ? ' required' : ''}`);
    lines.push(`form ${q(f.id ?? f.name ?? '')} ${w(f.method ?? 'get')} ${q(f.action ?? '')}: ${fields.join('; ')}${f.fields_truncated ? ` (+${f.fields_truncated} more)` : ''}`);
  }
  return lines.join('\n');
}

/** Targets shown per rule: the rest are counted; scope narrows an audit to see them. */
const TARGETS = 3;

function a11y(r: CommandResult<'a11y_audit'>): string {
  const total = r.violations.reduce((n, v) => n + v.node_count, 0);
  const lines = [`accessibility: ${r.violations.length} rules violated on ${total} elements (${pageFlat(r.engine)})${r.scope ? ` in ${q(r.scope)}` : ''} on ${q(r.url)}${r.cached_age_ms !== undefined ? `; cached ${Math.round(r.cached_age_ms / 1000)}s ago (force_refresh:true re-runs)` : ''}`];
  for (const impact of [...IMPACTS, null]) {
    const group = r.violations.filter((v) => v.impact === impact);
    if (!group.length) continue;
    lines.push(`## ${impact ?? 'unrated'} (${group.length})`);
    for (const v of group) {
      const tags = v.tags?.length ? ` [${v.tags.map(w).join(' ')}]` : '';
      // help_url is left out: the guide says how the id names the rule's page
      lines.push(`- ${w(v.id)}${tags}: ${q(v.help)} — ${v.node_count} element${v.node_count === 1 ? '' : 's'}`);
      // the rule's fix once; an element's own only where it says something else (contrast ratios)
      const fix = v.fix ?? v.nodes[0]?.failure_summary;
      if (fix) lines.push(`    fix: ${pageText(fix, 300)}`);
      v.nodes.slice(0, TARGETS).forEach((n, i) => {
        const own = n.failure_summary && n.failure_summary !== fix ? ` ${pageText(n.failure_summary, 200)}` : '';
        lines.push(`    ${pageText(n.selector, 200)}${i === 0 ? ` ${q(n.html)}` : ''}${own}`);
      });
      const shown = Math.min(v.nodes.length, TARGETS);
      if (v.node_count > shown) lines.push(`    … ${v.node_count - shown} more`);
    }
  }
  const c = r.counts;
  if (c) lines.push(`rules: ${r.violations.length} violated, ${c.passes} passed, ${c.incomplete} incomplete (need manual review), ${c.inapplicable} inapplicable (nothing to check)`);
  else if (r.incomplete) lines.push(`${r.incomplete} rules need manual review (incomplete)`);
  if (r.passes) lines.push(`passes (${r.passes.length}): ${r.passes.map((p) => `${w(p.id)}×${p.node_count}`).join(', ')}`);
  return lines.join('\n');
}

function interact(r: CommandResult<'interact'>): string {
  return `interact ${r.action}: done${r.detail ? ` — ${q(r.detail)}` : ''}${r.url ? `; now on ${q(r.url)}` : ''}${r.title ? ` title=${q(r.title)}` : ''}`;
}
