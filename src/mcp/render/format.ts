/**
 * One compact line per record. Every page-controlled field goes through page-text.ts (quoted,
 * line breaks and bidi controls escaped): it is data from the page, never instructions, and it
 * can never start a line of its own (#18 item 2). Only our enums, numbers and times stay bare.
 */
import { kindName } from '../../domain/kinds.js';
import type { Hit, Rec } from '../../query/index.js';
import { topFrameText, type FrameLookup } from './frames.js';
import { pageText as q, pageWord as w } from './page-text.js';

export function clock(ms: number): string {
  if (!Number.isFinite(ms)) return '--:--:--';
  return new Date(ms).toISOString().slice(11, 23);
}

/** a URL, cut at 200 characters: the path is what an agent needs; the filter finds the rest */
const host = (url: unknown): string => (typeof url === 'string' ? q(url, 200) : '');

/**
 * One record's line; with `contains`, a line that would not show the text it was found by names
 * the field and the stretch around the match (#20 item 7: a failed request's console line shows
 * method, URL and status, and omits the message that matched).
 */
export function line(h: Hit, contains?: string, frames?: FrameLookup): string {
  const l = bare(h, frames);
  return contains ? l + matchNote(h.rec, l, contains) : l;
}

/** the stretch shown either side of a match */
const AROUND = 60;

/** ` field="…match…"` for the first field whose value holds `contains` (case-insensitive), '' when `shown` already holds it. */
export function matchNote(r: Rec, shown: string, contains: string): string {
  const needle = contains.toLowerCase();
  const low = shown.toLowerCase();
  if (low.includes(needle) || low.includes(JSON.stringify(needle).slice(1, -1))) return '';
  // the message first: it is what an agent searches most, and what a network console line omits
  const keys = Object.keys(r).sort((a, b) => Number(b === 'message') - Number(a === 'message'));
  for (const k of keys) {
    if (k.startsWith('_')) continue;
    const v = (r as Record<string, unknown>)[k];
    const s = typeof v === 'string' ? v : v !== null && typeof v === 'object' ? JSON.stringify(v) : undefined;
    const at = s?.toLowerCase().indexOf(needle) ?? -1;
    if (!s || at < 0) continue;
    const from = Math.max(0, at - AROUND);
    const to = Math.min(s.length, at + needle.length + AROUND);
    return ` ${w(k)}=${q(`${from > 0 ? '…' : ''}${s.slice(from, to)}${to < s.length ? '…' : ''}`, needle.length + 2 * AROUND + 2)}`;
  }
  return '';
}

/**
 * `frames`: source-mapped positions (render/frames.ts). A log whose top frame resolved shows the
 * original position and source line in place of the generated source and frame, which it names
 * compactly after them.
 */
function bare(h: Hit, frames?: FrameLookup): string {
  const r = h.rec;
  const t = clock(h.clientTime);
  const tab = h.tab >= 0 ? ` tab=${h.tab}` : '';
  switch (kindName(h.kind)) {
    case 'logs':
    case 'ext_logs': {
      if (r.type === 'network') {
        return `${t} ${r.level?.toUpperCase()} network ${w(r.method ?? 'GET')} ${host(r.request_url)} → ${r.status ?? 'failed'}${r.error ? ` ${q(r.error, 200)}` : ''}${r.response ? ` body=${q(r.response, 300)}` : ''}${tab}`;
      }
      const args = Array.isArray(r.args) && r.args.length ? ` args=${q(r.args, 300)}` : '';
      const mapped = frames?.(r);
      if (mapped) return `${t} ${r.level?.toUpperCase()} ${r.type} ${q(r.message)}${args}${topFrameText(mapped)}${tab}`;
      const src = r.source ?? (r.filename ? `${r.filename}:${r.lineno ?? ''}` : '');
      const frame = typeof r.stack === 'string' ? ` at ${q(firstFrame(r.stack), 200)}` : '';
      return `${t} ${r.level?.toUpperCase()} ${r.type} ${q(r.message)}${args}${src ? ` (${q(src, 200)})` : ''}${frame}${tab}`;
    }
    case 'network':
      return `${t} ${w(r.method)} ${host(r.url)} → ${r.status} ${Math.round(r.duration ?? Number.NaN)}ms${r.transfer_size !== undefined ? ` ${r.transfer_size}B` : ''}${r.error ? ` ${q(r.error, 200)}` : ''}${tab}`;
    case 'network_bodies':
      return `${t} ${w(r.method)} ${host(r.url)} → ${r.status}${r.content_type ? ` [${q(r.content_type, 100)}]` : ''}${r.request_body ? ` req=${q(r.request_body, 400)}` : ''}${r.response_body ? ` res=${q(r.response_body, 600)}` : ''}${tab}`;
    case 'ws_events':
      return `${t} ws ${q(r.id, 100)} ${r.event}${r.direction ? ` ${r.direction === 'incoming' ? '←' : '→'}` : ''}${r.data !== undefined ? ` ${q(r.data, 300)}` : ''}${r.code !== undefined ? ` code=${r.code}` : ''}${r.reason ? ` ${q(r.reason, 100)}` : ''}${r.url ? ` ${host(r.url)}` : ''}${tab}`;
    case 'actions': {
      const sel = r.selectors;
      const target = sel ? (sel.test_id ? `[data-testid=${w(sel.test_id)}]` : sel.aria_label ? `[aria-label=${q(sel.aria_label, 80)}]` : sel.id ? `#${w(sel.id)}` : sel.text ? `text=${q(sel.text, 80)}` : sel.css_path ? q(sel.css_path, 200) : '') : '';
      const extra = r.type === 'navigate' ? ` ${host(r.from_url)} → ${host(r.to_url)}` : r.value !== undefined ? ` value=${q(r.value, 100)}` : r.key ? ` key=${w(r.key)}` : '';
      // the extension's dead-click verdict (#20 item 3): nothing changed within 1 s of the click
      return `${t} ${r.type}${target ? ` ${target}` : ''}${extra}${r.effect === 'none' ? ' (dead: no effect within 1 s)' : ''}${r.source === 'agent' ? ' (agent)' : ''}${tab}`;
    }
    case 'perf': {
      const timing = (r.timing ?? {}) as Rec;
      const parts = Object.entries(timing)
        .filter(([, v]) => typeof v === 'number')
        .map(([k, v]) => `${k}=${k === 'cls' ? Number(v).toFixed(3) : Math.round(Number(v))}`);
      return `${t} perf ${host(r.url)} ${parts.join(' ')}${tab}`;
    }
  }
}

function firstFrame(stack: string): string {
  const l = stack.split('\n').find((x, i) => i > 0 && x.trim().startsWith('at '));
  return (l ?? '').trim().slice(3);
}

/** The record's text for `contains` matching. */
export function text(r: Rec): string {
  return JSON.stringify(r);
}
