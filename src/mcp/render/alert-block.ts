/**
 * observe's alert block: the passive alerts as text. Titles and details carry page text (a
 * console message, a URL, a WebSocket close reason), so each is one quoted literal from
 * page-text.ts and a page can never start a line here (#18 item 2). Synthesis (folding, compound
 * alerts, order) is the domain's, in src/domain/alerts/buffer.ts.
 */
import type { Alert } from '../../domain/alerts/alert.js';
import { foldKey, synthesize, type SynthesizedAlert } from '../../domain/alerts/buffer.js';
import { pageText as q } from './page-text.js';

/**
 * The second text block of an observe result ('' when there is nothing to say), at most
 * `maxChars` long: what does not fit is returned, to wait for the next observe.
 */
export function formatAlerts(alerts: readonly Alert[], maxChars = Infinity): { text: string; rest: SynthesizedAlert[]; shown: Set<string> } {
  if (alerts.length === 0) return { text: '', rest: [], shown: new Set() };
  const list = synthesize(alerts);
  const head: string[] = [`--- ALERTS (${list.length}) ---`];
  if (list.length > 3) {
    const byCat = new Map<string, number>();
    for (const a of list) byCat.set(a.category, (byCat.get(a.category) ?? 0) + 1);
    head.push(`${list.length} alerts: ${[...byCat].map(([c, n]) => `${n} ${c}`).join(', ')}`);
  }
  const lines = [...head];
  let size = lines.join('\n').length;
  let shown = 0;
  for (const a of list) {
    const count = a.count > 1 ? ` ×${a.count}` : '';
    // a new error's original frame (source-mapped, src/mcp/alerts.ts) comes before the generated detail
    const at = typeof a.context?.at === 'string' ? ` at ${q(a.context.at, 220)}${typeof a.context.code === 'string' ? ` code=${q(a.context.code, 160)}` : ''} —` : '';
    let entry = `[${a.severity}] ${a.category}: ${q(a.title, 200)}${count} —${at} ${q(a.detail, 1000)}${a.url && !a.detail.includes(a.url) ? ` (${q(a.url, 300)})` : ''} · ${a.timestamp} · ${a.correlation_id}`;
    if (a.related) entry += `\n    with ${a.related.category}: ${q(a.related.title, 200)} — ${q(a.related.detail, 1000)}`;
    // the most severe alert is always shown, cut if it must be; the rest only whole
    if (shown > 0 && size + 1 + entry.length > maxChars - 60) break;
    if (shown === 0 && size + 1 + entry.length > maxChars) entry = `${entry.slice(0, Math.max(40, maxChars - size - 2))}…`;
    lines.push(entry);
    size += 1 + entry.length;
    shown++;
  }
  const rest = list.slice(shown);
  if (rest.length) lines.push(`+${rest.length} more alert${rest.length === 1 ? '' : 's'}: observe again to see ${rest.length === 1 ? 'it' : 'them'}`);
  // which originals the shown entries stand for (a compound stands for both of its parts)
  const keys = new Set<string>();
  for (const a of list.slice(0, shown)) {
    keys.add(foldKey(a));
    if (a.related) keys.add(foldKey(a.related));
  }
  return { text: lines.join('\n'), rest, shown: keys };
}
