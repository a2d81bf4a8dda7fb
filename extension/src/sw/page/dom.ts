/**
 * Functions Chrome runs inside the page (chrome.scripting.executeScript `func`). Chrome sends
 * their source text, not a closure: each must be self-contained — no imports, no outer
 * variables; limits arrive as arguments. They run in the ISOLATED world, so the page's own
 * scripts cannot see or patch them.
 */

export interface DomLimits {
  matches: number;
  text: number;
  childText: number;
  children: number;
  depth: number;
  attributes: number;
  forms: number;
  fields: number;
  headings: number;
}

export interface DomQueryArgs {
  selector: string;
  include_styles?: boolean;
  include_children?: boolean;
  max_depth?: number;
  properties?: string[];
}

export type PageError = { error: string };

export function pageDomQuery(p: DomQueryArgs, L: DomLimits): unknown {
  let list: NodeListOf<Element>;
  try {
    list = document.querySelectorAll(p.selector);
  } catch (e) {
    return { error: `invalid_params: selector ${JSON.stringify(p.selector)} is not valid CSS (${(e as Error).message})` };
  }
  // The layout subset: what decides where and whether an element shows.
  const LAYOUT = ['display', 'position', 'visibility', 'opacity', 'width', 'height', 'top', 'left', 'right', 'bottom', 'margin', 'padding', 'border-width', 'box-sizing', 'overflow', 'z-index', 'float', 'flex-direction', 'flex-wrap', 'justify-content', 'align-items', 'gap', 'grid-template-columns', 'transform', 'pointer-events', 'color', 'background-color', 'font-size'];
  const clip = (s: string, n: number): string => (s.length > n ? s.slice(0, n) : s);
  const norm = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();
  const classes = (el: Element): string[] | undefined => (el.classList.length ? [...el.classList].slice(0, 20).map((c) => clip(c, 128)) : undefined);
  const sensitive = (el: Element): boolean => el instanceof HTMLInputElement && (el.type === 'password' || /cc-|card|cvc|cvv/i.test(`${el.name} ${el.autocomplete} ${el.id}`));
  const depthMax = Math.min(Math.max(p.max_depth ?? 2, 1), L.depth);
  const esc = (v: string): string => CSS.escape(v);
  /** exactly this element, and nothing else in the document right now */
  const only = (sel: string, el: Element): boolean => {
    try {
      const all = document.querySelectorAll(sel);
      return all.length === 1 && all[0] === el;
    } catch {
      return false;
    }
  };
  /**
   * A selector `interact` can take next: the id when it is unique, else a test id, else the
   * shortest tail of a tag:nth-of-type path (anchored at the nearest ancestor with a unique id)
   * that matches this element alone. Checked against the document, not assumed. Each check scans
   * the document, so only the first TAIL_CHECKS tails are tried; past them the path runs up to an
   * anchor or the root, unique by construction, and is checked once.
   */
  const TAIL_CHECKS = 4;
  const uniqueSelector = (el: Element): string | undefined => {
    if (el.id && only(`#${esc(el.id)}`, el)) return `#${esc(el.id)}`;
    for (const a of ['data-testid', 'data-test', 'data-cy']) {
      const v = el.getAttribute(a);
      if (v && v.length <= 200 && only(`[${a}="${esc(v)}"]`, el)) return `[${a}="${esc(v)}"]`;
    }
    const steps: string[] = [];
    for (let cur: Element | null = el; cur; cur = cur.parentElement) {
      if (cur !== el && cur.id && document.getElementById(cur.id) === cur && only(`#${esc(cur.id)}`, cur)) {
        steps.push(`#${esc(cur.id)}`);
        break;
      }
      const parent = cur.parentElement;
      const same = parent ? [...parent.children].filter((k) => k.tagName === cur!.tagName) : [];
      steps.push(same.length > 1 ? `${esc(cur.localName)}:nth-of-type(${same.indexOf(cur) + 1})` : esc(cur.localName));
      const tail = [...steps].reverse().join(' > ');
      if (tail.length > 1000) return undefined;
      if (steps.length <= TAIL_CHECKS && only(tail, el)) return tail;
    }
    const path = steps.reverse().join(' > ');
    return path.length <= 1000 && only(path, el) ? path : undefined;
  };
  const child = (el: Element, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = { tag: clip(el.tagName.toLowerCase(), 64) };
    if (el.id) out.id = clip(el.id, 256);
    const c = classes(el);
    if (c) out.classes = c;
    const t = clip(norm(el.textContent), L.childText);
    if (t) out.text = t;
    if (depth > 1 && el.children.length) {
      out.children = [...el.children].slice(0, L.children).map((k) => child(k, depth - 1));
      if (el.children.length > L.children) out.children_truncated = el.children.length - L.children;
    }
    return out;
  };

  const matches = [...list].slice(0, L.matches).map((el) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const out: Record<string, unknown> = {
      tag: clip(el.tagName.toLowerCase(), 64),
      bbox: { x: r.x, y: r.y, width: r.width, height: r.height },
      visible: r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none' && Number(cs.opacity) > 0,
    };
    if (el.id) out.id = clip(el.id, 256);
    const c = classes(el);
    if (c) out.classes = c;
    const unique = uniqueSelector(el);
    if (unique) out.selector = unique;
    // biome-ignore lint/performance/useDomNodeTextContent: the agent asks what the user sees; innerText drops hidden text and keeps line breaks
    const full = norm(el instanceof HTMLElement ? el.innerText : el.textContent);
    if (full) out.text = clip(full, L.text);
    if (full.length > L.text) out.text_truncated = true;
    const attrs: Record<string, string> = {};
    let n = 0;
    for (const a of el.attributes) {
      if (a.name === 'id' || a.name === 'class' || a.name === 'style') continue;
      if (n++ >= L.attributes) break;
      attrs[clip(a.name, 128)] = a.name === 'value' && sensitive(el) ? '[redacted]' : clip(a.value, L.text);
    }
    if (n) out.attributes = attrs;
    if (p.include_styles || p.properties?.length) {
      const styles: Record<string, string> = {};
      for (const prop of p.properties?.length ? p.properties : LAYOUT) styles[prop] = clip(cs.getPropertyValue(prop), 500);
      out.styles = styles;
    }
    if (p.include_children && el.children.length) {
      out.children = [...el.children].slice(0, L.children).map((k) => child(k, depthMax));
      if (el.children.length > L.children) out.children_truncated = el.children.length - L.children;
    }
    return out;
  });
  return { url: clip(location.href, 8192), title: clip(document.title, 1024), match_count: list.length, matches };
}

export function pagePageInfo(L: DomLimits): unknown {
  const clip = (s: string, n: number): string => (s.length > n ? s.slice(0, n) : s);
  const norm = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();
  const labelOf = (el: Element): string | undefined => {
    const own = el.getAttribute('aria-label') ?? (el as HTMLInputElement).labels?.[0]?.textContent ?? null;
    const byId = el.getAttribute('aria-labelledby');
    const text = norm(own ?? (byId ? document.getElementById(byId)?.textContent ?? null : null));
    return text ? clip(text, 200) : undefined;
  };
  const forms = [...document.forms].slice(0, L.forms).map((f) => {
    const all = [...f.elements].filter((e) => !(e instanceof HTMLFieldSetElement) && !(e instanceof HTMLObjectElement) && !(e instanceof HTMLOutputElement));
    const fields = all.slice(0, L.fields).map((e) => {
      const x: Record<string, unknown> = { tag: clip(e.tagName.toLowerCase(), 32) };
      const type = e.getAttribute('type') ?? (e instanceof HTMLButtonElement ? 'submit' : undefined);
      if (type) x.type = clip(type, 32);
      const name = e.getAttribute('name');
      if (name) x.name = clip(name, 256);
      if (e.id) x.id = clip(e.id, 256);
      const label = labelOf(e);
      if (label) x.label = label;
      else if (e instanceof HTMLButtonElement && norm(e.textContent)) x.label = clip(norm(e.textContent), 200);
      if ((e as HTMLInputElement).required) x.required = true;
      return x;
    });
    const out: Record<string, unknown> = { fields };
    if (f.id) out.id = clip(f.id, 256);
    const name = f.getAttribute('name') ?? f.getAttribute('aria-label');
    if (name) out.name = clip(name, 256);
    out.action = clip(f.action, 2048);
    out.method = clip(f.method, 16);
    if (all.length > L.fields) out.fields_truncated = all.length - L.fields;
    return out;
  });
  const headings = [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].slice(0, L.headings).map((h) => ({ level: Number(h.tagName[1]), text: clip(norm(h.textContent), 200) }));
  const interactive = document.querySelectorAll('a[href],button,input:not([type=hidden]),select,textarea,summary,[tabindex]:not([tabindex="-1"]),[contenteditable=""],[contenteditable=true],[role=button],[role=link],[role=checkbox],[role=tab],[role=menuitem]').length;
  return {
    url: clip(location.href, 8192),
    title: clip(document.title, 1024),
    viewport: { width: innerWidth, height: innerHeight },
    scroll: { x: scrollX, y: scrollY },
    document_height: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0),
    forms,
    headings,
    counts: { links: document.querySelectorAll('a[href]').length, images: document.images.length, interactive, forms: document.forms.length },
  };
}
