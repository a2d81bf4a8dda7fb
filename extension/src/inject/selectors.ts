/** Several ways to find an element again; agents and test writers prefer different ones. */
import type { Json } from '../shared/protocol.js';

const TEST_ID_ATTRS = ['data-testid', 'data-test-id', 'data-test', 'data-cy', 'data-qa'];
const TEXT_MAX = 80;

const IMPLICIT_ROLE: Record<string, string> = {
  a: 'link',
  button: 'button',
  select: 'combobox',
  textarea: 'textbox',
  form: 'form',
  img: 'img',
  nav: 'navigation',
  main: 'main',
  h1: 'heading',
  h2: 'heading',
  h3: 'heading',
  li: 'listitem',
  option: 'option',
};

const INPUT_ROLE: Record<string, string> = {
  button: 'button',
  submit: 'button',
  reset: 'button',
  checkbox: 'checkbox',
  radio: 'radio',
  range: 'slider',
  search: 'searchbox',
};

function role(el: Element): string | undefined {
  const explicit = el.getAttribute('role');
  if (explicit) return explicit;
  const tag = el.tagName.toLowerCase();
  if (tag === 'input') return INPUT_ROLE[(el as HTMLInputElement).type] ?? 'textbox';
  if (tag === 'a' && !el.hasAttribute('href')) return undefined;
  return IMPLICIT_ROLE[tag];
}

/** Visible text only where it names the element; never an editable element's content. */
const NAMED_BY_TEXT = new Set(['a', 'button', 'label', 'summary', 'option', 'legend', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'th', 'td', 'li', 'span']);
const TEXT_ROLES = new Set(['button', 'link', 'tab', 'menuitem', 'option', 'checkbox', 'radio', 'switch', 'treeitem', 'heading']);

function text(el: Element): string | undefined {
  const tag = el.tagName.toLowerCase();
  if ((el as HTMLElement).isContentEditable) return undefined;
  // A container's text is everything in it (including what the user typed into labels' fields).
  if (!NAMED_BY_TEXT.has(tag) && !TEXT_ROLES.has(el.getAttribute('role') ?? '')) return undefined;
  const t = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
  return t ? t.slice(0, TEXT_MAX) : undefined;
}

function cssEscape(s: string): string {
  return typeof CSS !== 'undefined' && CSS.escape ? CSS.escape(s) : s.replace(/[^\w-]/g, '\\$&');
}

function cssPath(el: Element): string {
  const parts: string[] = [];
  let cur: Element | null = el;
  for (let depth = 0; cur && cur.nodeType === 1 && depth < 6; depth++) {
    const tag = cur.tagName.toLowerCase();
    if (cur.id) {
      parts.unshift(`${tag}#${cssEscape(cur.id)}`);
      break;
    }
    const parent: Element | null = cur.parentElement;
    let part = tag;
    if (parent) {
      const same = Array.from(parent.children).filter((c) => c.tagName === cur!.tagName);
      if (same.length > 1) part += `:nth-of-type(${same.indexOf(cur) + 1})`;
    }
    parts.unshift(part);
    if (tag === 'body' || tag === 'html') break;
    cur = parent;
  }
  return parts.join(' > ');
}

export function selectorsFor(el: Element): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const a of TEST_ID_ATTRS) {
    const v = el.getAttribute(a);
    if (v) {
      out.test_id = v;
      break;
    }
  }
  const aria = el.getAttribute('aria-label');
  if (aria) out.aria_label = aria.slice(0, TEXT_MAX);
  const r = role(el);
  if (r) out.role = r;
  if (el.id) out.id = el.id;
  const t = text(el);
  if (t) out.text = t;
  out.css_path = cssPath(el);
  return out;
}
