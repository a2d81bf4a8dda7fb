/**
 * The in-page half of interact (click, type, select, scroll_to, wait_for). Self-contained for
 * chrome.scripting.executeScript. While it dispatches events it sets the attribute `mark` on
 * <html>, so the page hook can tell these synthetic events from the user's and leave them to the
 * service worker, which records them as source "agent". Scrolls are trusted events even when a
 * script causes them, so for those the hook looks at the mark alone (and a user's own scroll in
 * that second is not recorded: the price of not reporting the agent's as the user's).
 */

export interface ActArgs {
  action: 'click' | 'type' | 'select' | 'scroll_to' | 'wait_for';
  selector: string;
  text?: string;
  value?: string;
  timeout_ms?: number;
}

export interface ActDone {
  detail: string;
  url: string;
  title: string;
  /** what the action record says about the element */
  selectors: Record<string, string>;
  sensitive: boolean;
  scroll_y: number;
  value?: string;
}

export async function pageAct(p: ActArgs, mark: string): Promise<ActDone | { error: string }> {
  const clip = (s: string, n: number): string => (s.length > n ? s.slice(0, n) : s);
  const find = (): Element | null | { error: string } => {
    try {
      return document.querySelector(p.selector);
    } catch (e) {
      return { error: `invalid_params: selector ${JSON.stringify(p.selector)} is not valid CSS (${(e as Error).message})` };
    }
  };
  let el = find();
  if (el && 'error' in el) return el;
  if (p.action === 'wait_for') {
    const limit = p.timeout_ms ?? 5000;
    const t0 = Date.now();
    while (!el && Date.now() - t0 < limit) {
      await new Promise((r) => setTimeout(r, 50));
      el = find() as Element | null;
    }
    if (!el) return { error: `command_timeout: no element matched ${JSON.stringify(p.selector)} within ${limit} ms` };
  }
  if (!el) return { error: `command_failed: no element matches ${JSON.stringify(p.selector)}` };
  const target = el as Element;
  const describe = (): Record<string, string> => {
    const s: Record<string, string> = { css_path: clip(p.selector, 1000) };
    const testId = target.getAttribute('data-testid');
    if (testId) s.test_id = clip(testId, 200);
    if (target.id) s.id = clip(target.id, 200);
    const aria = target.getAttribute('aria-label');
    if (aria) s.aria_label = clip(aria, 200);
    const text = (target.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (text) s.text = clip(text, 80);
    return s;
  };
  // the same judgement as the page hook's isSensitiveField (inject/actions.ts), restated here
  // because this function's source text travels alone
  const sensitive =
    (target as HTMLInputElement).type === 'password' ||
    /^(cc-|current-password|new-password|one-time-code)/i.test(target.getAttribute('autocomplete') ?? '') ||
    ['name', 'id', 'aria-label', 'placeholder', 'data-testid'].some((a) => /pass(word|wd|code)?|pwd|secret|token|card|cc-?(num|number|csc|cvc|exp)|cvv|cvc|credit|iban|ssn|security.?code|pin\b/i.test(target.getAttribute(a) ?? ''));
  const done = (detail: string, value?: string): ActDone => ({ detail: clip(detail, 500), url: clip(location.href, 8192), title: clip(document.title, 1024), selectors: describe(), sensitive, scroll_y: Math.round(scrollY), ...(value !== undefined ? { value } : {}) });
  if (p.action === 'wait_for') return done(`matched ${document.querySelectorAll(p.selector).length} element(s)`);

  // The mark holds an expiry time (epoch ms), not just presence: scroll events fire at the next
  // rendered frame, after this function has returned — on a loaded machine hundreds of ms later —
  // (focus() and click() scroll too), so every action keeps the window open for a second. Overlapping actions only
  // ever extend it. Nothing here is awaited: a click on a link unloads the page, and the answer
  // must not wait on a document that is going away.
  const root = document.documentElement;
  const hold = (ms: number): void => {
    const until = Math.max(Number(root.getAttribute(mark)) || 0, Date.now() + ms);
    root.setAttribute(mark, String(until));
    setTimeout(() => {
      if ((Number(root.getAttribute(mark)) || 0) <= Date.now()) root.removeAttribute(mark);
    }, ms + 20);
  };
  hold(1000);
  try {
    switch (p.action) {
      case 'scroll_to':
        target.scrollIntoView({ block: 'center' });
        return done(`scrolled to ${target.tagName.toLowerCase()}`);
      case 'click': {
        if ((target as HTMLButtonElement).disabled) return { error: `command_failed: ${JSON.stringify(p.selector)} is disabled` };
        target.scrollIntoView({ block: 'center' });
        if (target instanceof HTMLElement) target.click();
        else target.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, view: window }));
        return done(`clicked ${target.tagName.toLowerCase()}`);
      }
      case 'type': {
        const text = p.text ?? '';
        if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) {
          if (target.disabled || target.readOnly) return { error: `command_failed: ${JSON.stringify(p.selector)} is not editable` };
          target.focus();
          // The prototype's setter, not the element's own property: frameworks that track the
          // value (React) then see a real change when the input event arrives.
          const proto = target instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
          Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(target, text);
        } else if (target instanceof HTMLElement && target.isContentEditable) {
          target.focus();
          target.textContent = text;
        } else {
          return { error: `command_failed: ${JSON.stringify(p.selector)} is a ${target.tagName.toLowerCase()}, not a text field` };
        }
        target.dispatchEvent(new Event('input', { bubbles: true }));
        target.dispatchEvent(new Event('change', { bubbles: true }));
        return done(`typed ${text.length} characters`, text);
      }
      case 'select': {
        if (!(target instanceof HTMLSelectElement)) return { error: `command_failed: ${JSON.stringify(p.selector)} is a ${target.tagName.toLowerCase()}, not a select` };
        const opt = [...target.options].find((o) => o.value === p.value) ?? [...target.options].find((o) => o.text.trim() === p.value);
        if (!opt) return { error: `command_failed: no option with value or text ${JSON.stringify(p.value)}; options: ${JSON.stringify([...target.options].slice(0, 20).map((o) => o.value))}` };
        target.value = opt.value;
        target.dispatchEvent(new Event('input', { bubbles: true }));
        target.dispatchEvent(new Event('change', { bubbles: true }));
        return done(`selected ${JSON.stringify(opt.value)}`, opt.value);
      }
    }
    return { error: `invalid_params: unknown action ${JSON.stringify(p.action)}` };
  } catch (e) {
    return { error: `command_failed: ${p.action}: ${(e as Error).message}` };
  }
}
